"""Sub-commands of the later stages (evaluation, pools, analyses), registered with ``kgeval.cli.command``."""

from __future__ import annotations

import argparse

from .cli import command


# ---- annotation round trip (kgeval.annotation; protocol in annotations/PROTOCOL.md) ----------------------
@command("annotate-export", "write the annotation sheet (yes/no questions) of a batch of pooled triples")
def _annotate_export(p: argparse.ArgumentParser):
    p.add_argument("--kg", required=True, help="knowledge graph (kg.npz)")
    p.add_argument("--triples", required=True, help="head relation tail per line (or a pool file with header)")
    p.add_argument("--templates", default="annotations/templates.tsv")
    p.add_argument("--batch", required=True, help="batch name (letters, digits, '.', '_', '-')")
    p.add_argument("--out", required=True, help="the sheet to write (TSV)")

    def run(a):
        from .annotation import export_batch, load_templates, read_triple_list
        from .data.kg import KnowledgeGraph

        kg = KnowledgeGraph.load(a.kg)
        rows = export_batch(read_triple_list(a.triples, kg), kg, load_templates(a.templates), a.out, a.batch)
        print(f"{a.out}\tbatch {a.batch}\t{len(rows)} items")
        return 0

    return run


@command("annotate-disagreements", "write the adjudication sheet: the items two annotators disagree on")
def _annotate_disagreements(p: argparse.ArgumentParser):
    p.add_argument("--export", required=True, help="the exported sheet")
    p.add_argument("--a", required=True, help="annotator A's completed sheet")
    p.add_argument("--b", required=True, help="annotator B's completed sheet")
    p.add_argument("--out", required=True, help="the adjudication sheet to write")

    def run(a):
        from .annotation import export_disagreements

        items = export_disagreements(a.export, a.a, a.b, a.out)
        print(f"{a.out}\t{len(items)} disagreements" + (f": items {', '.join(items)}" if items else ""))
        return 0

    return run


@command("annotate-merge", "merge two annotators' and the adjudicator's sheets into judgments (Y/N) and a report")
def _annotate_merge(p: argparse.ArgumentParser):
    p.add_argument("--export", required=True, help="the exported sheet")
    p.add_argument("--a", required=True, help="annotator A's completed sheet")
    p.add_argument("--b", required=True, help="annotator B's completed sheet")
    p.add_argument("--adjudicator", default=None, help="the completed adjudication sheet (needed when A and B "
                                                       "disagree on any item)")
    p.add_argument("--out", required=True, help="judgments to write: head relation tail Y|N")
    p.add_argument("--report", required=True, help="report to write (.md: Markdown, else JSON)")
    p.add_argument("--into", default=None, help="existing judgments (head relation tail Y|N) to add these to")
    p.add_argument("--merged", default=None, help="with --into: the combined judgments to write (may be --into)")

    def run(a):
        from .annotation import merge

        if (a.into is None) != (a.merged is None):
            p.error("--into and --merged go together")
        rep = merge(a.export, a.a, a.b, a.adjudicator, a.out, a.report, into=a.into, merged=a.merged)
        kappa = "undefined" if rep["kappa"] is None else f"{rep['kappa']:.4f}"
        print(f"{a.out}\t{rep['items']} judgments ({rep['labels']['final']['Y']} Y)\t{rep['disagreements']} "
              f"adjudicated\tkappa {kappa}")
        if a.merged:
            print(f"{a.merged}\t{rep['into']['added']} added\t{rep['into']['already_present']} already present")
        return 0

    return run


# ---- re-analysis of metric tables (kgeval.analysis.reanalyze) -------------------------------------------
@command("reanalyze", "re-run every tau analysis and figure that needs only per-system metric tables")
def _reanalyze(p: argparse.ArgumentParser):
    p.add_argument("folder", help="folder laid out like the published result release (FB-Test-O/evaluation.csv …)")
    p.add_argument("out", help="output folder")
    p.add_argument("--names", default="", help="role=folder pairs overriding the published folder names, e.g. "
                   "original=Synth-Test-O,sample=Synth-Test-S,complete=Synth-Test-S-C,second=Synth2")

    def run(a):
        from .analysis.reanalyze import reanalyze

        names = dict(pair.split("=", 1) for pair in a.names.split(",") if pair)
        unknown = set(names) - {"original", "sample", "complete", "second"}
        if unknown:
            raise SystemExit(f"kgeval reanalyze: unknown role(s) {sorted(unknown)}")
        notes = reanalyze(a.folder, a.out, names)
        print(f"{a.out}: done" + (f"; {len(notes)} note(s) in notes.txt" if notes else ""))
        return 0

    return run


# ---- summary tables (kgeval.steps.tables) ----------------------------------------------------------------
@command("model-table", "print the README's model table (Markdown) from results/tables/model_quality.csv")
def _model_table(p: argparse.ArgumentParser):
    p.add_argument("table", nargs="?", default="results/tables/model_quality.csv", help="model_quality.csv")

    def run(a):
        import pandas as pd

        from .errors import InputError
        from .steps.tables import QUALITY_COLUMNS, model_table_markdown

        df = pd.read_csv(a.table)
        missing = [c for c in QUALITY_COLUMNS if c not in df.columns]
        if missing:
            raise InputError(a.table, 1, f"missing column(s) {', '.join(missing)}")
        df["epochs"] = df["epochs"].astype("Int64")
        print(model_table_markdown(df), end="")
        return 0

    return run


@command("docs-figures", "write the README's small copies of Figures 4, 5, 7 and 8 (docs/) from results/")
def _docs_figures(p: argparse.ArgumentParser):
    p.add_argument("--results", default="results", help="the workflow's results folder")
    p.add_argument("--out", default="docs", help="folder to write the PNGs to")
    p.add_argument("--max-width", type=int, default=900, help="largest width in pixels")

    def run(a):
        from .docs_figures import export_docs_figures

        for path in export_docs_figures(a.results, a.out, a.max_width):
            print(f"{path}\t{path.stat().st_size:,} bytes")
        return 0

    return run
