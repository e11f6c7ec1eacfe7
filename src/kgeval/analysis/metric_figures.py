"""Figures of Hoyt et al.'s case study and of the unified metric framework's properties (PNG and PDF)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .figures import plt, save

_FAMILIES = ["original", "adjusted index", "z-score"]
_BASES = ["MR", "MRR", "Hits@10"]
_LABELS = {"mr": "MR", "amri": "AMRI", "zmr": "z-MR", "mrr": "MRR", "amrr": "AMRR", "zmrr": "z-MRR",
           "hits@10": "Hits@10", "ah@10": "AH@10", "zh@10": "z-H@10"}


def case_study(table: pd.DataFrame, png, pdf) -> None:
    """Figure 1 of Hoyt et al.: a row per family (original, adjusted index, z-score), a column per base metric,
    datasets on the x-axis in increasing number of entities, one line per model."""
    sizes = table.drop_duplicates("dataset").sort_values("entities")
    order = list(sizes["dataset"])
    x = np.arange(len(order))
    fig, axes = plt.subplots(3, 3, figsize=(9.0, 7.0), layout="constrained", sharex=True)
    for i, fam in enumerate(_FAMILIES):
        for j, base in enumerate(_BASES):
            ax = axes[i, j]
            sub = table[(table["family"] == fam) & (table["base"] == base)]
            for model, g in sub.groupby("model", sort=True):
                v = g.set_index("dataset")["value"].reindex(order)
                ax.plot(x, v.to_numpy(float), marker="o", label=model)
            key = sub["metric"].iloc[0] if len(sub) else ""
            ax.set_title(f"{_LABELS.get(key, key)}", loc="left")
            if fam == "z-score":
                ax.set_yscale("symlog", linthresh=10)
            if i == 2:
                ax.set_xticks(x, [f"{d}\n|E|={n:,}" for d, n in zip(order, sizes["entities"])], rotation=0)
    axes[0, 0].invert_yaxis()  # MR: lower is better; drawn so that up is better in every panel
    axes[0, 0].set_ylabel("original")
    axes[1, 0].set_ylabel("adjusted index")
    axes[2, 0].set_ylabel("z-score (symlog)")
    handles, labels = axes[0, 1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 6))
    save(fig, png, pdf)


def fotr(table: pd.DataFrame, png, pdf) -> None:
    """FOTR_k of f_α against α, one line per (k, N)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
    for (k, n), g in table.groupby(["k", "candidates"], sort=True):
        g = g[np.isfinite(g["alpha"])]
        ax.plot(g["alpha"], g["fotr"], marker=".", label=f"k = {k:g}, N = {n:,}")
    ax.set_xlabel("α of the rank transform f_α(x) = x^α")
    ax.set_ylabel("FOTR_k = (f(k) − f(N)) / (f(1) − f(N))")
    ax.set_title("Focus-on-top rate (smaller: more focus on the top ranks)", loc="left")
    for a, name in ((-1.0, "MRR"), (1.0, "MR")):
        ax.axvline(a, color="0.6", lw=0.8, ls="--")
        ax.text(a, 0.5, f" {name}", ha="left", va="center", rotation=90, transform=ax.get_xaxis_transform())
    ax.legend(loc="upper left")
    save(fig, png, pdf)


def size_invariance(table: pd.DataFrame, png, pdf) -> None:
    """E[f_α] under uniformly random ranks against the number of candidates N, one line per α."""
    fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
    for a, g in table.groupby("alpha", sort=True):
        ax.plot(g["candidates"], g["expectation"], label=("α = −∞ (Hits@1)" if np.isneginf(a) else f"α = {a:g}"))
    ax.set_xscale("log")
    ax.set_xlabel("number of candidates N")
    ax.set_ylabel("E[f_α(r)], r ~ U{1…N}")
    ax.set_title("Size invariance: only α = 1 keeps E[f] fixed (1/2)", loc="left")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save(fig, png, pdf)


def long_tail(table: pd.DataFrame, png, pdf) -> None:
    """Mean class MRR per district of equal class count (district 1: most frequent classes), per model."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8), layout="constrained")
    for i, (model, g) in enumerate(table.groupby("model", sort=False, observed=True)):
        # the colour cycle has 10 colours: later models dashed, with another marker
        ax.plot(g["district"], g["mean_mrr"], marker="o" if i < 10 else "s", ls="-" if i < 10 else "--",
                label=str(model))
    d = table.drop_duplicates("district").sort_values("district")
    ax.set_xticks(d["district"], [f"{i}\n{lo}–{hi}" for i, lo, hi in
                                  zip(d["district"], d["min_frequency"], d["max_frequency"])])
    ax.set_xlabel("district (range of training triples of its classes)")
    ax.set_ylabel("mean MRR of the district's classes")
    ax.set_title("Long tail: MRR by answer-entity frequency district", loc="left")
    ax.legend(ncol=2, fontsize=7)
    save(fig, png, pdf)
