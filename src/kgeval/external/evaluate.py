"""``kgeval evaluate``: any system judged like the study's models, on every test set of a dataset.

For each (system, test set) the system's dump is written under ``DIR/dumps/<system>/<test set>`` and evaluated by
the function that builds the pipeline's tables (``kgeval.metrics.evaluate.evaluate`` with the metric families),
so ``DIR/evaluation.csv`` has the columns of ``results/metrics/<test set>/evaluation.csv`` (``System`` first, then
``TestSet``) plus BCa bootstrap 95 % intervals of the headline metrics (``micro_mrr_lo`` / ``_hi``: answers
resampled; ``macro_mrr_lo`` / ``_hi``: questions resampled). ``DIR/summary.md`` states the tie policy, the filter
sets and each run's depth.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis.resampling import bootstrap_weights, resample_means
from ..cells import write_sheet_csv
from ..data.kg import KnowledgeGraph
from ..errors import InputError
from ..io import atomic_open, md_cell
from ..metrics.evaluate import evaluate, qrels_at_depth
from ..metrics.kendall import bca_interval
from ..metrics.steps import summary_frame
from ..scores.dumps import load_dump
from .pykeen import UNKNOWN_POLICY, unknown_answers
from .systems import System, dump_system, load_scorer

log = logging.getLogger(__name__)

HEADLINE = {"micro_mrr": "per_answer", "macro_mrr": "per_question"}
TIE_POLICY = ("KGC ranks (micro_*, macro_*) are realistic ranks: the mean of the optimistic and the pessimistic "
              "rank when scores tie (PyKEEN's 'realistic'), the policy of every model in the study. trec_eval "
              "measures use trec_eval's order: score descending, then docno descending.")
FILTERS = ("Micro (per answer): every other entity known to answer the question in train ∪ valid ∪ the test set "
           "is removed from the ranking. Macro (per question) and trec measures: the question's train ∪ valid "
           "answers are removed, its test answers are the relevant documents. kgeval applies both filters to "
           "run files too, so a run needs no filtering of its own.")
DEPTH_NOTE = ("A run cut at depth K counts an answer it does not list as not retrieved (reciprocal rank 0, no "
              "hit). Metrics that need the rank of such an answer (MR and the other rank-magnitude metrics, the "
              "unified α transforms, Hits@k for k > K) are reported only for runs that rank every candidate; "
              "they are empty for cut runs.")


def mean_interval(items: np.ndarray, repeats: int = 1000, seed: int = 0, level: float = 0.95,
                  chunk: int = 100) -> tuple[float, float]:
    """BCa bootstrap interval of the mean of ``items`` (``kendall.bca_interval``; the jackknife of a mean is
    closed-form). Resamples are drawn in chunks, so memory stays at chunk × n weights."""
    x = np.asarray(items, dtype=np.float64)
    n = len(x)
    if n < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    boot = np.concatenate([resample_means(x[:, None], bootstrap_weights(n, min(chunk, repeats - s), rng))[:, 0]
                           for s in range(0, repeats, chunk)])
    jack = (x.sum() - x) / (n - 1)
    return bca_interval(float(x.mean()), boot, [jack], level)


def evaluate_systems(systems: list[System], kg: KnowledgeGraph, testsets: dict[str, dict[str, str]],
                     out: str | Path, measures: list[str] | None = None, depth_of=lambda testset: 1000,
                     allow_missing: bool = False, repeats: int = 1000, seed: int = 0,
                     evaluations: dict | None = None) -> tuple[pd.DataFrame, list]:
    """Dump and evaluate every system on its test sets; write ``evaluation.csv`` and ``summary.md`` to ``out``.
    ``testsets``: name -> {"tsv", "questions"} paths. Returns the table and the dump metas; ``evaluations``, when
    given, receives each ``(system, test set)``'s :class:`~kgeval.metrics.evaluate.Evaluation` and dump, for the
    placement, breakdowns and pool coverage (``kgeval.external.report``)."""
    out = Path(out)
    rows, metas = [], []
    for system in systems:
        names = system.testsets(list(testsets))
        if not names:
            raise InputError(system.path, None, f"system {system.name} has no run for any test set of {kg.name} "
                                                f"({', '.join(testsets)})")
        scorer = None if system.kind == "run" else load_scorer(system, kg)
        for t in names:
            folder = out / "dumps" / system.name / t
            meta = dump_system(system, kg, t, testsets[t], folder, k=depth_of(t), allow_missing=allow_missing,
                               scorer=scorer)
            dump = load_dump(folder)
            ev = evaluate(dump, qrels_at_depth(dump), kg.relation_category, measures, families=True)
            row = summary_frame({system.name: ev.summary}, {"TestSet": t})
            for metric, items in HEADLINE.items():
                lo, hi = mean_interval(getattr(ev, items)[metric].to_numpy(), repeats, seed)
                row[f"{metric}_lo"], row[f"{metric}_hi"] = lo, hi
            rows.append(row)
            if evaluations is not None:
                evaluations[(system.name, t)] = (ev, dump)
            unknown = getattr(scorer, "unknown", None)
            affected = 0 if unknown is None else unknown_answers(unknown, dump, ev.per_answer)
            metas.append({"System": system.name, "TestSet": t, "kind": system.kind,
                          "run_depth": meta["run_depth"], "run_complete": meta["run_complete"],
                          "missing_questions": meta.get("missing_questions", 0),
                          "answers": len(ev.per_answer), "questions": len(ev.per_question),
                          "unknown_entities": 0 if unknown is None else int(unknown.sum()),
                          "unknown_answers": affected})
            if affected:
                log.warning("%s on %s: %d of %d answers involve one of the %d entities the model does not know "
                            "(ranked last: %s)", system.name, t, affected, len(ev.per_answer), int(unknown.sum()),
                            UNKNOWN_POLICY)
            log.info("%s on %s: micro MRR %.4f, macro MRR %.4f", system.name, t, ev.summary["micro_mrr"],
                     ev.summary["macro_mrr"])
    table = pd.concat(rows, ignore_index=True)
    write_sheet_csv(table, out / "evaluation.csv")
    write_summary(table, metas, out / "summary.md", repeats)
    return table, metas


def _fmt(value: float, lo: float | None = None, hi: float | None = None) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    text = f"{value:.4f}"
    return text if lo is None or not np.isfinite(lo) else f"{text} [{lo:.4f}, {hi:.4f}]"


def summary_markdown(table: pd.DataFrame, metas: list[dict], repeats: int = 1000) -> str:
    lines = ["# kgeval evaluate", "",
             "| System | Test set | micro MRR [95 % CI] | macro MRR [95 % CI] | micro Hits@10 | macro Hits@10 | "
             "micro MR | nDCG@20 | run depth |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (_, r), m in zip(table.iterrows(), metas):
        depth = "all candidates" if m["run_complete"] and m["kind"] != "run" else \
            f"{m['run_depth']}" + (" (complete)" if m["run_complete"] else " (cut)")
        lines.append(f"| {md_cell(r['System'])} | {r['TestSet']} | {_fmt(r['micro_mrr'], r['micro_mrr_lo'], r['micro_mrr_hi'])}"
                     f" | {_fmt(r['macro_mrr'], r['macro_mrr_lo'], r['macro_mrr_hi'])} | "
                     f"{_fmt(r.get('micro_hits@10'))} | {_fmt(r.get('macro_hits@10'))} | {_fmt(r.get('micro_mr'))} | "
                     f"{_fmt(r.get('ndcg_cut_20'))} | {depth} |")
    missing = [m for m in metas if m["missing_questions"]]
    lines += ["", f"**Ties.** {TIE_POLICY}", "", f"**Filters.** {FILTERS}", "", f"**Run depth.** {DEPTH_NOTE} "
              "Checkpoints and PyKEEN models rank every candidate (their ranks are exact; the depth shown is that of "
              "the stored top-K run the trec measures read)."]
    if missing:
        lines += ["", "**Missing questions** (scored zero, as `trec_eval -c` does): " +
                  ", ".join(f"{m['System']} on {m['TestSet']}: {m['missing_questions']}" for m in missing) + "."]
    unknown = [m for m in metas if m.get("unknown_answers")]
    if unknown:
        lines += ["", "**Entities unknown to the model** (ranked last: " + UNKNOWN_POLICY + "): " +
                  "; ".join(f"{m['System']} on {m['TestSet']}: {m['unknown_answers']:,} of {m['answers']:,} answers "
                            f"({m['unknown_entities']:,} entities unknown)" for m in unknown) + "."]
    lines += ["", f"Intervals: BCa bootstrap, {repeats:,} seeded resamples of answers (micro) or questions (macro)."]
    return "\n".join(lines) + "\n"


def write_summary(table: pd.DataFrame, metas: list[dict], path: Path, repeats: int = 1000) -> None:
    with atomic_open(path) as fh:
        fh.write(summary_markdown(table, metas, repeats))
