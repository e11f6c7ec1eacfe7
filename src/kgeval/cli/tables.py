"""Sub-commands on the workflow's and the authors' tables: reanalyze, model-table, docs-figures."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io import OutputStage
from .options import (
    SchemaNumber,
    command,
    name_type,
    out_option,
    resolve_out,
)


# ---- re-analysis of metric tables (kgeval.analysis.reanalyze) -------------------------------------------
@command("reanalyze", "re-run every tau analysis and figure that needs only per-system metric tables: Figures "
                      "3-8 and Tables 3-4 of the paper from a folder laid out like the authors' result release "
                      "(or the workflow's own tables), or from the release itself with --release (fetched from "
                      "its pinned URL or $KGEVAL_MIRROR, SHA-256 checked, kept in OUT/release). What cannot be "
                      "computed is listed in notes.txt.",
         "kgeval reanalyze --release --out reanalysis/ --figure6-system HittER")
def _reanalyze(p: argparse.ArgumentParser):
    p.add_argument("folder", nargs="?", default=None,
                   help="folder laid out like the published result release (FB-Test-O/evaluation.csv …); "
                        "not with --release")
    out_option(p)
    p.add_argument("--release", action="store_true",
                   help="fetch the authors' result tables pinned in --manifest into OUT/release and re-analyse them")
    p.add_argument("--manifest", default=None, help="with --release: the manifest pinning the release's tables "
                   "(URL, SHA-256, size; default: config/resources.tsv)")
    p.add_argument("--mirror", default=None, help="with --release: mirror folder (default: $KGEVAL_MIRROR)")
    p.add_argument("--names", default="", help="role=folder pairs overriding the published folder names, e.g. "
                   "original=Synth-Test-O,sample=Synth-Test-S,complete=Synth-Test-S-C,second=Synth2 "
                   "(default: the published names)")
    p.add_argument("--figure6-system", type=name_type, default="HittER",
                   help="the system whose per-relation micro MRR Figure 6 draws, as the paper")

    def run(a):
        from ..analysis.reanalyze import ROLES, fetch_release
        from ..analysis.steps import reanalyze_tables

        if a.release and a.folder is not None:
            p.error(f"--release fetches the tables it reads: give no FOLDER ({a.folder!r}), the output as --out")
        if not a.release and a.folder is None:
            p.error("give the FOLDER of tables to re-analyse, or --release")
        if not a.release and (a.manifest or a.mirror):
            p.error("--manifest and --mirror go with --release")
        manifest = a.manifest or "config/resources.tsv"
        pairs = [pair.partition("=") for pair in a.names.split(",") if pair]
        bad = [f"{k}{s}{v}" for k, s, v in pairs if not s or k not in ROLES]
        if bad:
            p.error(f"--names: {bad[0]!r} is not role=folder with a role of {', '.join(ROLES)}")
        try:
            names = {k: name_type(v) for k, _, v in pairs}
        except argparse.ArgumentTypeError as exc:
            p.error(f"--names: {exc}")
        out = resolve_out(p, a)
        with OutputStage("reanalyze", inputs=[manifest] if a.release else [a.folder], folder=out) as stage:
            folder, shown = a.folder, None
            if a.release:  # kept in OUT/release: the verified tables beside what was computed from them
                folder = fetch_release(manifest, stage.root / "release", mirror=a.mirror)
                shown = Path(out) / "release"
            notes = reanalyze_tables(folder, stage.root, names, figure6_system=a.figure6_system, shown_as=shown)
        print(f"{stage.folder}: done" + (f"; {len(notes)} note(s) in notes.txt" if notes else ""))
        return 0

    return run


# ---- summary tables (kgeval.tables.steps) ----------------------------------------------------------------
@command("model-table", "print the README's model table (Markdown) from results/tables/model_quality.csv.",
         "kgeval model-table results/tables/model_quality.csv > table.md")
def _model_table(p: argparse.ArgumentParser):
    p.add_argument("table", nargs="?", default="results/tables/model_quality.csv", help="model_quality.csv")

    def run(a):
        import pandas as pd

        from ..errors import InputError
        from ..limits import read_csv as bounded_read_csv
        from ..tables.steps import QUALITY_COLUMNS, model_table_markdown

        try:
            df = bounded_read_csv(a.table)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise InputError(a.table, None, f"not a readable CSV table: {exc}") from None
        missing = [c for c in QUALITY_COLUMNS if c not in df.columns]
        if missing:
            raise InputError(a.table, 1, f"missing column(s) {', '.join(missing)}")
        df["epochs"] = df["epochs"].astype("Int64")
        print(model_table_markdown(df), end="")
        return 0

    return run


@command("docs-figures", "write the README's small copies of Figures 4, 5, 7 and 8 (PNG) from the workflow's "
                         "results; only these PNGs in --out are replaced.",
         "kgeval docs-figures --results results --out docs --max-width 900")
def _docs_figures(p: argparse.ArgumentParser):
    p.add_argument("--results", default="results", help="the workflow's results folder")
    p.add_argument("--out", default="docs", help="folder to write the PNGs to")
    p.add_argument("--max-width", type=SchemaNumber("arguments", "max_width"), default=900, help="largest width in pixels")

    def run(a):
        from ..docs_figures import DOCS_FIGURES, export_docs_figures

        with OutputStage("docs-figures", input_folders=[a.results], folder=a.out,
                         replaces=[f"{name}.png" for name in DOCS_FIGURES]) as stage:
            written = export_docs_figures(a.results, a.out, a.max_width, target=stage.path)
        for path in written:
            print(f"{path}\t{path.stat().st_size:,} bytes")
        return 0

    return run


