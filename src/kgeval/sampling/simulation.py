"""The proof on the real labels (issue 42 §3): hide every pooled label of the universe (:mod:`.universe`), draw
each design's sample at each budget in every repetition at once (one matrix of inclusion indicators), estimate
every pair and compare with the true Δ the hidden labels give.

Designs: ``optimal`` and ``uniform`` for all pairs at once (items for the linear metrics, questions for RR@k and
Success@k; a sampled question has its lists judged in rank order), and ``pair_optimal``, the optimal design
of one pair alone, for each pair whose true |Δ| is at least ``min_delta`` (the budget a single comparison needs),
under the first prior. Per (metric, prior, design, budget) and pair: the coverage of the interval, the share of
repetitions with a decision of the wrong sign, the share decided, the mean half-width and judgments; the rows
with ``A`` = ``all`` summarise the pairs. The confidence sequence (:mod:`.sequence`) runs on a with-replacement
version of the all-pairs optimal design of the first linear metric with a look after every judgment.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..judgments.universe import Universe
from ..progress import Progress
from . import design as dz
from .estimate import Estimate
from .problem import MC_DRAWS, Problem
from .sequence import draws_range, eb_sequence

#: each metric's random stream, by name rather than by its place in the metrics asked, so that a run of RR@k
#: alone draws what RR@k draws beside P@k (the default order, P@k then RR@k, keeps the streams it had)
STREAMS = ("P@k", "RR@k", "DCG@k", "RBP", "Success@k")

COLUMNS = ["Metric", "prior", "design", "budget", "A", "B", "true_delta", "coverage", "wrong_sign", "decided",
           "mean_half_width", "mean_judgments", "reps"]


def covers(lo: np.ndarray, hi: np.ndarray, true) -> np.ndarray:
    """Whether [lo, hi] holds the true Δ: a budget that reaches every unit is a census, whose interval shrinks to
    Δ̂, which equals Δ up to rounding."""
    tol = 1e-12 + 1e-9 * np.abs(true)
    return (lo - tol <= true) & (true <= hi + tol)


def _rows(metric, prior, kind, n, est: Estimate, true, judged, a, b, systems, reps) -> list[tuple]:
    cover = covers(est.lo, est.hi, true).mean(0)
    dec = est.decided
    wrong = (dec & (np.sign(est.delta) != np.sign(true))).mean(0)
    hw, jm = est.half_width.mean(0), float(judged.mean())
    out = [(metric, prior, kind, n, systems[a[i]], systems[b[i]], float(true[i]), float(cover[i]),
            float(wrong[i]), float(dec.mean(0)[i]), float(hw[i]), jm, reps) for i in range(true.size)]
    if true.size > 1:
        out.append((metric, prior, kind, n, "all", "all", np.nan, float(cover.mean()), float(wrong.mean()),
                    float(dec.mean()), float(hw.mean()), jm, reps))
    return out


def pair_grid(budgets) -> np.ndarray:
    """``budgets`` with the geometric mean of each two neighbours between them: a pair's budget to be decided is
    read off this grid, so a coarse one would overstate it by up to the ratio of two neighbours."""
    b = np.unique(np.asarray(budgets, dtype=float))
    mid = np.round(np.sqrt(b[1:] * b[:-1]))
    return np.unique(np.concatenate([b, mid])).astype(int)


def simulate(u: Universe, priors: dict[str, np.ndarray], metrics=("P@k", "RR@k"), budgets=(100, 200, 500, 1000),
             reps: int = 500, designs=dz.DESIGNS, floor_share: float = 0.1, min_delta: float = 0.02,
             level: float = 0.95, rbp_p: float = 0.8, mc_draws: int = MC_DRAWS, seed: int = 0,
             judging: str = "rank_order") -> pd.DataFrame:
    """The table of :data:`COLUMNS` (see the module docstring)."""
    rows = []
    # minutes per (metric, prior) on FB-Test-S-C with a few hundred repetitions: say how far it is (issue 52)
    progress = Progress(len(metrics) * len(priors), "sampling simulation", unit="metric x prior")
    for metric in metrics:
        pb = Problem(u.hidden_state(), u.truth, metric, rbp_p, mc_draws, seed, judging)  # refuses an unknown one
        mi = STREAMS.index(metric)
        every = np.arange(pb.a.size)
        for pj, (prior, p) in enumerate(priors.items()):
            progress.update(0, metric=metric, prior=prior)
            v, mu = pb.variances(p)
            runs = [(kind, every) for kind in designs]
            if pj == 0:
                runs += [("pair_optimal", np.array([j])) for j in np.flatnonzero(np.abs(pb.true) >= min_delta)]
            for ri, (kind, cols) in enumerate(runs):
                progress.update(0, design=kind)  # a line every 30 s within a long (metric, prior)
                elig, cost, judged = pb.eligible(cols), pb.cost_of(cols, p), pb.judged_of(cols)
                for n in (pair_grid(budgets) if kind == "pair_optimal" else budgets):
                    dsg = dz.design(v[:, cols], elig, n, "uniform" if kind == "uniform" else "optimal", cost,
                                    floor_share)
                    rng = np.random.default_rng([seed, mi, pj, ri, int(n)])
                    sub = np.flatnonzero(dsg.pi > 0)
                    incl = rng.random((reps, sub.size)) < dsg.pi[sub]
                    est = pb.estimate(p, mu, dsg.pi, incl, cols)
                    est.level = level
                    rows += _rows(metric, prior, kind, int(n), est, pb.true[cols], incl @ judged[sub], pb.a[cols],
                                  pb.b[cols], u.systems, reps)
            progress.update(1)
    progress.close()
    return pd.DataFrame(rows, columns=COLUMNS)


def sequence_errors(u: Universe, p: np.ndarray, metric: str = "P@k", looks: int = 2000, reps: int = 200,
                    floor_share: float = 0.1, alpha: float = 0.05, rbp_p: float = 0.8, seed: int = 0
                    ) -> pd.DataFrame:
    """Per pair: the share of repetitions in which the confidence sequence excluded the true Δ at some look
    (the error rate under continuous monitoring) and the share decided by the last look."""
    pb = Problem(u.hidden_state(), u.truth, metric, rbp_p, 0, seed)
    v, _ = pb.variances(p)
    dsg = dz.design(v, pb.eligible(np.arange(pb.a.size)), looks, "optimal", None, floor_share)
    q = dsg.pi / dsg.pi.sum()
    pu = p[pb.U]
    idx = np.random.default_rng([seed, 11]).choice(q.size, size=(reps, looks), p=q)
    rows = []
    for j in range(pb.a.size):
        base = pb.known[j] + pu @ pb.d[:, j]
        y = base + pb.d[idx, j] * (pb.xu[idx] - pu[idx]) / q[idx]
        lo, hi = eb_sequence(y, *draws_range(base, pb.d[:, j], pu, q), alpha)
        t = pb.true[j]
        err = ((lo > t) | (hi < t)).any(1).mean()
        dec = ((lo[:, -1] > 0) | (hi[:, -1] < 0)).mean()
        rows.append((metric, "confidence_sequence", looks, u.systems[pb.a[j]], u.systems[pb.b[j]], float(t),
                     float(err), float(dec), float((hi[:, -1] - lo[:, -1]).mean() / 2), reps))
    return pd.DataFrame(rows, columns=["Metric", "design", "looks", "A", "B", "true_delta", "error_any_look",
                                       "decided_last_look", "mean_half_width_last_look", "reps"])
