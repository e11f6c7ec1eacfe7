"""The scale sub-commands (kgeval.scale, issue 53): ``kgeval scale graph`` generates a graph of Wikidata5M's or
ogbl-wikikg2's shape (or a fraction of it) with systems of graded quality; ``kgeval scale evaluate`` ranks its
systems exactly over entity blocks, in question shards, and writes the exact metrics, the question-sampled
estimates with their intervals, the paired differences and the sampled-negatives comparison."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ..io import OutputStage
from .options import Formatter, Parser, SchemaNumber, command


def _hits(text: str) -> list[int]:
    try:
        levels = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated integers, e.g. 1,3,10") from None
    if not levels or min(levels) < 1 or len(set(levels)) != len(levels):
        raise argparse.ArgumentTypeError(f"{text!r}: distinct integers >= 1, e.g. 1,3,10")
    return levels


@command("scale", "evaluate at the scale of today's knowledge graphs (millions of entities). 'kgeval scale graph' "
                  "generates a synthetic graph of Wikidata5M's or ogbl-wikikg2's shape with systems of graded "
                  "quality, 'kgeval scale evaluate' ranks them exactly over entity blocks (in question shards) and "
                  "writes exact metrics, question-sampled estimates with 95 % intervals, paired differences, "
                  "what sampled negatives do, and pools of the top lists judged by the planted truth, with bounds "
                  "and a sampling plan (docs/guide/scale.md).",
         "kgeval scale graph --shape wikikg2 --factor 0.01 --out g && kgeval scale evaluate g/graph.npz --out ev")
def _scale(p: argparse.ArgumentParser):
    sub = p.add_subparsers(dest="scale_cmd", required=True, metavar="{graph,evaluate}", parser_class=Parser)
    g = sub.add_parser("graph", help="generate a graph of a shape", formatter_class=Formatter,
                       description="Generate a synthetic graph of a published shape (times --factor) into "
                                   "OUT/graph.npz: the same bytes for the same seed.")
    g.add_argument("--shape", required=True, choices=("wikidata5m", "wikikg2"), help="the published shape")
    g.add_argument("--factor", type=SchemaNumber("scale", "factor"), default=1.0,
                   help="every count of the shape times this")
    g.add_argument("--seed", type=SchemaNumber("scale", "seed"), default=0, help="random seed")
    g.add_argument("--out", required=True, help="output folder (OUT/graph.npz)")
    e = sub.add_parser("evaluate", help="rank a graph's systems and estimate their metrics", formatter_class=Formatter,
                       description="Rank the graph's systems exactly over entity blocks and write OUT/exact.csv, "
                                   "estimates.csv, paired.csv, negatives.csv, negatives_tau.json, pools.csv, "
                                   "pool_bounds.csv and sampling_plan.csv (docs/guide/scale.md).")
    e.add_argument("graph", help="a graph of 'kgeval scale graph' (graph.npz)")
    e.add_argument("--out", required=True, help="output folder")
    for name, key, default, help_ in (
            ("--systems", "systems", 5, "systems of graded quality (0 the best)"),
            ("--shards", "shards", 1, "question shards of exact ranking (the same result for any count)"),
            ("--k", "k", 100, "length of each question's top-k list"),
            ("--negatives", "negatives", 500, "random negatives per question of the sampled protocol"),
            ("--sample-size", "sample_size", None, "answers of the estimates (default: the size --half-width needs)"),
            ("--half-width", "half_width", 0.005, "requested 95 %% half-width of MRR without --sample-size"),
            ("--seed", "seed", 0, "seed of the systems, the sample and the negatives"),
            ("--batch", "batch", 1024, "questions scored together"),
            ("--memory-budget-mb", "memory_budget_mb", 512, "memory of one block's score temporaries"),
            ("--bootstrap", "bootstrap", 1000, "bootstrap repetitions of tau's interval"),
            ("--exact-max-answers", "exact_max_answers", 50000, "rank every answer exactly up to this many")):
        e.add_argument(name, type=SchemaNumber("scale", key), default=default, help=help_)
    e.add_argument("--hits", type=_hits, default="1,3,10", help="Hits@k levels, comma-separated")
    e.add_argument("--pool-questions", type=SchemaNumber("scale", "pool_questions"), default=10000,
                   help="ranked questions whose top lists are pooled and judged by the planted truth")
    e.add_argument("--pool-depths", type=_hits, default="1,3,10",
                   help="pool depths, comma-separated; the deepest at most --k")
    e.add_argument("--plan-budget", type=SchemaNumber("scale", "plan_budget"), default=2000,
                   help="expected judgments of the sampling plan on the pools")

    def run(a):
        from ..scale.steps import TABLES, evaluate_graph, graph_step

        out = Path(a.out)
        if a.scale_cmd == "graph":
            with OutputStage("scale-graph", folder=out) as stage:
                graph_step(a.shape, float(a.factor), a.seed, stage.path(out / "graph.npz"))
            print(f"{out / 'graph.npz'}\t{a.shape} x {a.factor:g}")
            return 0
        if max(a.pool_depths) > a.k:
            e.error(f"--pool-depths {max(a.pool_depths)} is deeper than the top lists (--k {a.k})")
        names = {t: f"{t}.csv" for t in (*TABLES, "pools", "pool_bounds", "sampling_plan")}
        names["tau"] = "negatives_tau.json"
        with OutputStage("scale-evaluate", inputs=[a.graph], folder=out) as stage, \
                tempfile.TemporaryDirectory(prefix="kgeval-scale-") as work:
            evaluate_graph(a.graph, work, {t: stage.path(out / n) for t, n in names.items()}, systems=a.systems,
                           shards=a.shards, k=a.k, negatives_k=a.negatives, sample_size=a.sample_size,
                           half_width=float(a.half_width), hits=a.hits, seed=a.seed, batch=a.batch,
                           memory_budget_mb=float(a.memory_budget_mb), bootstrap=a.bootstrap,
                           exact_max_answers=a.exact_max_answers, pool_questions=a.pool_questions,
                           pool_depths=tuple(a.pool_depths), plan_budget=a.plan_budget)
        for n in names.values():
            print(out / n)
        return 0

    return run
