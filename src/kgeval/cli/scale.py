"""The scale sub-commands (kgeval.scale, issue 53): ``kgeval scale graph`` generates a graph of Wikidata5M's or
ogbl-wikikg2's shape (or a fraction of it) with systems of graded quality, or reads the real graph's downloaded
files (``--from``); ``kgeval scale evaluate`` ranks its systems (the planted ones, or the user's trained models:
``--system NAME=FILE.npz``) exactly over entity blocks, in question shards, and writes the exact metrics, the
question-sampled estimates with their intervals, the paired differences and the sampled-negatives comparison."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ..arguments import label_problem
from ..io import OutputStage
from .options import Formatter, Parser, SchemaNumber, command


def _model(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not path:
        raise argparse.ArgumentTypeError(f"{text!r}: NAME=FILE.npz, e.g. transe=transe.npz")
    problem = label_problem(name)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return name, path


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
                  "and a sampling plan (docs/guide/scale.md). 'kgeval scale graph --from wikikg2|wikidata5m PATH' "
                  "reads the real graph's downloaded files instead, and 'kgeval scale evaluate --system "
                  "NAME=FILE.npz' evaluates your trained embeddings on it.",
         "kgeval scale graph --shape wikikg2 --factor 0.01 --out g && kgeval scale evaluate g/graph.npz --out ev")
def _scale(p: argparse.ArgumentParser):
    sub = p.add_subparsers(dest="scale_cmd", required=True, metavar="{graph,evaluate}", parser_class=Parser)
    g = sub.add_parser("graph", help="generate a graph of a shape", formatter_class=Formatter,
                       description="Generate a synthetic graph of a published shape (times --factor) into "
                                   "OUT/graph.npz: the same bytes for the same seed; or, with --from, read "
                                   "ogbl-wikikg2's folder (OGB's split/time/{train,valid,test}.pt and "
                                   "mapping/*.csv.gz) or Wikidata5M's files (PREFIX_{train,valid,test}.txt) "
                                   "into OUT/graph.npz, without planted systems (docs/guide/scale.md).")
    source = g.add_mutually_exclusive_group(required=True)
    source.add_argument("--shape", choices=("wikidata5m", "wikikg2"), help="the published shape")
    source.add_argument("--from", dest="source", nargs=2, metavar=("LAYOUT", "PATH"),
                        help="read a real graph: LAYOUT wikikg2 (PATH: OGB's ogbl_wikikg2 folder) or wikidata5m "
                             "(PATH: the folder of its .txt files)")
    g.add_argument("--prefix", default=None,
                   help="the Wikidata5M files' prefix (default wikidata5m_transductive; wikidata5m_inductive for "
                        "the inductive split); only with --from wikidata5m")
    # None until given, so that --from can refuse them: a real graph is read as it is, at its size
    g.add_argument("--factor", type=SchemaNumber("scale", "factor"), default=None,
                   help="every count of the shape times this (default 1)")
    g.add_argument("--seed", type=SchemaNumber("scale", "seed"), default=None, help="random seed (default 0)")
    g.add_argument("--out", required=True, help="output folder (OUT/graph.npz)")
    e = sub.add_parser("evaluate", help="rank a graph's systems and estimate their metrics", formatter_class=Formatter,
                       description="Rank the graph's systems (its planted ones, or your models: --system) exactly "
                                   "over entity blocks and write OUT/exact.csv, estimates.csv, paired.csv, "
                                   "negatives.csv, negatives_tau.json and, on a synthetic graph, pools.csv, "
                                   "pool_bounds.csv and sampling_plan.csv (docs/guide/scale.md).")
    e.add_argument("graph", help="a graph of 'kgeval scale graph' (graph.npz)")
    e.add_argument("--out", required=True, help="output folder")
    e.add_argument("--system", action="append", type=_model, metavar="NAME=FILE.npz",
                   help="a trained model to evaluate instead of the planted systems, repeatable (the first is the "
                        "sample-size pilot's): an .npz of 'model' (distmult, complex or transe), 'entity' and "
                        "'relation' rows in the graph's id order (or named by 'entity_names'/'relation_names'), "
                        "TransE's norm 'p' (default 1)")
    for name, key, default, help_ in (
            ("--systems", "systems", None, "planted systems of graded quality (0 the best; 5 unless given)"),
            ("--shards", "shards", 1, "question shards of exact ranking (the same result for any count)"),
            ("--k", "k", 100, "length of each question's top-k list"),
            ("--negatives", "negatives", 500, "random negatives per question of the sampled protocol"),
            ("--sample-size", "sample_size", None, "answers of the estimates, at least 100: a smaller sample's "
                                                   "95 %% interval of MRR covers less than 94 %% (default: the "
                                                   "size --half-width needs)"),
            ("--half-width", "half_width", 0.005, "requested 95 %% half-width of MRR without --sample-size"),
            ("--seed", "seed", 0, "seed of the sample and the negatives (the planted systems keep the graph's "
                                  "seed, so another seed shows the estimates' spread on the same systems)"),
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
        from ..scale.own import LAYOUTS, has_truth, layout_files, real_graph_step

        out = Path(a.out)
        if a.scale_cmd == "graph":
            if a.source is not None and a.source[0] not in LAYOUTS:
                g.error(f"--from: invalid layout {a.source[0]!r} (choose from {', '.join(LAYOUTS)})")
            for flag, value in (("--factor", a.factor), ("--seed", a.seed)):
                if a.source is not None and value is not None:
                    g.error(f"{flag} shapes a synthetic graph (--shape); --from reads the real graph as it is")
            if a.prefix is not None and (a.source is None or a.source[0] != "wikidata5m"):
                g.error("--prefix names Wikidata5M's files: it goes with --from wikidata5m only")
            prefix = a.prefix or "wikidata5m_transductive"
            factor, seed = 1.0 if a.factor is None else float(a.factor), 0 if a.seed is None else a.seed
            files = layout_files(*a.source, prefix) if a.source else []
            with OutputStage("scale-graph", inputs=files, folder=out) as stage:
                if a.source is None:
                    from ..scale.steps import graph_step  # torch: the planted systems' vectors

                    graph_step(a.shape, factor, seed, stage.path(out / "graph.npz"))
                else:
                    n = real_graph_step(*a.source, stage.path(out / "graph.npz"), prefix)
            if a.source is None:
                print(f"{out / 'graph.npz'}\t{a.shape} x {factor:g}")
            else:
                print(f"{out / 'graph.npz'}\t{a.source[0]} from {a.source[1]}: {n['entities']:,} entities, "
                      f"{n['relations']:,} relations, {n['train']:,} / {n['valid']:,} / {n['test']:,} "
                      "train / valid / test triples")
            return 0
        from ..scale.steps import TABLES, evaluate_graph

        if max(a.pool_depths) > a.k and has_truth(a.graph):  # pools are a synthetic graph's only
            e.error(f"--pool-depths {max(a.pool_depths)} is deeper than the top lists (--k {a.k})")
        models = a.system or []
        if models and a.systems is not None:
            e.error("--systems counts a synthetic graph's planted systems; with --system your models are the systems")
        seen = [m[0] for m in models]
        if len(set(seen)) < len(seen):
            e.error(f"--system: the name {next(n for n in seen if seen.count(n) > 1)!r} is given twice")
        with OutputStage("scale-evaluate", inputs=[a.graph, *(m[1] for m in models)], folder=out) as stage, \
                tempfile.TemporaryDirectory(prefix="kgeval-scale-") as work:
            # pools are judged by a synthetic graph's planted truth: a graph of real files has none
            pools = ("pools", "pool_bounds", "sampling_plan") if has_truth(a.graph) else ()
            names = {t: f"{t}.csv" for t in (*TABLES, *pools)}
            names["tau"] = "negatives_tau.json"
            evaluate_graph(a.graph, work, {t: stage.path(out / n) for t, n in names.items()},
                           systems=5 if a.systems is None else a.systems,
                           shards=a.shards, k=a.k, negatives_k=a.negatives, sample_size=a.sample_size,
                           half_width=float(a.half_width), hits=a.hits, seed=a.seed, batch=a.batch,
                           memory_budget_mb=float(a.memory_budget_mb), bootstrap=a.bootstrap,
                           exact_max_answers=a.exact_max_answers, pool_questions=a.pool_questions,
                           pool_depths=tuple(a.pool_depths), plan_budget=a.plan_budget,
                           models=[m[1] for m in models] or None, names=seen or None)
        for n in names.values():
            print(out / n)
        return 0

    return run
