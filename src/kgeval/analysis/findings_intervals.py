"""The findings' claims decided on intervals: each claim's rule as threshold checks on its statistics with their
95 % intervals (:mod:`kgeval.analysis.verdicts`). The τ intervals are those of ``claim_taus.csv`` (the analysis
step's): intervals of the τ between the systems' population means (``resampling.order_interval``, whose
coverage ``benchmarks/verdict_coverage.py`` measures; the bootstrap intervals of the figures do not cover that τ).
A comparison of two τ uses the conservative difference interval (``verdicts.difference``). A claim without
checks, or a run without ``claim_taus.csv``, is decided on its point values, and the table says so."""

from __future__ import annotations

import pandas as pd

from .claims import NO, PARTLY, STRONG_TAU, TABLE4_LIMIT, YES, Claim, Missing, Outputs
from .verdicts import Check, difference, interval_text, interval_verdict, threshold_text, undecided_text

SHORT = {"micro_mr": "MR", "micro_mrr": "MRR", "micro_hits@1": "H@1", "micro_hits@3": "H@3", "micro_hits@10": "H@10"}


def _interval(table: pd.DataFrame | None, statistic: str, metric: str, point: float) -> tuple[float, float, float]:
    """(point, lo, hi) of a claim's τ from ``claim_taus.csv`` (NaN interval: this run has no such row)."""
    if table is not None and not table.empty:
        row = table[(table["Statistic"] == statistic) & (table["Metric"] == metric)]
        if not row.empty:
            return point, float(row["tau_low"].iloc[0]), float(row["tau_high"].iloc[0])
    return point, float("nan"), float("nan")


def _c1(o: Outputs, v: dict[str, float]) -> list[Check]:
    p, lo, hi = _interval(o.claim_taus, "original-sample", "micro_mrr", v["tau"])
    return [Check("τ(O, S)", p, lo, hi, ">=", STRONG_TAU), Check("τ(O, S)", p, lo, hi, ">=", 0.3)]


def _d1(b: list[bool]) -> str:
    return YES if b[0] else PARTLY if b[1] else NO


def _depth_interval(o: Outputs, figure: pd.DataFrame, metric: str, depth: int) -> tuple[float, float, float]:
    """(τ, lo, hi) of τ(S, S-C(depth)) of ``metric``: the point from Figure 4's or 5's published rows, the
    interval from ``claim_taus.csv`` (NaN where this run has none)."""
    sub = figure[(figure["Flavour"] == "published") & (figure["Metric"] == metric) & (figure["Depth"] == depth)]
    if sub.empty:
        raise Missing(f"depth {depth} τ of {metric}")
    return _interval(o.claim_taus, f"depth {depth}", metric, float(sub["tau"].iloc[0]))


def _c3(o: Outputs, v: dict[str, float]) -> list[Check]:
    f4 = o.need("figure4")
    t2, tmax = _depth_interval(o, f4, "micro_mrr", 2), _depth_interval(o, f4, "micro_mrr", int(v["depth"]))
    return [difference("τ(deepest) − τ(2)", tmax, t2, "<"), Check("τ(deepest)", *tmax, "<=", 0.0)]


def _d3(b: list[bool]) -> str:
    return (YES if b[1] else PARTLY) if b[0] else NO


def _c4(o: Outputs, v: dict[str, float]) -> list[Check]:
    f5, d = o.need("figure5"), int(v["depth"])
    return [difference(f"macro − micro {label} τ", _depth_interval(o, f5, f"macro_{m}", d),
                       _depth_interval(o, f5, f"micro_{m}", d), ">")
            for label, m in (("MRR", "mrr"), ("Hits@10", "hits@10"))]


def _c5(o: Outputs, v: dict[str, float]) -> list[Check]:
    return [Check(f"{SHORT.get(m, m)} τ", *_interval(o.claim_taus, "table4 Sparse", m, x), "<", TABLE4_LIMIT)
            for m, x in v.items()]


COLUMNS = ["claim", "paper", "ours", "holds", "point", "interval", "threshold", "undecided", "rule"]
NO_INTERVAL = "none: a correlation across models, checkpoints or datasets (not resampled over questions)"


def interval_verdict_of(c: Claim, outputs: Outputs, values: dict[str, float], holds: str) -> dict[str, str]:
    """The verdict on the intervals of the claim's checks (``holds``), each check's interval (``interval``) and
    threshold (``threshold``), and the open checks that leave it undecided (``undecided``); for a claim without
    checks ``holds`` unchanged and why it has no interval."""
    if c.checks is None or c.decide is None:
        why = c.no_interval or ("none: wall-clock times" if c.measured_time else NO_INTERVAL)
        return {"holds": holds, "interval": why, "threshold": "", "undecided": ""}
    try:
        checks = c.checks(outputs, values)
    except Missing as exc:  # no interval table in this run: the point values decide
        return {"holds": holds, "interval": f"none (no {exc} in this run)", "threshold": "", "undecided": ""}
    verdict, open_checks = interval_verdict(checks, c.decide)
    return {"holds": verdict, "interval": interval_text(checks), "threshold": threshold_text(checks),
            "undecided": undecided_text(open_checks)}
