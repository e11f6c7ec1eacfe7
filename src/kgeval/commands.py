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


# ---- evaluating any system (kgeval.external) -----------------------------------------------------------------
@command("evaluate", "evaluate your own systems (TREC run files, PyKEEN folders, kgeval or LibKGE checkpoints) "
                     "on every test set of a dataset, as the study evaluates its models")
def _evaluate(p: argparse.ArgumentParser):
    p.add_argument("systems", nargs="+", metavar="SYSTEM",
                   help="a run file (TESTSET=PATH, or named <test set>.run[.gz]), a folder of such run files, a "
                        "PyKEEN save_to_directory folder, or a kgeval / LibKGE checkpoint (.pt)")
    p.add_argument("--dataset", required=True, help="the dataset, e.g. FB15k-237")
    p.add_argument("--out", required=True, help="output folder (evaluation.csv, placement.csv/.png, per_category.csv, "
                   "per_relation.csv, unjudged*.csv, annotation_sheet.tsv, summary.md/.tex, dumps/)")
    p.add_argument("--name", action="append", default=[], help="label of the SYSTEMs, in order (repeat; the rest keep their default: the run's "
                        "file or folder name, the PyKEEN folder's name, the checkpoint's model folder)")
    p.add_argument("--config", default="config/config.yaml",
                   help="the workflow config: its test sets of --dataset, trec measures and run depths")
    p.add_argument("--schema", default="config/schema.yaml")
    p.add_argument("--resources", default="resources", help="the data stage's folder (datasets/, testsets/)")
    p.add_argument("--testsets", default=None, help="comma-separated test sets (default: all of the dataset's)")
    p.add_argument("--allow-missing", action="store_true",
                   help="a question absent from a run scores zero (as trec_eval -c) instead of being an error")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples of the intervals")
    p.add_argument("--results", default="results", help="the workflow's results folder: the study's systems to "
                   "place the SYSTEMs among (results/metrics/<test set>/); placement is skipped without it")
    p.add_argument("--tukey-trials", type=int, default=None,
                   help="trials of the randomised Tukey HSD (default: the config's analysis.tukey_trials)")
    p.add_argument("--unjudged-k", type=int, default=10, help="top k checked against the judged pool")
    p.add_argument("--templates", default="annotations/templates.tsv",
                   help="question templates of the annotation sheet (derived from relation names without it)")
    p.add_argument("--batch", default="external", help="batch name of the annotation sheet")

    def run(a):
        from pathlib import Path

        from .config import load_config_file, run_depth, validate_config
        from .data.kg import KnowledgeGraph
        from .errors import InputError
        from .external.evaluate import evaluate_systems
        from .external.outputs import Options, study_files, write_outputs
        from .external.systems import parse_system

        config = validate_config(load_config_file(a.config), a.schema, models=False)
        res = Path(a.resources)
        names = [t for t, spec in config["test_sets"].items() if spec["dataset"] == a.dataset]
        if a.testsets:
            wanted = a.testsets.split(",")
            unknown = sorted(set(wanted) - set(names))
            if unknown:
                raise InputError(a.config, None, f"test set(s) {', '.join(unknown)} are not test sets of "
                                                 f"{a.dataset} ({', '.join(names)})")
            names = wanted
        if not names:
            raise InputError(a.config, None, f"no test set of dataset {a.dataset!r} "
                                             f"(datasets: {', '.join(config['datasets'])})")
        testsets = {t: {"tsv": str(res / "testsets" / f"{t}.tsv"),
                        "questions": str(res / "testsets" / f"{t}.questions.tsv")} for t in names}
        kg_path = res / "datasets" / a.dataset / "kg.npz"
        for path in [kg_path] + [Path(f) for files in testsets.values() for f in files.values()]:
            if not path.is_file():
                raise InputError(path, None, f"missing: run the data stage first (snakemake --cores all {path})")
        if len(a.name) > len(a.systems):
            p.error(f"{len(a.name)} --name for {len(a.systems)} SYSTEM arguments")
        systems = [parse_system(s, names, a.name[i] if i < len(a.name) else None) for i, s in enumerate(a.systems)]
        dup = {s.name for s in systems if [x.name for x in systems].count(s.name) > 1}
        if dup:
            p.error(f"two systems are named {sorted(dup)[0]!r}: label them with --name")
        if a.unjudged_k < 1:
            p.error("--unjudged-k must be at least 1")
        kinds = {config["test_sets"][t]["kind"]: t for t in names}
        options = Options(a.results, kinds.get("pooled", kinds.get("sample")), a.unjudged_k, a.templates, a.batch,
                          a.tukey_trials or config.get("analysis", {}).get("tukey_trials", 1000), repeats=a.bootstrap)
        # before any dump is written: a name clash with a study system or a broken results folder stops here
        files, note = study_files(options, names, [s.name for s in systems])
        kg = KnowledgeGraph.load(kg_path)
        measures = config["evaluation"]["trec_measures"]
        evaluations: dict = {}
        table, metas = evaluate_systems(systems, kg, testsets, a.out, measures,
                                        depth_of=lambda t: run_depth(config, t), allow_missing=a.allow_missing,
                                        repeats=a.bootstrap, evaluations=evaluations)
        print(note)
        written = write_outputs(a.out, kg, table, metas, evaluations, files, note, options)
        print(Path(a.out, "summary.md").read_text(encoding="utf-8"), end="")
        print(f"{Path(a.out, 'evaluation.csv')}\t{len(table)} rows")
        for path in written.values():
            print(path)
        return 0

    return run
