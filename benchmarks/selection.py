"""The relevance prior's fit and the MTC selection (issue 30 §5, target ≤ 60 s on the 2-core machine) and the
simulation on real labels (target ≤ 10 min) on a synthetic instance of FB-Test-S-C's size: 13 systems, 2,883
questions, top 10, ~21k unknown items, ~22k published judgments to fit the prior on.

    python benchmarks/selection.py [--simulation] [--metric P@k] [--batch 100] [--draws 64]

``--reference reference/default`` times instead what the workflow's ``bounds_select`` step runs on real data: the
candidates of the 13 systems' top-10 lists on FB-Test-S-C (the pack's ``runs/FB-Test-S-C/top10.parquet``) with the
published judgments (the test set's, built by :func:`kgeval.load_testset` with ``KGEVAL_MIRROR``), the prior fitted
as :func:`kgeval.bounds.steps.selection_step` fits it, then per metric of ``--metrics`` (default the config's
P, RR, Success) the engine, the plan, ``judgments_to_decide`` and ``tau_distribution`` with the config's defaults
(16 draws, 5 count draws, batch 200, 1,000 τ draws, hard stop, seed 0), against the 60 s and 3 min targets.

    python benchmarks/selection.py --reference reference/default [--metrics P RR Success] [--workdir .]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import heartbeat_main

from kgeval.bounds.counts import judgments_to_decide, tau_distribution
from kgeval.bounds.greedy import make_engine, plan
from kgeval.bounds.simulation import MTC, DepthOrder, MoveToFront, RandomOrder, compare_strategies
from kgeval.judgments.candidates import Candidates
from kgeval.judgments.prior import cross_validate, fit_prior, online_prior, triple_features

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


def reference_items(pack: str, workdir: str = ".", testset: str = "FB-Test-S-C", k: int = K, max_depth: int = 10):
    """What ``_published_items`` of :mod:`kgeval.bounds.steps` builds from the dumps, from a reference pack's
    top-k lists and the test set's published judgments: (systems, deepest-depth items, depth-0 items, each item's
    judgment depth, the prior's features)."""
    from types import SimpleNamespace

    import pandas as pd

    from kgeval import load_testset
    from kgeval.data.kg import KnowledgeGraph
    from kgeval.data.questions import load_questions
    from kgeval.data.testsets import TestSet
    from kgeval.judgments.items import candidates, item_features
    from kgeval.judgments.labels import state
    from kgeval.metrics.evaluate import qrels_at_depth
    from kgeval.metrics.trec import pair_lookup
    from kgeval.scores.ranking import judged_entities

    files = load_testset(testset, workdir=workdir).files
    kg = KnowledgeGraph.load(files["kg"])
    questions = load_questions(files["questions"], kg)
    judged = judged_entities(TestSet.load(files["tsv"], kg, testset), questions)
    top = pd.read_parquet(f"{pack}/runs/{testset}/top{k}.parquet")
    systems = sorted(top["System"].astype(str).unique())
    qpos = {q: i for i, q in enumerate(questions.qid)}
    entity = np.full((len(systems), len(questions), k), -1, np.int64)
    s = top["System"].astype(str).map({n: i for i, n in enumerate(systems)}).to_numpy()
    q = top["qid"].astype(str).map(qpos).to_numpy()
    entity[s, q, top["rank"].to_numpy() - 1] = top["entity"].to_numpy()
    dump = SimpleNamespace(judged=judged)
    E = questions.num_entities
    code_d, qmask = state(entity, qrels_at_depth(dump, max_depth), E)
    code_0, _ = state(entity, qrels_at_depth(dump, 0), E)
    deep = candidates(entity, code_d, qmask, systems, k)
    zero = candidates(entity, code_0, qmask, systems, k)
    depth = pair_lookup(deep.q, deep.entity, judged.q, judged.entity,
                        np.where(judged.depth <= max_depth, judged.depth, max_depth + 1), E, max_depth + 1)
    return systems, deep, zero, depth, item_features(deep, kg, questions)


def run_reference(args) -> None:
    """Time selection_step's parts on the reference pack's real data (see the module docstring)."""
    from kgeval.bounds.steps import _prior
    from kgeval.judgments.items import METRIC_NAMES

    max_depth, seed = 10, 0
    t0 = time.perf_counter()
    systems, deep, zero, depth, feats = reference_items(args.reference, args.workdir)
    cand = deep.cand
    print(f"real data ({time.perf_counter() - t0:.1f} s to load): {cand.n_systems} systems, {cand.n_questions} "
          f"questions, {cand.n_items} items, {int((cand.state == -1).sum())} unknown, "
          f"{int((cand.state == 1).sum())} known relevant")
    t0 = time.perf_counter()
    train = np.flatnonzero((cand.state >= 0) & (depth >= 1) & (depth <= max_depth))
    cv, model = _prior(feats.take(train), cand.state[train].astype(np.int64), cand.item_q[train], "logistic", 5,
                       seed)
    p = model.predict(feats)
    t_prior = time.perf_counter() - t0
    print(f"prior: {train.size} judgments, CV AUC {cv.auc:.3f}, mean p(unknown) "
          f"{p[cand.state == -1].mean():.4f}: {t_prior:.2f} s")
    reference_state = np.where(zero.cand.state == -1, 0, zero.cand.state)
    total = t_prior
    for name in args.metrics:
        m = METRIC_NAMES[name]
        t = {}
        t0 = time.perf_counter()
        eng = make_engine(cand, p, m, draws=args.draws, seed=seed)
        eng.bounds()
        if hasattr(eng, "expectation"):
            eng.expectation()
        pab = eng.prob_a_beats_b()
        und = eng.undecided("hard")
        t["engine"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        pl = plan(eng, "hard", seed)
        t["plan"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        counts = judgments_to_decide(eng, args.count_draws, seed, args.batch, "hard")
        t["judgments_to_decide"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = make_engine(zero.cand.with_state(reference_state), 0.5, m).sample_means(np.zeros((1, 0)))[0]
        td = tau_distribution(eng, ref, args.tau_draws, seed)
        t["tau_distribution"] = time.perf_counter() - t0
        sub = sum(t.values())
        total += sub
        print(f"{name}: {int(und.sum())}/{und.size} pairs undecided, {int(((pab > .05) & (pab < .95)).sum())} with "
              f"0.05 < P(A>B) < 0.95; plan {pl.items.size} items; judgments to decide: expected "
              f"{counts.expected:.1f} (draws {counts.per_draw.tolist()}, max {int(counts.per_draw.max(initial=0))}), "
              f"worst case ≤ {counts.worst_case_upper}, adversary {counts.worst_case_adversary}; τ mean "
              f"{td.mean:.4f} [{td.lo:.4f}, {td.hi:.4f}]")
        print("  " + "; ".join(f"{k} {v:.2f} s" for k, v in t.items()) + f"; {name} total {sub:.1f} s "
              f"({sub / 60:.2f} × 60 s)")
    print(f"prior + selection ({', '.join(args.metrics)}): {total:.1f} s, {total / 180:.2f} × the 3 min target")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", help="a reference pack (reference/default): time selection_step on its real "
                                        "FB-Test-S-C top-10 lists and the published judgments instead")
    ap.add_argument("--workdir", default=".", help="with --reference: where load_testset builds the test set")
    ap.add_argument("--metrics", nargs="+", default=["P", "RR", "Success"], help="with --reference")
    ap.add_argument("--count-draws", type=int, default=5, help="with --reference: judgments_to_decide's draws")
    ap.add_argument("--tau-draws", type=int, default=1000, help="with --reference")
    ap.add_argument("--simulation", action="store_true", help="also time the simulation (target 10 min)")
    ap.add_argument("--metric", default="P@k")
    ap.add_argument("--batch", type=int, default=None,
                    help="judgments between re-rankings (default 100; with --reference the config's 200)")
    ap.add_argument("--draws", type=int, default=None,
                    help="Monte Carlo draws of the max-type metrics (default 64; with --reference the config's 16)")
    ap.add_argument("--pool", type=int, default=POOL, help="entities per question the systems rank from")
    ap.add_argument("--noise", type=float, default=1.0, help="the systems' own noise (more: less overlap)")
    args = ap.parse_args()
    if args.reference:
        args.batch, args.draws = args.batch or 200, args.draws or 16
        return run_reference(args)
    args.batch, args.draws = args.batch or 100, args.draws or 64
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
    heartbeat_main(main, __file__)
