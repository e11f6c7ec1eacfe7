"""Annotator errors and what they do to the final estimates (``benchmarks/campaign_errors.py``, ``kgeval campaign
simulate --errors``).

The coverage guarantee of a sample's interval assumes the final labels are right. An annotator here errs on
each item independently with a fixed rate (``0.05`` flips 5 % of the answers, either way), or always answers N
(``"N"``: one who never finds evidence). Single annotation takes the one annotator's answer as final; double
annotation is the campaign's protocol (:mod:`kgeval.campaign.protocol`): two annotators, final on agreement,
else the adjudicator's answer. With three people erring independently at e, a double-annotated label is wrong
with probability e² + 2e(1 − e)·e = e²(3 − 2e) (both wrong, or one wrong and the adjudicator too) and costs
2 + 2e(1 − e) judgments; a single one is wrong with probability e and costs 1.

:func:`error_table` runs that on a universe whose pooled labels are hidden (:mod:`kgeval.sampling.simulation`'s
proof): each repetition draws the plan's Poisson sample, the annotators' answers on its items and the final
labels, and estimates every pair; per scheme and budget, the coverage of the true Δ and the share of decisions of
the wrong sign. Vectorised over repetitions (one matrix of answers), no loop over items.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..sampling import design as dz
from ..sampling.estimate import difference
from ..sampling.problem import Problem

ALWAYS_N = "N"
COLUMNS = ["scheme", "annotators", "adjudicator", "budget", "reps", "label_error", "expected_label_error",
           "judgments_per_item", "coverage", "wrong_sign", "decided", "mean_half_width", "pairs"]


def answers(truth: np.ndarray, who: float | str, rng: np.random.Generator) -> np.ndarray:
    """One annotator's answers (0/1) to items whose true labels are ``truth`` (any shape)."""
    if who == ALWAYS_N:
        return np.zeros_like(truth)
    return truth ^ (rng.random(truth.shape) < float(who)).astype(truth.dtype)


def final_labels(truth: np.ndarray, annotators: tuple, adjudicator: float | str | None,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The final labels and the judgments each item took: one annotator's answer (single), or the campaign's
    protocol for two (the answer on agreement, else the adjudicator's)."""
    truth = np.asarray(truth, np.int8)
    a = answers(truth, annotators[0], rng)
    if len(annotators) == 1:
        return a, np.ones(truth.shape, np.int8)
    b = answers(truth, annotators[1], rng)
    differ = a != b
    adj = answers(truth, adjudicator, rng)
    return np.where(differ, adj, a), (2 + differ).astype(np.int8)


def expected_error(annotators: tuple, adjudicator: float | str | None, prevalence: float) -> float:
    """The chance that a final label is wrong, for items relevant with probability ``prevalence`` (an
    always-N annotator is wrong on every relevant item and right on every other)."""
    def wrong(who, y):  # P(answer ≠ truth | truth y)
        return float(y) if who == ALWAYS_N else float(who)

    out = 0.0
    for y, share in ((1, prevalence), (0, 1 - prevalence)):
        ea = wrong(annotators[0], y)
        if len(annotators) == 1:
            out += share * ea
            continue
        eb, ej = wrong(annotators[1], y), wrong(adjudicator, y)
        out += share * (ea * eb + (ea * (1 - eb) + eb * (1 - ea)) * ej)
    return out


def error_table(pb: Problem, p: np.ndarray, schemes: dict[str, tuple], budgets=(200, 500, 1000), reps: int = 200,
                floor_share: float = 0.1, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per scheme (name → (annotators, adjudicator)) and budget: coverage and wrong-sign rate over the pairs of
    ``pb`` (a linear metric on the hidden labels), the optimal design for all pairs under the prior ``p``."""
    if not pb.linear:
        raise ValueError("annotator errors are simulated on a linear metric (P, DCG, RBP)")
    cols = np.arange(pb.a.size)
    v, _ = pb.variances(p)
    pu = p[pb.U]
    rows = []
    for n in budgets:
        dsg = dz.design(v, pb.eligible(cols), n, "optimal", None, floor_share)
        sub = np.flatnonzero(dsg.pi > 0)
        incl = np.random.default_rng([seed, int(n)]).random((reps, sub.size)) < dsg.pi[sub]
        base = pb.known + pu @ pb.d - pu[sub] @ pb.d[sub]
        truth = np.broadcast_to(pb.xu[sub].astype(np.int8), incl.shape)
        for si, (name, (annotators, adjudicator)) in enumerate(schemes.items()):
            # the same sample for every scheme at a budget: the schemes differ only by their answers
            x, cost = final_labels(truth, annotators, adjudicator, np.random.default_rng([seed, int(n), si, 7]))
            est = difference(base, pb.d[sub], pu[sub], x, dsg.pi[sub], incl, level)
            tol = 1e-12 + 1e-9 * np.abs(pb.true)
            cover = (est.lo - tol <= pb.true) & (pb.true <= est.hi + tol)
            wrong = est.decided & (np.sign(est.delta) != np.sign(pb.true))
            rows.append((name, "+".join(map(str, annotators)), "" if adjudicator is None else str(adjudicator),
                         int(n), reps, float((x != truth)[incl].mean()),
                         expected_error(annotators, adjudicator, float(truth[incl].mean())),
                         float(cost[incl].mean()), float(cover.mean()), float(wrong.mean()),
                         float(est.decided.mean()), float(np.where(np.isfinite(est.half_width), est.half_width,
                                                                   np.nan).mean()), int(cols.size)))
    return pd.DataFrame(rows, columns=COLUMNS)


def default_schemes() -> dict[str, tuple]:
    """The issue's annotators: erring at 5, 10 and 20 %, and one who always answers N; each alone, and doubled
    with an adjudicator who errs as often (the always-N annotator paired with a 5 % one, a 5 % adjudicator)."""
    out: dict[str, tuple] = {"perfect": ((0.0,), None)}
    for e in (0.05, 0.1, 0.2):
        out[f"single {e:.0%}"] = ((e,), None)
        out[f"double {e:.0%}"] = ((e, e), e)
    out["single always-N"] = ((ALWAYS_N,), None)
    out["double always-N + 5%"] = ((ALWAYS_N, 0.05), 0.05)
    return out
