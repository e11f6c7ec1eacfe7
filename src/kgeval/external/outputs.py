"""Everything ``kgeval evaluate`` writes beside ``evaluation.csv``, from the evaluations it made:

* ``placement.csv`` / ``placement.png`` (``kgeval.external.placement``) against the reference
  ``kgeval.external.reference.resolve`` finds: the local results, else a shipped reference pack (or the authors'
  released tables, rank only);
* ``per_category.csv`` / ``per_relation.csv`` (``kgeval.external.breakdown``);
* ``unjudged_questions.csv`` / ``unjudged.csv`` / ``annotation_sheet.tsv`` on the pooled test set
  (``kgeval.external.unjudged``);
* ``summary.md`` / ``summary.tex`` (``kgeval.external.report``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..data.kg import KnowledgeGraph
from ..io import write_csv
from ..pools.annotation import export_batch, load_templates
from . import breakdown, placement, reference, unjudged
from .report import write_summaries

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


def study_files(options: Options, testsets: list[str], names: list[str]) -> tuple[reference.Reference | None, str]:
    """The reference to place among (``reference.resolve``: local results, else a shipped pack, or the authors'
    tables; None when there is none) after checking that no evaluated system takes a study system's name, and the
    summary's sentence saying which reference was used. Run before evaluating, so that a name clash or a broken
    results folder stops the command before the dumps are written."""
    ref = reference.resolve(options.reference, options.results, testsets)
    if ref is None:
        return None, reference.missing_note(options.reference, options.results, testsets)
    if ref.kind == "authors":
        for t, table in ref.tables.items():
            clash = sorted(set(names) & set(table["System"].astype(str)))
            if clash:
                from ..errors import InputError

                raise InputError(ref.files[t]["evaluation"], None, f"system name {clash[0]!r} is also a released "
                                                                    "system here; label yours with --name")
    else:
        placement.check_names(ref.files, names)
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
        placed = placement.placement_table(evals, ref.files, trials=options.trials, seed=options.seed)
        study = {t: placement.study_systems(f) for t, f in ref.files.items()}
    if len(placed):
        write_csv(placed, out / "placement.csv")
        placement.placement_figure(placed, out / "placement.png")
        written.update(placement=out / "placement.csv", placement_png=out / "placement.png")
    cats = breakdown.category_table(evals)
    if len(cats):
        write_csv(cats, out / "per_category.csv")
        written["per_category"] = out / "per_category.csv"
    write_csv(breakdown.relation_table(evals, kg), out / "per_relation.csv")
    written["per_relation"] = out / "per_relation.csv"

    extra = [note]
    if options.pooled is not None:
        extra.append(_pool_coverage(out, kg, evaluations, options, written))
    write_summaries(out, table, metas, study, placed, extra, options.repeats, options.trials,
                    significance=ref is None or ref.kind != "authors")
    written.update(summary=out / "summary.md", summary_tex=out / "summary.tex")
    return written


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
    write_csv(questions[first + [c for c in questions.columns if c not in first]], out / "unjudged_questions.csv")
    write_csv(triples[first + [c for c in triples.columns if c not in first]], out / "unjudged.csv")
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
