"""The scale stage's workflow steps (workflow/rules/scale.smk): generate a graph of a shape, then evaluate its
systems exactly (block engine), by question-sampled estimates and by sampled negatives."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..data.questions import AnswerIndex
from ..errors import KgevalError
from ..io import write_csv, write_json
from ..metrics.ranks import micro_ranks
from . import estimate, negatives
from .engine import rank_blocks, split_questions
from .shards import subset
from .synth import SHAPES, load_graph, scaled, system, write_graph

log = logging.getLogger(__name__)


def graph_step(shape: str, factor: float, seed: int, out: str | Path) -> None:
    if shape not in SHAPES:
        raise KgevalError(f"scale.shapes: unknown shape {shape!r} (known: {', '.join(SHAPES)})")
    spec = SHAPES[shape] if factor == 1 else scaled(SHAPES[shape], factor)
    t0 = time.perf_counter()
    write_graph(out, spec, seed)
    log.info("%s x %g: %s in %.1f s", shape, factor, spec, time.perf_counter() - t0)


def evaluate_step(graph: str | Path, systems: int, k: int, negatives_k: int, sample_size: int | None,
                  half_width: float, hits: list[int], seed: int, batch: int, memory_budget_mb: float,
                  bootstrap: int, exact_max_answers: int, out_exact: str | Path, out_estimates: str | Path,
                  out_paired: str | Path, out_negatives: str | Path, out_tau: str | Path) -> None:
    """Per system: exact filtered metrics over every test answer (where there are at most ``exact_max_answers``),
    question-sampled estimates with 95 % t intervals (``sample_size`` answers, or the size a 500-answer pilot of
    system 0 needs for ``half_width`` of MRR), paired differences on the same answers, and OGB's
    sampled-negatives protocol beside full ranking (over the answers ranked). Beyond ``exact_max_answers`` only
    the sampled answers' questions are ranked (exactly: each with all its test answers, for the micro filter)."""
    g = load_graph(graph)
    E, R = len(g["z"]), len(g["w"])
    test = g["test"].astype(np.int64)
    questions, judged = split_questions(test, E, R)
    known = AnswerIndex(np.concatenate([g["train"], g["valid"]]).astype(np.int64), E, R)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    answers = np.flatnonzero(judged.label == 1)  # the population, in micro_ranks' order
    N = len(answers)
    exact = N <= exact_max_answers

    def rank(scorer, name: str, which: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Realistic ranks under full ranking and against the sampled negatives of the answers ``which``
        (positions in ``answers``; None: all)."""
        if which is None:
            qs, jd, want = questions, judged, answers
        else:
            part = subset(questions, judged, np.unique(judged.q[answers[which]]))
            qs, jd, want = part.questions, part.judged, np.searchsorted(part.rows, answers[which])
        r = rank_blocks(scorer, qs, jd, known, k=k, batch=batch, memory_budget_mb=memory_budget_mb,
                        model_name=name)
        ranks = micro_ranks(jd.q, r.score, r.n_gt, r.n_eq, r.n_candidates, jd.label == 1)
        pos = np.searchsorted(ranks.rows, want)
        neg = negatives.sampled_ranks(scorer, qs, jd, want, negatives_k, seed)
        return ranks.realistic[pos].astype(np.float64), neg

    if sample_size is None:
        pilot = estimate.sample(N, min(N, 500), seed)
        pilot_ranks, _ = rank(system(g, 0, seed=seed).to(device), "system0 (pilot)", pilot)
        sample_size = estimate.sample_size(1.0 / pilot_ranks, half_width, N)
    idx = estimate.sample(N, min(N, sample_size), seed + 1)
    full, sampled, seconds = [], [], []
    for s in range(systems):
        t0 = time.perf_counter()
        f, n = rank(system(g, s, seed=seed).to(device), f"system{s}", None if exact else idx)
        seconds.append(time.perf_counter() - t0)
        full.append(f)
        sampled.append(n)
    full, sampled = np.stack(full), np.stack(sampled)
    hits = tuple(hits)
    values = [estimate.per_answer(f, hits) for f in full]
    names = list(values[0])
    write_csv(pd.DataFrame([{"system": s, "metric": m, "value": float(values[s][m].mean()) if exact else np.nan,
                             "answers": N if exact else 0, "seconds": seconds[s]}
                            for s in range(systems) for m in names]), out_exact)
    rows, pairs = [], []
    for m in names:
        vals = np.stack([v[m] for v in values])
        drawn = vals[:, idx] if exact else vals
        means, halves = estimate.interval(drawn, N)
        for s in range(systems):
            ex = float(vals[s].mean()) if exact else np.nan
            rows.append({"system": s, "metric": m, "estimate": float(means[s]), "half_width": float(halves[s]),
                         "n": len(idx), "population": N, "exact": ex,
                         "covered": bool(abs(means[s] - ex) <= halves[s]) if exact else None})
        for (a, b), (d, h) in estimate.paired(drawn, N).items():
            ex = float(vals[a].mean() - vals[b].mean()) if exact else np.nan
            pairs.append({"metric": m, "a": a, "b": b, "difference": d, "half_width": h, "exact": ex,
                          "covered": bool(abs(d - ex) <= h) if exact else None})
    write_csv(pd.DataFrame(rows), out_estimates)
    write_csv(pd.DataFrame(pairs), out_paired)
    cmp = negatives.compare(1.0 / full, 1.0 / sampled, reps=bootstrap, seed=seed)
    write_csv(pd.DataFrame({"system": range(systems), "mrr_full": cmp["full"], "mrr_sampled": cmp["sampled"],
                            "difference": cmp["difference"], "answers": full.shape[1]}), out_negatives)
    write_json(out_tau, {"metric": "mrr", "negatives": negatives_k, "systems": systems, "tau": cmp["tau"],
                         "tau_interval_95": cmp["tau_interval"], "bootstrap": bootstrap, "answers": full.shape[1],
                         "interval": "percentile bootstrap over the ranked answers"})
