"""Sub-commands of the annotation round trip (protocol in annotations/PROTOCOL.md)."""

from __future__ import annotations

import argparse

from ..io import OutputStage, require_inputs
from .options import (
    batch_type,
    command,
)


# ---- annotation round trip (kgeval.pools.annotation; protocol in annotations/PROTOCOL.md) ----------------------
@command("annotate-export", "write the annotation sheet (yes/no questions) of a batch of pooled triples: one row "
                            "per triple with a question made from its relation's template and the entities' "
                            "names, for two annotators to fill in.",
         "kgeval annotate-export --kg kg.npz --triples pool.tsv --batch b1 --out b1.tsv")
def _annotate_export(p: argparse.ArgumentParser):
    p.add_argument("--kg", required=True, help="knowledge graph (kg.npz)")
    p.add_argument("--triples", required=True, help="head relation tail per line (or a pool file with header)")
    p.add_argument("--templates", default="annotations/templates.tsv", help="question templates per relation")
    p.add_argument("--batch", required=True, type=batch_type,
                   help="batch name (letters, digits, '.', '_', '-')")
    p.add_argument("--out", required=True, help="the sheet to write (TSV)")

    def run(a):
        from ..data.kg import KnowledgeGraph
        from ..pools.annotation import export_batch, load_templates, read_triple_list

        with OutputStage("annotate-export", inputs=[a.kg, a.triples, a.templates]) as stage:
            tmp = stage.path(a.out)
            kg = KnowledgeGraph.load(a.kg)
            rows = export_batch(read_triple_list(a.triples, kg), kg, load_templates(a.templates), tmp, a.batch)
        print(f"{a.out}\tbatch {a.batch}\t{len(rows)} items")
        return 0

    return run


def _annotator_sheets(p: argparse.ArgumentParser) -> None:
    """The sheets of one annotated batch: the export and the two annotators' copies."""
    p.add_argument("--export", required=True, help="the exported sheet")
    p.add_argument("--a", required=True, help="annotator A's completed sheet")
    p.add_argument("--b", required=True, help="annotator B's completed sheet")


@command("annotate-disagreements", "write the adjudication sheet: the items two annotators disagree on, with "
                                   "both answers alongside, for a third annotator to label.",
         "kgeval annotate-disagreements --export b1.tsv --a b1.A.tsv --b b1.B.tsv --out b1.adjudication.tsv")
def _annotate_disagreements(p: argparse.ArgumentParser):
    _annotator_sheets(p)
    p.add_argument("--out", required=True, help="the adjudication sheet to write")

    def run(a):
        from ..pools.annotation import export_disagreements

        with OutputStage("annotate-disagreements", inputs=[a.export, a.a, a.b]) as stage:
            items = export_disagreements(a.export, a.a, a.b, stage.path(a.out))
        print(f"{a.out}\t{len(items)} disagreements" + (f": items {', '.join(items)}" if items else ""))
        return 0

    return run


@command("annotate-merge", "merge two annotators' and the adjudicator's sheets into judgments (Y/N) and a report "
                           "with Cohen's kappa and every resolution; with --into/--merged, also add them to an "
                           "existing judgments file. Every file is validated and every output written to a "
                           "temporary file before any output is replaced.",
         "kgeval annotate-merge --export b1.tsv --a b1.A.tsv --b b1.B.tsv --adjudicator b1.C.tsv "
         "--out b1.labels.txt --report b1.report.md")
def _annotate_merge(p: argparse.ArgumentParser):
    _annotator_sheets(p)
    p.add_argument("--adjudicator", default=None, help="the completed adjudication sheet (needed when A and B "
                                                       "disagree on any item)")
    p.add_argument("--out", required=True, help="judgments to write: head relation tail Y|N")
    p.add_argument("--report", required=True, help="report to write (.md: Markdown, else JSON)")
    p.add_argument("--into", default=None, help="existing judgments (head relation tail Y|N) to add these to")
    p.add_argument("--merged", default=None, help="with --into: the combined judgments to write (may be --into)")

    def run(a):
        from ..pools.annotation import merge

        if (a.into is None) != (a.merged is None):
            p.error("--into and --merged go together")
        require_inputs([a.export, a.a, a.b, a.adjudicator, a.into])
        rep = merge(a.export, a.a, a.b, a.adjudicator, a.out, a.report, into=a.into, merged=a.merged)
        kappa = "undefined" if rep["kappa"] is None else f"{rep['kappa']:.4f}"
        print(f"{a.out}\t{rep['items']} judgments ({rep['labels']['final']['Y']} Y)\t{rep['disagreements']} "
              f"adjudicated\tkappa {kappa}")
        if a.merged:
            print(f"{a.merged}\t{rep['into']['added']} added\t{rep['into']['already_present']} already present")
        return 0

    return run


