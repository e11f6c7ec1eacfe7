"""``sampling_coverage.png``: per metric, the coverage of the 95 % interval and the share of pairs decided against
the budget (one line per design and prior), and each pair's budget to be decided in 80 % of the repetitions
against its true |Δ| (its own optimal design)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.figures import plt, save


def pair_budgets(table: pd.DataFrame, share: float = 0.8) -> pd.DataFrame:
    """Per metric and pair of the ``pair_optimal`` rows: at the smallest budget decided in ≥ ``share`` of the
    repetitions, the judgments the sample made on average (``budget_80``; NaN if no budget did) and that budget
    (``design_budget``, the judgments the design expected under its prior), and the pair's true Δ."""
    sub = table[table["design"] == "pair_optimal"].sort_values("budget", kind="stable")
    ok = sub[sub["decided"] >= share].groupby(["Metric", "A", "B"], as_index=False).first()
    ok = ok.rename(columns={"mean_judgments": "budget_80", "budget": "design_budget"})
    base = sub.groupby(["Metric", "A", "B"], as_index=False)["true_delta"].first()
    return base.merge(ok[["Metric", "A", "B", "budget_80", "design_budget"]], on=["Metric", "A", "B"], how="left")


def coverage_figure(table: pd.DataFrame, png: str, pdf: str, title: str, versus: pd.DataFrame | None = None) -> None:
    """``versus`` (:func:`.baselines.targets`): MTC's hard-stop and depth order's counts per pair in the third
    row, beside the sample's budgets."""
    names = list(dict.fromkeys(table["Metric"])) or ["none"]
    fig, axes = plt.subplots(3, len(names), figsize=(3.6 * len(names), 7.5), squeeze=False)
    overall = table[(table["A"] == "all") & (table["design"] != "pair_optimal")]
    budgets = pair_budgets(table)
    for c, name in enumerate(names):
        rows = overall[overall["Metric"] == name]
        for i, ((kind, prior), g) in enumerate(rows.groupby(["design", "prior"], sort=False)):
            style = dict(color=f"C{i}", lw=1.2, marker="o", ms=3, label=f"{kind}, {prior} prior")
            axes[0][c].plot(g["budget"], g["coverage"], **style)
            axes[1][c].plot(g["budget"], g["decided"], **style)
        axes[0][c].axhline(0.95, color="grey", lw=0.6, ls="--")
        axes[0][c].set_title(name, fontsize=8)
        b = budgets[budgets["Metric"] == name]
        axes[2][c].scatter(np.abs(b["true_delta"]), b["budget_80"], s=8, label="sample, 80 % decided")
        if versus is not None and len(versus):
            v = versus[versus["Metric"] == name]
            axes[2][c].scatter(np.abs(v["true_delta"]), v["mtc_hard"], s=8, marker="x", color="C3",
                               label="MTC, hard stop")
            axes[2][c].scatter(np.abs(v["true_delta"]), v["depth_order"], s=8, marker="+", color="C2",
                               label="depth order")
            axes[2][c].legend(loc="upper right", fontsize=5)
        for r in range(3):
            axes[r][c].set_xscale("log")
        axes[2][c].set_yscale("log")
        axes[2][c].set_xscale("linear")
        axes[0][c].set_xlabel("budget (judgments)")
        axes[1][c].set_xlabel("budget (judgments)")
        axes[2][c].set_xlabel("true |Δ| of the pair")
    axes[0][0].set_ylabel("coverage of the 95 % interval")
    axes[1][0].set_ylabel("share of pairs decided")
    axes[2][0].set_ylabel("judgments to decide the pair")
    axes[0][0].legend(loc="lower right", fontsize=5)
    fig.suptitle(title, x=0.01, y=1.01, ha="left")
    fig.tight_layout()
    save(fig, png, pdf)
