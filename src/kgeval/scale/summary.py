"""The scale stage's run summary: one markdown page per graph from its tables, so that a run ends on what it
found (which system is best, the estimates beside the exact values, what sampled negatives do) instead of a
count of steps and eight files to open."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import atomic_open, read_json


def _num(x: float, digits: int = 4) -> str:
    return "—" if pd.isna(x) else f"{x:.{digits}f}"


def summary_text(shape: str, exact: pd.DataFrame, estimates: pd.DataFrame, negatives: pd.DataFrame,
                 tau: dict, planted: bool) -> str:
    """The page: per system its exact MRR, the estimate with its 95 % interval, MRR under full ranking and
    against sampled negatives; then what the sampled protocol keeps (the order, τ) and loses (the gaps)."""
    ex = exact[exact["metric"] == "mrr"].set_index("system")
    est = estimates[estimates["metric"] == "mrr"].set_index("system")
    neg = negatives.set_index("system")
    lines = [f"# Scale run: {shape}", ""]
    if planted:
        lines += [f"Planted systems 0-{len(ex) - 1}: DistMult over the graph's planted vectors plus noise "
                  "0.2 × (number + 1) of their scale; **system 0 is the best**, and the exact order is the "
                  "planted one.", ""]
    note = str(ex["note"].iloc[0]) if "note" in ex and len(ex) else ""
    if note and not note.startswith("every"):
        lines += [f"Exact MRR {note}.", ""]
    n = int(est["n"].iloc[0]) if len(est) else 0
    lines += ["| system | exact MRR | estimated MRR | 95 % interval | MRR, full ranking | MRR, sampled negatives |",
              "|---|---|---|---|---|---|"]
    for s in ex.index:
        e = est.loc[s]
        noise = f" (noise {(int(s) + 1) * 0.2:g})" if planted else ""
        lines.append(f"| {s}{noise} | {_num(ex.loc[s, 'value'])} | {_num(e['estimate'])} | "
                     f"[{_num(e['low'])}, {_num(e['high'])}] | {_num(neg.loc[s, 'mrr_full'])} | "
                     f"{_num(neg.loc[s, 'mrr_sampled'])} |")
    full, sampled = neg["mrr_full"].to_numpy(float), neg["mrr_sampled"].to_numpy(float)
    ratio = [float(v.max() / v.min()) if v.min() > 0 else np.inf for v in (full, sampled)]
    lo, hi = tau["tau_interval_95"] if tau.get("tau_interval_95") is not None else (np.nan, np.nan)
    lines += ["", f"Estimates from {n:,} sampled answers of {int(est['population'].iloc[0]):,}." if len(est) else "",
              "", f"Sampled negatives ({negatives['negatives'].iloc[0]}): Kendall's τ = {tau['tau']:.2f} "
              f"[{_num(lo, 2)}, {_num(hi, 2)}] between the two protocols' orders, but the best/worst MRR ratio "
              f"{'shrinks' if ratio[1] < ratio[0] else 'goes'} from {ratio[0]:.1f} (full ranking) to {ratio[1]:.1f} "
              "(sampled): the protocol keeps the order and hides how far apart the systems are.", ""]
    return "\n".join(lines)


def summary_step(shape: str, exact: str | Path, estimates: str | Path, negatives: str | Path, tau: str | Path,
                 out: str | Path, planted: bool = True) -> None:
    text = summary_text(shape, pd.read_csv(exact), pd.read_csv(estimates), pd.read_csv(negatives), read_json(tau),
                        planted)
    with atomic_open(out) as fh:
        fh.write(text)
