"""The figures of the study, drawn from the analysis tables (PNG and PDF, readable in print).

Systems appear under their codes A, B, … (A = best on the reference test set, as in the paper) with a key
printed under the plot; every axis is labelled; τ curves carry their bootstrap 95 % intervals where known.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..io import atomic_path  # noqa: E402
from ..metrics.registry import label as metric_label  # noqa: E402

plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
                     "xtick.labelsize": 8, "ytick.labelsize": 8, "figure.dpi": 150, "savefig.bbox": "tight",
                     "pdf.fonttype": 42, "svg.hashsalt": "kgeval"})

def save(fig, png: str | Path, pdf: str | Path) -> None:
    for path in (png, pdf):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=Path(path).suffix[1:], metadata={"CreationDate": None}
                        if str(path).endswith(".pdf") else {"Software": None})
    plt.close(fig)


def _key_text(codes: dict[str, str]) -> str:
    pairs = sorted(codes.items(), key=lambda kv: kv[1])
    return "Key: " + ", ".join(f"{c} = {s}" for s, c in pairs)


def figure2(dist: pd.DataFrame, kl: pd.DataFrame, png, pdf) -> None:
    names = [c for c in dist.columns if c not in ("relation",)]
    fig, axes = plt.subplots(len(names), 1, figsize=(7.0, 1.6 * len(names)), sharex=True, layout="constrained")
    axes = np.atleast_1d(axes)
    x = np.arange(len(dist))
    for ax, name in zip(axes, names):
        ax.bar(x, dist[name], color="#4477aa")
        ax.set_ylabel("share")
        ax.set_title(f"Relation distribution of {name}", loc="left")
    axes[-1].set_xticks(x, [f"r{i + 1}" if r != "other" else "other" for i, r in enumerate(dist["relation"])],
                        rotation=90)
    axes[-1].set_xlabel(f"relation class (the {len(dist) - 1} most frequent relations of the reference set, rest merged)")
    text = "; ".join(f"KL({a}‖{b}) = {v:.4f}" for a, b, v in zip(kl["P"], kl["Q"], kl["KL"]))
    if "classes" in kl and len(kl):
        text += f"\n(over all {int(kl['classes'].iloc[0])} relations, counts + {kl['pseudocount'].iloc[0]:g})"
    fig.text(0.01, -0.02, text, ha="left", va="top")
    save(fig, png, pdf)


def figure3(df: pd.DataFrame, metric: str, test_sets: list[str], png, pdf) -> None:
    codes = dict(zip(df["System"], df["Code"]))
    order = sorted(set(df["Code"]))
    fig, ax = plt.subplots(figsize=(7.0, 2.8))
    width = 0.8 / len(test_sets)
    for k, name in enumerate(test_sets):
        sub = df[df["TestSet"] == name].set_index("Code").reindex(order)
        ax.bar(np.arange(len(order)) + (k - (len(test_sets) - 1) / 2) * width, sub[metric], width, label=name)
    ax.set_xticks(np.arange(len(order)), order)
    ax.set_xlabel(f"system (ordered by {metric_label(metric)} on {test_sets[0]})")
    ax.set_ylabel(metric_label(metric))
    ax.legend(ncols=len(test_sets), loc="upper right")
    fig.text(0.01, -0.04, _key_text(codes), ha="left", va="top", wrap=True)
    save(fig, png, pdf)


def depth_taus(df: pd.DataFrame, metrics: list[str], png, pdf, title: str) -> None:
    """One panel per flavour of judgments: τ with depth 0 by depth for ``metrics`` (bootstrap error bars). Rows of
    another ``Kind`` (Figure 5's bounds overlay) add a band for "every labelling" and a point with its 95 %
    interval for "expected under prior"."""
    kinds = df["Kind"] if "Kind" in df else pd.Series("measured", index=df.index)
    extra = df[kinds != "measured"]
    df = df[kinds == "measured"]
    flavours = list(dict.fromkeys(df["Flavour"]))
    fig, axes = plt.subplots(1, len(flavours), figsize=(3.6 * len(flavours), 2.8), sharey=True, squeeze=False)
    for ax, flavour in zip(axes[0], flavours):
        _overlay(ax, extra[extra["Flavour"] == flavour], metrics)
        sub = df[df["Flavour"] == flavour]
        for m in metrics:
            s = sub[sub["Metric"] == m].sort_values("Depth")
            if s.empty:
                continue
            yerr = None
            if s["tau_low"].notna().any():
                yerr = np.vstack([s["tau"] - s["tau_low"], s["tau_high"] - s["tau"]]).clip(min=0)
            ax.errorbar(s["Depth"], s["tau"], yerr=yerr, marker="o", ms=3, capsize=2, label=metric_label(m))
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_xlabel("pooling depth d")
        ax.set_title(f"{flavour} judgments", loc="left")
        ax.set_ylim(-1.05, 1.05)
    axes[0][0].set_ylabel("Kendall's τ with depth 0")
    axes[0][-1].legend(loc="lower left", fontsize=6 if len(extra) else None)
    fig.suptitle(title, x=0.01, y=1.04, ha="left")
    save(fig, png, pdf)


def _overlay(ax, rows: pd.DataFrame, metrics: list[str]) -> None:
    """Figure 5's bounds rows: the τ interval of every labelling as a band, the prior's expected τ as a point, in
    the colour of the measured curve they belong beside."""
    for i, name in enumerate(dict.fromkeys(rows["Metric"])):
        s = rows[rows["Metric"] == name].sort_values("Depth")
        band, prior = s[s["Kind"] == "every labelling"], s[s["Kind"] == "expected under prior"]
        curve = s["Curve"].iloc[0] if "Curve" in s else None
        c = f"C{metrics.index(curve) if curve in metrics else len(metrics) + i}"
        if len(band):
            ax.fill_between(band["Depth"], band["tau_low"], band["tau_high"], color=c, alpha=0.15, lw=0,
                            label=f"{name}: every labelling")
        if len(prior):
            yerr = np.vstack([prior["tau"] - prior["tau_low"], prior["tau_high"] - prior["tau"]]).clip(min=0)
            ax.errorbar(prior["Depth"], prior["tau"], yerr=yerr, marker="D", ms=4, capsize=3, ls="none", color=c,
                        label=f"{name}: expected under prior")


def figure6(df: pd.DataFrame, metric: str, system: str, png, pdf) -> None:
    names = list(dict.fromkeys(df["TestSet"]))
    fig, ax = plt.subplots(figsize=(4.5, 2.8))
    ax.boxplot([df[df["TestSet"] == n][metric].to_numpy() for n in names], tick_labels=names)
    ax.set_ylabel(f"per-relation {metric_label(metric)}")
    ax.set_title(f"{system}: {metric_label(metric)} per relation", loc="left")
    save(fig, png, pdf)


def figure7(summary: pd.DataFrame, png, pdf) -> None:
    names = list(dict.fromkeys(summary["TestSet"]))
    fig, axes = plt.subplots(1, len(names), figsize=(3.4 * len(names), 2.9), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], names):
        sub = summary[summary["TestSet"] == name]
        for m in dict.fromkeys(sub["Metric"]):
            s = sub[sub["Metric"] == m].sort_values("Size")
            ax.plot(100 * s["Size"], s["mean"], marker=".", label=metric_label(m))
            ax.fill_between(100 * s["Size"], s["mean"] - s["std"], s["mean"] + s["std"], alpha=0.15)
        ax.set_xlabel("subset size (% of test triples)")
        ax.set_title(name, loc="left")
    axes[0][0].set_ylabel("mean Kendall's τ with the full set (± 1 sd)")
    axes[0][-1].legend(loc="lower right")
    save(fig, png, pdf)


def figure8(pvalues: pd.DataFrame, png, pdf, alpha: float = 0.05, tests: Iterable[str] = ("t-test", "tukey-hsd")
            ) -> None:
    names = list(dict.fromkeys(pvalues["TestSet"]))
    tests = [t for t in tests if t in set(pvalues["Test"])]
    # constrained layout leaves room for each row's x-axis label above the next row's panel titles
    fig, axes = plt.subplots(len(tests), len(names), figsize=(3.4 * len(names), 2.6 * len(tests)), sharey=True,
                             squeeze=False, layout="constrained")
    for r, test in enumerate(tests):
        for c, name in enumerate(names):
            ax = axes[r][c]
            sub = pvalues[(pvalues["TestSet"] == name) & (pvalues["Test"] == test)]
            for m in dict.fromkeys(sub["Metric"]):
                p = np.sort(sub[sub["Metric"] == m]["p"].to_numpy())[::-1]
                ax.plot(np.arange(1, len(p) + 1), p, label=metric_label(m))
            ax.axhline(alpha, color="grey", ls="--", lw=0.8)
            ax.set_title(f"{name}, {test}", loc="left")
            ax.set_xlabel("system pair (sorted by p-value)")
            if c == 0:
                ax.set_ylabel("p-value")
    axes[0][-1].legend(loc="upper right")
    save(fig, png, pdf)


def heatmap(matrix: pd.DataFrame, png, pdf, title: str, xlabel: str, ylabel: str, vmin=-1.0, vmax=1.0,
            marks: Iterable[tuple[float, float, str]] = (), note: str | None = None) -> None:
    """τ as colour (matplotlib's RdBu: −1 red, 0 white, +1 blue); ``marks`` (row value, column value, label)
    outline the cells where named metrics sit, ``note`` is printed under the plot."""
    fig, ax = plt.subplots(figsize=(0.45 * matrix.shape[1] + 2, 0.35 * matrix.shape[0] + 1.5))
    im = ax.imshow(matrix.to_numpy(dtype=float), vmin=vmin, vmax=vmax, cmap="RdBu", aspect="auto")
    rows, cols = [float(i) for i in matrix.index], [float(c) for c in matrix.columns]
    for r, c, text in marks:
        if float(r) in rows and float(c) in cols:
            i, j = rows.index(float(r)), cols.index(float(c))
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", lw=1.5))
            ax.text(j, i, text, ha="center", va="center", fontsize=6, color="black")
    if note:
        fig.text(0.01, -0.02, note, ha="left", va="top", fontsize=7)
    ax.set_xticks(range(matrix.shape[1]), [str(c) for c in matrix.columns], rotation=90)
    ax.set_yticks(range(matrix.shape[0]), [str(i) for i in matrix.index])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left")
    fig.colorbar(im, ax=ax, label="Kendall's τ")
    save(fig, png, pdf)
