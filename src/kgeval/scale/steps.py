"""The scale stage's workflow steps (workflow/rules/scale.smk): generate a graph of a shape; draw the answers of
the estimates and plan the questions to rank (:func:`sample_step`); rank one system on one question shard of the
plan (:func:`rank_shard_step`, a job per shard, so a cluster runs them side by side); gather a system's shards
into one ranking (:func:`gather_step`); and tabulate exact metrics, question-sampled estimates and sampled
negatives from the gathered rankings (:func:`evaluate_step`). :func:`evaluate_graph` chains the last four in
one process (the command line and the tests).

The systems are a synthetic graph's planted ones (``systems``: how many) or the user's trained models
(``models``: model files, :mod:`.own`), on a synthetic graph or one read from a real graph's files
(:func:`.own.real_graph_step`)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..errors import CorruptFileError, KgevalError
from ..io import write_csv, write_json
from ..metrics.ranks import micro_ranks
from ..progress import Progress
from . import estimate, negatives
from .engine import rank_blocks, split_questions
from .filterindex import BoundedAnswerIndex
from .own import NEGATIVES, load_system, open_graph
from .own import real_graph_step as real_graph_step  # the workflow's step reading a real graph's files
from .shards import ANSWER_FIELDS, QUESTION_FIELDS, gather_arrays, shard_arrays, subset
from .store import check_ids, load_arrays, map_arrays, save_arrays
from .summary import summary_step as summary_step  # the workflow's step writing a run's summary page
from .synth import SHAPES, scaled, system, write_graph

log = logging.getLogger(__name__)

#: answers of the sample-size pilot: its standard deviation's upper bound (estimate.sd_upper) is the sample's
#: size, and a smaller pilot's bound is looser (a larger sample); with only the pilot's answers counted, ranking
#: 2,000 answers' questions at ogbl-wikikg2's full shape takes seconds
PILOT = 2000
_SHARD_NAMES = ("index", "count", "q_idx", "rows") + QUESTION_FIELDS + ANSWER_FIELDS
_RANKING_NAMES = ("q_idx", "rows") + QUESTION_FIELDS + ANSWER_FIELDS


def graph_step(shape: str, factor: float, seed: int, out: str | Path) -> None:
    if shape not in SHAPES:
        raise KgevalError(f"scale.shapes: unknown shape {shape!r} (known: {', '.join(SHAPES)})")
    spec = SHAPES[shape] if factor == 1 else scaled(SHAPES[shape], factor)
    t0 = time.perf_counter()
    write_graph(out, spec, seed)
    log.info("%s x %g: %s in %.1f s", shape, factor, spec, time.perf_counter() - t0)


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _setup(graph: str | Path, filter_index: bool = True):
    """The graph, its test questions and judged answers, the train ∪ valid filter (None without
    ``filter_index``: at full shape it is a sort of 16M triples the tables and pools do not need) and the ranked
    answers (judged rows of the test answers, in micro_ranks' order: the population of the estimates)."""
    g, E, R = open_graph(graph)
    questions, judged = split_questions(g["test"].astype(np.int64), E, R)
    # in bounded pieces: the whole-split build peaked at 4.6 GB at ogbl-wikikg2's shape, above the ranking itself
    known = BoundedAnswerIndex([g["train"], g["valid"]], E, R) if filter_index else None
    return g, questions, judged, known, np.flatnonzero(judged.label == 1)


def _scorers(graph, g, questions, systems: int, models, seed: int) -> list:
    """Per system a function that builds its block scorer (one system in memory at a time): the user's model
    files ``models`` where given, else the graph's first ``systems`` planted systems."""
    if models is not None:
        return [lambda path=path: load_system(path, graph, questions.num_entities, questions.num_relations)
                for path in models]
    if "z" not in g:
        raise KgevalError(f"{graph}: a graph read from real files has no planted systems: evaluate trained models "
                          "on it (models=[FILE.npz, ...]; kgeval scale evaluate --system NAME=FILE.npz)")
    # the planted systems are the graph's: drawn with its own seed, so that another evaluation seed redraws only
    # the sample and the negatives, and the spread of the estimates shows on fixed systems
    own = int(g["seed"]) if "seed" in g else seed
    return [lambda s=s: system(g, s, seed=own) for s in range(systems)]


def _realistic(judged, n_candidates, score, n_gt, n_eq, want: np.ndarray) -> np.ndarray:
    """Realistic micro-filtered ranks of the judged rows ``want`` (rows of ``judged``)."""
    ranks = micro_ranks(judged.q, score, n_gt, n_eq, n_candidates, judged.label == 1)
    return ranks.realistic[np.searchsorted(ranks.rows, want)].astype(np.float64)


def sample_step(graph: str | Path, sample_size: int | None, half_width: float, seed: int, k: int, batch: int,
                memory_budget_mb: float, exact_max_answers: int, out: str | Path, models=None) -> None:
    """The answers of the estimates (``idx``: positions among the ranked answers; ``sample_size`` of them, or
    the size a ``PILOT``-answer pilot of system 0 needs for ``half_width`` of MRR) and the questions to rank
    (``plan``: every test question up to ``exact_max_answers`` answers, beyond it only the sampled answers'
    questions, each with all its test answers for the micro filter). The pilot ranks the first system."""
    g, questions, judged, known, answers = _setup(graph)
    N = len(answers)
    if sample_size is None:
        pilot = estimate.sample(N, min(N, PILOT), seed)
        part = subset(questions, judged, np.unique(judged.q[answers[pilot]]))
        r = rank_blocks(_scorers(graph, g, questions, 1, models, seed)[0]().to(_device()), part.questions, part.judged, known, k=k,
                        batch=batch, memory_budget_mb=memory_budget_mb, model_name="system0 (pilot)",
                        count=np.isin(part.rows, answers[pilot]))
        ranks = _realistic(part.judged, r.n_candidates, r.score, r.n_gt, r.n_eq,
                           np.searchsorted(part.rows, answers[pilot]))
        sample_size = estimate.sample_size(1.0 / ranks, half_width, N)
    idx = estimate.sample(N, min(N, sample_size), seed + 1)
    exact = N <= exact_max_answers
    plan = np.arange(len(questions), dtype=np.int64) if exact else np.unique(judged.q[answers[idx]])
    log.info("%d of %d answers sampled; %d of %d questions to rank", len(idx), N, len(plan), len(questions))
    save_arrays(out, {"idx": idx.astype(np.int64), "plan": plan.astype(np.int64), "exact": np.array(exact)})


def rank_shard_step(graph: str | Path, sample: str | Path, systems: int, shard: int, shards: int, k: int,
                    batch: int, memory_budget_mb: float, seed: int, out: str | Path, models=None) -> None:
    """Rank every system exactly (block engine) on shard ``shard`` of ``shards`` of the plan's questions (every
    ``shards``-th from ``shard``, so head and tail questions spread evenly): one job reads the graph once for
    all systems."""
    if not 0 <= shard < shards:
        raise KgevalError(f"scale shard {shard} of {shards}: need 0 <= shard < shards")
    g, questions, judged, known, answers = _setup(graph)
    drawn = load_arrays(sample, ("plan", "idx", "exact"))
    _check_sample(sample, drawn, len(answers), len(questions))
    plan = drawn["plan"]
    part = subset(questions, judged, plan[shard::shards], shard, shards)
    # beyond exact_max_answers only the sampled answers' ranks are read (evaluate_step): the other answers of
    # their questions need a score for the micro filter, not a count over every entity
    count = None if bool(drawn["exact"]) else np.isin(part.rows, answers[drawn["idx"]])
    arrays = {}
    for s, scorer in enumerate(_scorers(graph, g, questions, systems, models, seed)):
        r = rank_blocks(scorer().to(_device()), part.questions, part.judged, known, k=k,
                        batch=batch, memory_budget_mb=memory_budget_mb, model_name=f"system{s} shard {shard}",
                        count=count)
        log.info("system %d, shard %d of %d: %d questions in %.1f s", s, shard, shards, len(part.q_idx),
                 r.meta["timings"]["total"])
        arrays.update({f"system{s}/{n}": a for n, a in shard_arrays(part, r).items()})
    save_arrays(out, arrays)


def gather_step(shards: list[str | Path], out: list[str | Path], first: int = 0) -> None:
    """Each system's shards as one ranking of the plan's questions (``out``: a file per system, system
    ``first`` first), the same bytes for any number of shards."""
    for s, path in enumerate(out, first):
        names = tuple(f"system{s}/{n}" for n in _SHARD_NAMES)
        parts = [{n.split("/", 1)[1]: a for n, a in load_arrays(p, names).items()} for p in shards]
        save_arrays(path, gather_arrays(parts, where=f"gather of {', '.join(map(str, shards))}"))


def evaluate_step(graph: str | Path, sample: str | Path, rankings: list[str | Path], negatives_k: int,
                  hits: list[int], seed: int, bootstrap: int, out_exact: str | Path, out_estimates: str | Path,
                  out_paired: str | Path, out_negatives: str | Path, out_tau: str | Path, models=None,
                  names: list[str] | None = None) -> None:
    """Per system (``rankings``, system 0 first): exact filtered metrics over every test answer (where the plan
    holds every question), question-sampled estimates with 95 % t intervals, paired differences on the same
    answers, and OGB's sampled-negatives protocol beside full ranking (over the answers ranked: all, or the
    sampled ones): against OGB's fixed negatives where the graph keeps them (read from its folder), else
    ``negatives_k`` uniform ones per question; negatives.csv's ``negatives`` says which (``ogb``, ``uniform:k``). ``names``: the systems' names in the tables (their numbers where None)."""
    g, questions, judged, _, answers = _setup(graph, filter_index=False)
    s = load_arrays(sample, ("idx", "plan", "exact"))
    _check_sample(sample, s, len(answers), len(questions))
    idx, plan, exact = s["idx"], s["plan"], bool(s["exact"])
    N = len(answers)
    part = subset(questions, judged, plan)
    want = np.searchsorted(part.rows, answers if exact else answers[idx])
    full, sampled = [], []
    scorers = _scorers(graph, g, questions, len(rankings), models, seed)
    if models is None:  # the tables name planted systems by number: say which is best
        log.info("systems 0-%d: DistMult over the planted vectors plus noise %s of their scale (0 the best)",
                 len(rankings) - 1, ", ".join(f"{(s + 1) * 0.2:g}" for s in range(len(rankings))))
    given, protocol = None, f"uniform:{negatives_k}"
    neg = map_arrays(graph, NEGATIVES)  # read only the rows of the answers ranked
    if len(neg) == len(NEGATIVES):  # read from OGB's folder: its protocol's own negatives
        _check_negatives(graph, neg, len(g["test"]), questions.num_entities)
        given = negatives.given_negatives(g["test"], neg["test_head_neg"], neg["test_tail_neg"], part.questions,
                                          part.judged, want)
        protocol, negatives_k = "ogb", neg["test_tail_neg"].shape[1]
    # a system's sampled negatives take seconds to a minute at full shape: a line per system, with the time left
    with Progress(len(rankings), "scale evaluate: systems (ranks, sampled negatives)", unit="systems") as bar:
        for sys_, path in enumerate(rankings):
            r = load_arrays(path, _RANKING_NAMES)
            if not np.array_equal(r["q_idx"], plan):
                raise CorruptFileError(path, f"ranks {len(r['q_idx'])} questions, not the {len(plan)} of {sample}")
            full.append(_realistic(part.judged, r["n_candidates"], r["score"], r["n_gt"], r["n_eq"], want))
            sampled.append(negatives.sampled_ranks(scorers[sys_]().to(_device()), part.questions,
                                                   part.judged, want, negatives_k, seed, given=given))
            bar.update(1)
    _tables(np.stack(full), np.stack(sampled), idx, N, exact, tuple(hits), negatives_k, bootstrap, seed,
            out_exact, out_estimates, out_paired, out_negatives, out_tau, names, protocol)


def _check_negatives(graph, neg: dict[str, np.ndarray], tests: int, E: int) -> None:
    """OGB's negatives in the graph file: a row of entity ids per test triple, each id a graph's entity."""
    for key, a in neg.items():
        if a.ndim != 2 or len(a) != tests:
            raise CorruptFileError(graph, f"array {key!r} has shape {a.shape}, expected a row per test triple "
                                          f"({tests:,})")
        check_ids(graph, key, a, [E] * a.shape[1], ["entity"] * a.shape[1])


def _check_sample(sample, drawn: dict[str, np.ndarray], answers: int, questions: int) -> None:
    """A sample file's answers (``idx``) and questions (``plan``): positions among the graph's ``answers``
    ranked answers and its ``questions`` test questions."""
    check_ids(sample, "idx", drawn["idx"].reshape(-1, 1), [answers], ["answer"])
    check_ids(sample, "plan", drawn["plan"].reshape(-1, 1), [questions], ["question"])


def _tables(full, sampled, idx, N, exact, hits, negatives_k, bootstrap, seed, out_exact, out_estimates,
            out_paired, out_negatives, out_tau, names, protocol: str) -> None:
    systems = len(full)
    label = list(range(systems)) if names is None else list(names)
    values = [estimate.per_answer(f, hits) for f in full]
    metrics = list(values[0])
    # a table of NaN says why in its own rows: beyond exact_max_answers only the sampled answers were ranked
    note = "every test answer ranked" if exact else (
        f"not computed: {N:,} test answers exceed exact_max_answers, so only the {len(idx):,} sampled answers' "
        "questions were ranked; estimates.csv holds their estimates with 95 % intervals")
    if not exact:
        log.info("exact.csv: %s", note)
    write_csv(pd.DataFrame([{"system": label[s], "metric": m, "value": float(values[s][m].mean()) if exact else np.nan,
                             "answers": N if exact else 0, "note": note}
                            for s in range(systems) for m in metrics]), out_exact)
    rows, pairs = [], []
    for m in metrics:
        vals = np.stack([v[m] for v in values])
        drawn = vals[:, idx] if exact else vals
        # the interval is skewness-corrected (estimate.bounds), so not symmetric: half_width is half its length
        means, lows, highs = estimate.bounds(drawn, N)
        for s in range(systems):
            ex = float(vals[s].mean()) if exact else np.nan
            rows.append({"system": label[s], "metric": m, "estimate": float(means[s]),
                         "half_width": float(highs[s] - lows[s]) / 2, "low": float(lows[s]), "high": float(highs[s]),
                         "n": len(idx), "population": N, "exact": ex,
                         "covered": bool(lows[s] <= ex <= highs[s]) if exact else None})
        for (a, b), (d, lo, hi) in estimate.paired(drawn, N).items():
            ex = float(vals[a].mean() - vals[b].mean()) if exact else np.nan
            pairs.append({"metric": m, "a": label[a], "b": label[b], "difference": d, "half_width": (hi - lo) / 2,
                          "low": lo, "high": hi, "exact": ex, "covered": bool(lo <= ex <= hi) if exact else None})
    write_csv(pd.DataFrame(rows), out_estimates)
    write_csv(pd.DataFrame(pairs), out_paired)
    cmp = negatives.compare(1.0 / full, 1.0 / sampled, reps=bootstrap, seed=seed)
    ratio = [float(np.max(v) / np.min(v)) if np.min(v) > 0 else float("inf") for v in (cmp["full"], cmp["sampled"])]
    # the order can survive sampled negatives while the gaps between systems shrink: say both
    log.info("sampled negatives (%s): best/worst MRR ratio %.1f under full ranking, %.1f sampled, Kendall's tau "
             "%.2f: the order %s, the gaps %s", protocol, ratio[0], ratio[1], cmp["tau"],
             "holds" if cmp["tau"] == 1 else "changes", "shrink" if ratio[1] < ratio[0] else "do not shrink")
    write_csv(pd.DataFrame({"system": label, "mrr_full": cmp["full"], "mrr_sampled": cmp["sampled"],
                            "difference": cmp["difference"], "answers": full.shape[1],
                            "negatives": protocol}), out_negatives)
    write_json(out_tau, {"metric": "mrr", "negatives": negatives_k, "systems": systems, "tau": cmp["tau"],
                         "best_worst_ratio_full": ratio[0], "best_worst_ratio_sampled": ratio[1],
                         "tau_interval_95": cmp["tau_interval"], "bootstrap": bootstrap, "answers": full.shape[1],
                         "interval": "percentile bootstrap over the ranked answers"})


def pools_step(graph: str | Path, sample: str | Path, rankings: list[str | Path], questions_n: int,
               depths: list[int], seed: int, out_pools: str | Path, out_bounds: str | Path,
               plan_budget: int = 2000, out_plan: str | Path | None = None,
               names: list[str] | None = None) -> None:
    """Pools of every system's top lists at each depth for a seeded sample of ``questions_n`` of the ranked
    questions, judged by the planted truth, each system's P@k bounds per pool depth and a sampling plan of
    ``plan_budget`` judgments for the adjacent pairs' P@k (:mod:`.pools`); ``names``: the systems' names in the
    tables (their numbers where None)."""
    from .pools import pool_bounds, sampling_plan, truth_keys

    g, questions, judged, _, _ = _setup(graph, filter_index=False)
    if "hidden" not in g:
        raise KgevalError(f"{graph}: a graph read from real files has no planted truth to judge pools by")
    plan = load_arrays(sample, ("plan",))["plan"]
    check_ids(sample, "plan", plan.reshape(-1, 1), [len(questions)], ["question"])
    n = min(questions_n, len(plan))
    rows = np.sort(np.random.default_rng([seed, 53]).choice(len(plan), size=n, replace=False))
    tops = []
    log.info("pools: reading %d systems' top lists, then pooling %d of %d ranked questions at depths %s",
             len(rankings), n, len(plan), depths)
    for path in rankings:
        r = load_arrays(path, ("q_idx", "run_entity"))
        if not np.array_equal(r["q_idx"], plan):
            raise CorruptFileError(path, f"ranks {len(r['q_idx'])} questions, not the {len(plan)} of {sample}")
        tops.append(r["run_entity"][rows])
    t0 = time.perf_counter()
    part = subset(questions, judged, plan[rows])
    truth = truth_keys(g, questions.num_entities, questions.num_relations)
    pools, bounds = pool_bounds(part.questions, tops, truth, depths)
    log.info("pools of %d of %d ranked questions at depths %s in %.1f s", n, len(plan), depths,
             time.perf_counter() - t0)
    label = dict(enumerate(names)) if names is not None else None
    write_csv(pools, out_pools)
    write_csv(bounds if label is None else bounds.assign(system=bounds["system"].map(label)), out_bounds)
    if out_plan is not None:
        log.info("pools: drawing a sampling plan of %d judgments", plan_budget)
        plan_ = sampling_plan(part.questions, tops, truth, max(depths), plan_budget, seed)
        write_csv(plan_ if label is None else plan_.assign(a=plan_["a"].map(label), b=plan_["b"].map(label)),
                  out_plan)


TABLES = ("exact", "estimates", "paired", "negatives")


def evaluate_graph(graph: str | Path, work: str | Path, out: dict[str, Path], systems: int, shards: int, k: int,
                   negatives_k: int, sample_size: int | None, half_width: float, hits: list[int], seed: int,
                   batch: int, memory_budget_mb: float, bootstrap: int, exact_max_answers: int,
                   pool_questions: int = 10000, pool_depths: tuple[int, ...] = (1, 3, 10),
                   plan_budget: int = 2000, models=None, names: list[str] | None = None) -> None:
    """The workflow's sample, shard, gather, evaluate and pools steps in one process, intermediate files in
    ``work``; ``out``: the paths of the tables (``TABLES``, ``tau`` and, when given, ``pools``, ``pool_bounds``
    and ``sampling_plan``: a synthetic graph's only). ``models``: the user's model files (:mod:`.own`), evaluated
    instead of the planted systems (``systems`` is then their number), ``names`` theirs in the tables."""
    if models is not None:
        models = list(models)
        systems = len(models)
        if not systems:
            raise KgevalError("scale evaluate: models is empty: name at least one model file")
        if names is not None and len(names) != systems:
            raise KgevalError(f"scale evaluate: {len(names)} names for {systems} model files")
    work = Path(work)
    sample = work / "sample.npz"
    sample_step(graph, sample_size, half_width, seed, k, batch, memory_budget_mb, exact_max_answers, sample,
                models)
    parts = [work / f"shard{i}of{shards}.npz" for i in range(shards)]
    for i, p in enumerate(parts):
        rank_shard_step(graph, sample, systems, i, shards, k, batch, memory_budget_mb, seed, p, models)
    rankings = [work / f"system{s}.npz" for s in range(systems)]
    gather_step(parts, rankings)
    evaluate_step(graph, sample, rankings, negatives_k, hits, seed, bootstrap,
                  **{f"out_{t}": out[t] for t in (*TABLES, "tau")}, models=models, names=names)
    if "pools" in out:
        pools_step(graph, sample, rankings, pool_questions, list(pool_depths), seed, out["pools"],
                   out["pool_bounds"], plan_budget, out.get("sampling_plan"), names)
