"""Everything ``kgeval evaluate`` writes beside ``evaluation.csv``, from the evaluations it made:

* ``placement.csv`` / ``placement.png`` (``kgeval.external.placement``) against the reference
  ``kgeval.external.reference.resolve`` finds: the local results, else a shipped reference pack (or the authors'
  released tables, rank only);
* ``per_category.csv`` / ``per_relation.csv`` (``kgeval.external.breakdown``);
* ``unjudged_questions.csv`` / ``unjudged.csv`` / ``annotation_sheet.tsv`` on the pooled test set
  (``kgeval.external.unjudged``);
* pair decisions on the pooled test set (``kgeval.bounds.placement``): per bounded metric, the exact bounds of
  the outside system's difference to each study system under every labelling of the unjudged triples, as
  ``placement.csv`` columns and a ``summary.md`` paragraph; they need the study systems' score dumps
  (``<results>/scores/<test set>/<system>``), which a shipped reference pack does not hold;
* ``summary.md`` / ``summary.tex`` (``kgeval.external.report``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..bounds.placement import column_prefix, one_against_many, pair_columns
from ..cells import write_sheet_csv
from ..data.kg import KnowledgeGraph
from ..metrics.evaluate import qrels_at_depth
from ..pools.annotation import export_batch, load_templates
from . import breakdown, placement, reference, unjudged
from .report import write_summaries
from .sampled import SamplingOptions, sampled

log = logging.getLogger(__name__)


@dataclass
class Options:
    results: str | Path = "results"
    pooled: str | None = None  # the pooled (or sampled) test set of the dataset
    k: int = 10  # top-k of the pool-coverage check
    templates: str | Path = "annotations/templates.tsv"
    batch: str = "external"
    trials: int = 1000  # randomised Tukey HSD
    seed: int = 0
    repeats: int = 1000  # bootstrap resamples of evaluation.csv's intervals (stated in summary.md)
    reference: str = "auto"  # auto (results, else a shipped pack), a folder, or authors:DIR
    bounds_metrics: tuple[str, ...] = ("P", "Success", "RR", "DCG", "RBP")  # the config's bounds.metrics
    bounds_k: int = 10  # the config's bounds.k
    rbp_p: float = 0.8  # the config's bounds.rbp_p
    sampling: SamplingOptions = field(default_factory=SamplingOptions)  # sampled judgments (``sampled``)


def study_files(options: Options, testsets: list[str], names: list[str]) -> tuple[reference.Reference | None, str]:
    """The reference to place among (``reference.resolve``: local results, else a shipped pack, or the authors'
    tables; None when there is none) after checking that no evaluated system takes a study system's name, and the
    summary's sentence saying which reference was used. Run before evaluating, so that a name clash or a broken
    results folder stops the command before the dumps are written."""
    ref = reference.resolve(options.reference, options.results, testsets, names=names)
    if ref is None:
        return None, reference.missing_note(options.reference, options.results, testsets)
    missing = [t for t in testsets if t not in ref.files]
    note = ref.note + (f" (No tables for {', '.join(missing)}.)" if missing else "")
    return ref, note


def write_outputs(out: str | Path, kg: KnowledgeGraph, table: pd.DataFrame, metas: list[dict],
                  evaluations: dict, ref: reference.Reference | None, note: str,
                  options: Options) -> dict[str, Path]:
    """Write the files of the module docstring; returns them by name (files not written are absent)."""
    out = Path(out)
    evals = {key: ev for key, (ev, _) in evaluations.items()}
    written: dict[str, Path] = {}
    placed, study = pd.DataFrame(), {}
    if ref is not None and ref.kind == "authors":
        placed = reference.rank_only(evals, ref.tables)
        study = dict(ref.tables)
    elif ref is not None:
        # each phase below takes from seconds to minutes on a loaded 2-core machine; a line per phase says where
        # the command is (issue 52: evaluate printed nothing for minutes after the metrics)
        log.info("placing among the study's systems (paired t-tests, Tukey HSD: %s trials)", options.trials)
        placed = placement.placement_table(evals, ref.files, trials=options.trials, seed=options.seed)
        study = {t: placement.study_systems(f) for t, f in ref.files.items()}
    extra, tex_notes = [note], []
    if len(placed) and options.pooled is not None and ref is not None and ref.kind != "authors":
        log.info("pair decisions on %s: exact bounds%s", options.pooled,
                 " and the sampling plan" if options.sampling.enabled else "")
        placed, text = _pair_decisions(placed, evaluations, ref, options, out, kg, written)
        extra.append(text)
        tex_notes.append(text)
    if len(placed):
        write_sheet_csv(placed, out / "placement.csv")
        placement.placement_figure(placed, out / "placement.png")
        written.update(placement=out / "placement.csv", placement_png=out / "placement.png")
    cats = breakdown.category_table(evals)
    if len(cats):
        write_sheet_csv(cats, out / "per_category.csv")
        written["per_category"] = out / "per_category.csv"
    write_sheet_csv(breakdown.relation_table(evals, kg), out / "per_relation.csv")
    written["per_relation"] = out / "per_relation.csv"

    if options.pooled is not None:
        log.info("pool coverage of the top %s on %s", options.k, options.pooled)
        extra.append(_pool_coverage(out, kg, evaluations, options, written))
    write_summaries(out, table, metas, study, placed, extra, options.repeats, options.trials,
                    significance=ref is None or ref.kind != "authors", tex_notes=[t for t in tex_notes if t])
    written.update(summary=out / "summary.md", summary_tex=out / "summary.tex")
    return written


def _pair_decisions(placed: pd.DataFrame, evaluations: dict, ref: reference.Reference, options: Options,
                    out: Path, kg: KnowledgeGraph, written: dict[str, Path]) -> tuple[pd.DataFrame, str]:
    """``placed`` with the pair columns of every evaluated system on the pooled test set (the exact bounds and
    the sampled judgments' budgets and estimates), and the summary's paragraph (or the reason there are none)."""
    t = options.pooled
    mine = {name: dump for (name, tt), (_, dump) in evaluations.items() if tt == t}
    opponents = list(dict.fromkeys(placed.loc[placed["TestSet"] == t, "Opponent"].astype(str)))
    if not mine or not opponents:
        return placed, ""
    found = reference.study_lists(ref, t, opponents)
    if isinstance(found, str):
        return placed, found
    study_k, lists = found
    k = options.bounds_k
    frames, parts, samples, sample_parts = [], [], [], []
    for name, dump in mine.items():
        qids = np.asarray(dump.questions.qid).astype(str)
        short = ([f"the study systems' ({study_k})"] if study_k < k else []) + ([name] if dump.k < k else [])
        if short or any(not np.isin(qids, f.index).all() for f in lists.values()):
            why = (f"the runs of {', '.join(short)} are shorter than bounds.k = {k}" if short
                   else "the study systems' lists rank other questions")
            parts.append(f"{name}: not computed ({why})")
            continue
        # the study's lists in the evaluated system's question order
        entity = reference.in_order(lists, list(lists), qids, k)
        bounds = one_against_many(dump.run_entity[:, :k].astype(np.int64), entity, qrels_at_depth(dump),
                                  dump.questions.num_entities, tuple(options.bounds_metrics), options.rbp_p)
        frames.append(pair_columns(name, t, opponents, bounds))
        if options.sampling.enabled:
            rows, text = sampled(out, kg, name, dump, entity, opponents, k, options.rbp_p, options.sampling,
                                 _templates(options), len(mine) > 1, written)
            samples.append(rows.assign(TestSet=t))
            sample_parts.append(text)
        parts.append(f"{name}: " + ", ".join(f"{p} decides {int(d.sum())} of {len(d)}"
                                             for p, (_, _, d) in bounds.items()))
    if frames:
        placed = placed.merge(pd.concat(frames, ignore_index=True), on=["System", "TestSet", "Opponent"],
                              how="left")
    samples = [f for f in samples if len(f)]
    if samples:
        placed = placed.merge(pd.concat(samples, ignore_index=True), on=["System", "TestSet", "Opponent"], how="left")
    cols = ", ".join(f"{column_prefix(b, k)}_delta_lo / _delta_hi / _decided" for b in options.bounds_metrics[:1])
    sample_text = ""
    if sample_parts:
        s = options.sampling
        sample_text = (f" Sampled judgments on {t} ({s.design} design under the {s.prior} prior, "
                       f"{s.floor_share:.0%} of the budget drawn uniformly as the audit of the prior; placement.csv's "
                       f"{s.metric}@{k}_sample_* columns; docs/guide/sampling.md): " + "; ".join(sample_parts) + ".")
    return placed, (f"Pair decisions on {t} (published judgments, top {k}; placement.csv's {cols} and the other "
                    "bounded metrics' columns): how many comparisons with the study systems the judgments decide "
                    "under every labelling of the unjudged triples (Δ = the system minus the study system). "
                    + "; ".join(parts) + "." + sample_text)


def _templates(options: Options) -> dict:
    return load_templates(options.templates) if Path(options.templates).is_file() else {}


def _pool_coverage(out: Path, kg: KnowledgeGraph, evaluations: dict, options: Options,
                   written: dict[str, Path]) -> str:
    """Write the unjudged files and the annotation sheet; return the summary's paragraph."""
    per_q, per_t = [], []
    for (name, t), (_, dump) in evaluations.items():
        if t != options.pooled:
            continue
        q, tr = unjudged.unjudged(dump, kg, options.k)
        per_q.append(q.assign(System=name, TestSet=t))
        per_t.append(tr.assign(System=name, TestSet=t))
    if not per_q:
        return f"Pool coverage: no system was evaluated on {options.pooled}."
    questions = pd.concat(per_q, ignore_index=True)
    triples = pd.concat(per_t, ignore_index=True)
    first = ["System", "TestSet"]
    write_sheet_csv(questions[first + [c for c in questions.columns if c not in first]], out / "unjudged_questions.csv")
    write_sheet_csv(triples[first + [c for c in triples.columns if c not in first]], out / "unjudged.csv")
    written.update(unjudged_questions=out / "unjudged_questions.csv", unjudged=out / "unjudged.csv")
    shares = questions.groupby("System", sort=False)["unjudged_share"].mean()
    text = (f"Pool coverage on {options.pooled} (top {options.k}, unjudged_questions.csv / unjudged.csv): "
            + ", ".join(f"{s} {v:.1%} of its top {options.k} unjudged" for s, v in shares.items()) + ".")
    ids = unjudged.sheet_triples(triples, kg)
    if not len(ids):
        return text + " Nothing to annotate: no annotation sheet written."
    templates = load_templates(options.templates) if Path(options.templates).is_file() else {}
    if not templates:
        log.info("%s not found: questions use templates derived from the relation names", options.templates)
    export_batch(ids, kg, templates, out / "annotation_sheet.tsv", options.batch)
    written["annotation_sheet"] = out / "annotation_sheet.tsv"
    facts = int(triples["known_fact"].sum())
    return (text + f" annotation_sheet.tsv (batch {options.batch}) holds the {len(ids):,} distinct unjudged "
            f"triples for annotation (kgeval annotate-export's format: two annotators fill in copies, then kgeval "
            f"annotate-merge)" + (f"; {facts:,} unjudged entries are already facts of {kg.name} and are not "
                                  "on it" if facts else "") + ".")


__all__ = ["Options", "study_files", "write_outputs"]
