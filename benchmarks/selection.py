"""The relevance prior's fit and the MTC selection (issue 30 §5, target ≤ 60 s on the 2-core machine) and the
simulation on real labels (target ≤ 10 min) on a synthetic instance of FB-Test-S-C's size: 13 systems, 2,883
questions, top 10, ~21k unknown items, ~22k published judgments to fit the prior on.

    python benchmarks/selection.py [--simulation] [--metric P@k] [--batch 100] [--draws 64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kgeval.bounds.prior import cross_validate, fit_prior, online_prior, triple_features
from kgeval.bounds.selection import Candidates, judgments_to_decide, make_engine, plan, tau_distribution
from kgeval.bounds.simulation import MTC, DepthOrder, MoveToFront, RandomOrder, compare_strategies

S, Q, K, POOL = 13, 2883, 10, 40   # systems, questions, cut-off, entities a question's systems draw from


def instance(seed: int = 0, pool: int = POOL, noise: float = 1.0):
    """Systems rank a question's POOL entities by a shared latent score plus their own noise (so their top 10
    overlap as real runs do); relevance follows the latent score; 22,492 items judged (the published
    judgments), 21,364 unknown, ~10 % depth-0 answers among the rest, the others known not relevant."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(Q, pool))
    skill = np.linspace(0.6, 1.4, S)
    noisy = latent[None] * skill[:, None, None] + rng.normal(0, noise, size=(S, Q, pool))
    order = np.argsort(-noisy, axis=2)
    ranks = np.zeros((S, Q, pool), np.int64)
    np.put_along_axis(ranks, order[:, :, :K], np.arange(1, K + 1)[None, None, :], axis=2)
    ranks = ranks.reshape(S, Q * pool)
    keep = (ranks > 0).any(0)
    ranks = ranks[:, keep]
    item_q = np.repeat(np.arange(Q), pool)[keep]
    truth = (rng.random(item_q.size) < 1 / (1 + np.exp(-(2 * latent.ravel()[keep] - 2.5)))).astype(np.int8)
    u = rng.random(item_q.size)
    judged = u < 22492 / item_q.size            # the published judgments
    unknown = (u >= 0.5) & (u < 0.5 + 21364 / item_q.size)
    state = np.where(judged, truth, np.where(unknown, -1, 0)).astype(np.int8)
    state[(u >= 0.9) & (truth == 1)] = 1          # depth-0 answers
    relation = rng.integers(0, 237, Q)[item_q]
    return item_q, ranks, state, truth, judged, relation, rng


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--simulation", action="store_true", help="also time the simulation (target 10 min)")
    ap.add_argument("--metric", default="P@k")
    ap.add_argument("--batch", type=int, default=100, help="judgments between re-rankings")
    ap.add_argument("--draws", type=int, default=64, help="Monte Carlo draws of the max-type metrics")
    ap.add_argument("--pool", type=int, default=POOL, help="entities per question the systems rank from")
    ap.add_argument("--noise", type=float, default=1.0, help="the systems' own noise (more: less overlap)")
    args = ap.parse_args()
    item_q, ranks, state, truth, judged, relation, rng = instance(0, args.pool, args.noise)
    n = item_q.size
    print(f"instance: {S} systems, {Q} questions, {n} items, {int((state == -1).sum())} unknown, "
          f"{int(judged.sum())} judged")

    t0 = time.perf_counter()
    cat, side = rng.integers(0, 4, 237)[relation], rng.integers(0, 2, Q)[item_q]
    answers = rng.integers(1, 3000, 237)[relation]
    feats = triple_features(ranks, cat, side, answers, K)
    cv = cross_validate(feats.take(np.flatnonzero(judged)), truth[judged], item_q[judged], folds=5, seed=0)
    prior = fit_prior(feats.take(np.flatnonzero(judged)), truth[judged], "logistic")
    p = prior.predict(feats)
    t_prior = time.perf_counter() - t0
    print(f"prior: 5-fold CV + fit {t_prior:.2f} s, CV AUC {cv.auc:.3f}")

    cand = Candidates(item_q, ranks, state, Q, K)
    t0 = time.perf_counter()
    eng = make_engine(cand, p, args.metric, draws=args.draws)
    und = eng.undecided()
    pab = eng.prob_a_beats_b()
    t_engine = time.perf_counter() - t0
    t0 = time.perf_counter()
    pl = plan(eng)
    t_plan = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = eng.sample_means(np.zeros((1, eng.unknown.size)))[0] + rng.normal(0, 1e-3, S)
    td = tau_distribution(eng, ref, draws=1000, seed=0)
    t_tau = time.perf_counter() - t0
    t0 = time.perf_counter()
    counts = judgments_to_decide(eng, draws=5, seed=0, batch=args.batch)
    t_counts = time.perf_counter() - t0
    total = t_prior + t_engine + t_plan + t_tau + t_counts
    print(f"{args.metric}: {int(und.sum())}/{und.size} pairs undecided, {int((np.abs(pab - .5) < .45).sum())} "
          f"with 0.05 < P(A>B) < 0.95")
    print(f"engine + P(A>B) {t_engine:.2f} s; plan of {pl.items.size} items {t_plan:.2f} s; τ under the prior "
          f"(1,000 draws) {t_tau:.2f} s, mean {td.mean:.3f} [{td.lo:.3f}, {td.hi:.3f}]; expected judgments "
          f"(5 draws, batch {args.batch}) {t_counts:.2f} s: {counts.expected:.0f} (draws {counts.per_draw.tolist()}), "
          f"worst case in [{counts.worst_case_adversary}, {counts.worst_case_upper}] (greedy adversary, upper bound)")
    print(f"prior + selection: {total:.1f} s (target 60 s)")

    if args.simulation:
        hidden = judged                          # the published labels; unjudged items stay not relevant
        sim_state = np.where(hidden, -1, np.where(state == 1, 1, 0)).astype(np.int8)
        sim = Candidates(item_q, ranks, sim_state, Q, K)
        depth = np.where(ranks > 0, ranks, K + 1).min(0)
        # the prior of hidden items from folds that never saw their question (the fit on all judged labels
        # would have seen the labels the simulation hides), and one refitted on the revealed labels only
        p_oof = p.copy()
        p_oof[np.flatnonzero(judged)] = cv.predictions
        strategies = {"mtc_prior": MTC(p_oof, args.metric, draws=args.draws),
                      "mtc_online": MTC(0.5, args.metric, draws=args.draws, refit=online_prior(feats)),
                      "mtc_uniform": MTC(0.5, args.metric, draws=args.draws),
                      "depth": DepthOrder(depth), **{f"random_{s}": RandomOrder(s) for s in range(5)},
                      "move_to_front": MoveToFront(0)}
        t0 = time.perf_counter()
        _, summary = compare_strategies(sim, truth, strategies, metric=args.metric, batch=args.batch)
        print(summary.to_string(index=False))
        print(f"simulation ({int(hidden.sum())} hidden, {len(strategies)} strategies): "
              f"{time.perf_counter() - t0:.1f} s (target 600 s)")


if __name__ == "__main__":
    main()
