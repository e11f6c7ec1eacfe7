"""The τ figure of the bounds stage (the paper's Figures 4 and 5 with the labels' freedom drawn in)."""

from __future__ import annotations

import pandas as pd

from ..analysis.figures import plt, save


def tau_band_figure(tau: pd.DataFrame, png: str, pdf: str, title: str) -> None:
    """One panel per flavour of judgments (rows) and metric (columns): today's τ-a (unjudged = not relevant) as a
    line and the interval every labelling of the unjudged pairs allows as a band (dotted: the outer bound where
    the 0–1 program tightened it)."""
    flavours = list(dict.fromkeys(tau["Flavour"])) if len(tau) else ["published"]
    names = list(dict.fromkeys(tau["Metric"])) if len(tau) else ["none"]
    fig, axes = plt.subplots(len(flavours), len(names), figsize=(2.2 * len(names), 2.1 * len(flavours)),
                             sharex=True, sharey=True, squeeze=False)
    for r, flavour in enumerate(flavours):
        for c, name in enumerate(names):
            ax = axes[r][c]
            s = tau[(tau["Flavour"] == flavour) & (tau["Metric"] == name)].sort_values("Depth") if len(tau) else tau
            if len(s):
                ax.fill_between(s["Depth"], s["tau_lo"], s["tau_hi"], color="C0", alpha=0.2, lw=0,
                                label="every labelling")
                tighter = (s["tau_lo"] > s["tau_outer_lo"]) | (s["tau_hi"] < s["tau_outer_hi"])
                if tighter.any():
                    ax.plot(s["Depth"], s["tau_outer_lo"], ls=":", lw=0.8, color="C0", label="outer bound")
                    ax.plot(s["Depth"], s["tau_outer_hi"], ls=":", lw=0.8, color="C0")
                ax.plot(s["Depth"], s["tau_a_today"], marker="o", ms=2.5, color="C1", label="today")
            ax.axhline(0, color="grey", lw=0.5)
            ax.set_ylim(-1.05, 1.05)
            ax.xaxis.get_major_locator().set_params(integer=True)
            if r == 0:
                ax.set_title(name, fontsize=8)
            if r == len(flavours) - 1:
                ax.set_xlabel("pooling depth d")
            if c == 0:
                ax.set_ylabel(f"τ-a with depth 0\n({flavour})")
    axes[0][0].legend(loc="lower left", fontsize=6)
    fig.suptitle(title, x=0.01, y=1.02, ha="left")
    save(fig, png, pdf)


def simulation_figure(table: pd.DataFrame, png: str, pdf: str, title: str) -> None:
    """One panel per metric: the system pairs decided against the judgments made, one line per strategy (the
    seeded random orders thin and grey, labelled once)."""
    names = list(dict.fromkeys(table["Metric"])) if len(table) else ["none"]
    fig, axes = plt.subplots(1, len(names), figsize=(3.4 * len(names), 2.8), sharey=True, squeeze=False)
    for c, name in enumerate(names):
        ax = axes[0][c]
        sub = table[table["Metric"] == name] if len(table) else table
        strategies = list(dict.fromkeys(sub["strategy"])) if len(sub) else []
        colour, random_labelled = 0, False
        for strategy in strategies:
            s = sub[sub["strategy"] == strategy]
            if strategy.startswith("random_"):
                ax.plot(s["judgments"], s["decided"], color="grey", lw=0.6, alpha=0.7,
                        label=None if random_labelled else "random (seeds)")
                random_labelled = True
            else:
                ax.plot(s["judgments"], s["decided"], color=f"C{colour}", lw=1.2, label=strategy)
                colour += 1
        ax.set_title(name, fontsize=8)
        ax.set_xlabel("published labels revealed")
        if c == 0:
            ax.set_ylabel("system pairs decided")
    axes[0][0].legend(loc="upper left", fontsize=6)
    fig.suptitle(title, x=0.01, y=1.1, ha="left")
    save(fig, png, pdf)
