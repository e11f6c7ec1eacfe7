"""The ``kgeval`` command line, for use outside Snakemake.

Each sub-command calls the same package function as the corresponding workflow rule.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .errors import KgevalError
from .progress import enable_bars
from .workflow import setup_logging

Runner = Callable[[argparse.Namespace], int]
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], Runner], str]] = {}


def command(name: str, help: str):
    """Register a sub-command: the decorated function adds its arguments to the parser and returns the
    function that runs it."""

    def deco(add_args: Callable[[argparse.ArgumentParser], Runner]):
        COMMANDS[name] = (add_args, help)
        return add_args

    return deco


def _synth(p: argparse.ArgumentParser):
    p.add_argument("out", help="output folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--entities", type=int, default=250)
    p.add_argument("--relations", type=int, default=16)
    p.add_argument("--no-annotations", action="store_true", help="no sampled test set and judged pools")

    def run(a):
        from .data.synth import SynthSpec, synthesize

        paths = synthesize(a.out, a.seed, SynthSpec(num_entities=a.entities, num_relations=a.relations,
                                                    annotations=not a.no_annotations))
        for role, path in paths.items():
            print(f"{role}\t{path}")
        return 0

    return run


def _fetch(p: argparse.ArgumentParser):
    p.add_argument("--manifest", default="config/resources.tsv")
    p.add_argument("--out", default="resources/downloads")
    p.add_argument("--mirror", default=None, help="mirror folder (default: $KGEVAL_MIRROR)")
    p.add_argument("--prefer-url", action="store_true", help="try the URL before the mirror")

    def run(a):
        from pathlib import Path

        from .data.download import fetch, resolve_mirror
        from .data.manifest import read_manifest
        from .progress import Progress

        mirror = resolve_mirror(a.mirror)
        manifest = read_manifest(a.manifest)
        sizes = [res.size for res in manifest.values()]
        # bytes when the manifest pins every size; a failed source's partial bytes count too (rare)
        total = sum(sizes) if all(size >= 0 for size in sizes) else None
        with Progress(total, "fetch", unit="B") as progress:
            for path, res in manifest.items():
                source = fetch(res, Path(a.out) / path, mirror=mirror, prefer_mirror=not a.prefer_url,
                               progress=progress.update)
                progress.write(f"{path}\t{source}\t{res.sha256}")
        return 0

    return run


def _validate(p: argparse.ArgumentParser):
    p.add_argument("config", help="a config YAML file")
    p.add_argument("--schema", default="config/schema.yaml")

    def run(a):
        from .config import load_config_file, validate_config

        validate_config(load_config_file(a.config), a.schema)
        print(f"{a.config}: valid")
        return 0

    return run


def _build_kg(p: argparse.ArgumentParser):
    p.add_argument("folder", help="folder with train.txt, valid.txt, test.txt (and optional side files)")
    p.add_argument("out", help="the knowledge graph file to write (kg.npz)")
    p.add_argument("--name", default=None, help="dataset name (default: the folder's name)")
    p.add_argument("--names", default=None, help="entity id to name file (mid2name.txt)")
    p.add_argument("--categories", default=None, help="folder with one_to_one.txt ... many_to_many.txt")

    def run(a):
        from pathlib import Path

        from .data.kg import build_kg

        f = Path(a.folder)
        kg = build_kg(a.name or f.resolve().name, f / "train.txt", f / "valid.txt", f / "test.txt",
                      names=a.names, categories_dir=a.categories)
        kg.save(a.out)
        print(f"{a.out}\t{kg.num_entities} entities\t{kg.num_relations} relations\t{kg.fingerprint()}")
        return 0

    return run


BUILTIN = {
    "build-kg": (_build_kg, "build a knowledge-graph file (kg.npz) from split files"),
    "synth": (_synth, "generate a seeded synthetic knowledge graph with planted structure"),
    "fetch": (_fetch, "download every manifest file (URL or mirror), verifying SHA-256"),
    "validate-config": (_validate, "check a config file against the schema and its cross-references"),
}



# ---- annotation round trip (kgeval.pools.annotation; protocol in annotations/PROTOCOL.md) ----------------------
@command("annotate-export", "write the annotation sheet (yes/no questions) of a batch of pooled triples")
def _annotate_export(p: argparse.ArgumentParser):
    p.add_argument("--kg", required=True, help="knowledge graph (kg.npz)")
    p.add_argument("--triples", required=True, help="head relation tail per line (or a pool file with header)")
    p.add_argument("--templates", default="annotations/templates.tsv")
    p.add_argument("--batch", required=True, help="batch name (letters, digits, '.', '_', '-')")
    p.add_argument("--out", required=True, help="the sheet to write (TSV)")

    def run(a):
        from .data.kg import KnowledgeGraph
        from .pools.annotation import export_batch, load_templates, read_triple_list

        kg = KnowledgeGraph.load(a.kg)
        rows = export_batch(read_triple_list(a.triples, kg), kg, load_templates(a.templates), a.out, a.batch)
        print(f"{a.out}\tbatch {a.batch}\t{len(rows)} items")
        return 0

    return run


def _annotator_sheets(p: argparse.ArgumentParser) -> None:
    """The sheets of one annotated batch: the export and the two annotators' copies."""
    p.add_argument("--export", required=True, help="the exported sheet")
    p.add_argument("--a", required=True, help="annotator A's completed sheet")
    p.add_argument("--b", required=True, help="annotator B's completed sheet")


@command("annotate-disagreements", "write the adjudication sheet: the items two annotators disagree on")
def _annotate_disagreements(p: argparse.ArgumentParser):
    _annotator_sheets(p)
    p.add_argument("--out", required=True, help="the adjudication sheet to write")

    def run(a):
        from .pools.annotation import export_disagreements

        items = export_disagreements(a.export, a.a, a.b, a.out)
        print(f"{a.out}\t{len(items)} disagreements" + (f": items {', '.join(items)}" if items else ""))
        return 0

    return run


@command("annotate-merge", "merge two annotators' and the adjudicator's sheets into judgments (Y/N) and a report")
def _annotate_merge(p: argparse.ArgumentParser):
    _annotator_sheets(p)
    p.add_argument("--adjudicator", default=None, help="the completed adjudication sheet (needed when A and B "
                                                       "disagree on any item)")
    p.add_argument("--out", required=True, help="judgments to write: head relation tail Y|N")
    p.add_argument("--report", required=True, help="report to write (.md: Markdown, else JSON)")
    p.add_argument("--into", default=None, help="existing judgments (head relation tail Y|N) to add these to")
    p.add_argument("--merged", default=None, help="with --into: the combined judgments to write (may be --into)")

    def run(a):
        from .pools.annotation import merge

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
    p.add_argument("--figure6-system", default="HittER",
                   help="the system whose per-relation micro MRR Figure 6 draws (default HittER, as the paper)")

    def run(a):
        from .analysis.reanalyze import reanalyze

        names = dict(pair.split("=", 1) for pair in a.names.split(",") if pair)
        unknown = set(names) - {"original", "sample", "complete", "second"}
        if unknown:
            raise SystemExit(f"kgeval reanalyze: unknown role(s) {sorted(unknown)}")
        notes = reanalyze(a.folder, a.out, names, figure6_system=a.figure6_system)
        print(f"{a.out}: done" + (f"; {len(notes)} note(s) in notes.txt" if notes else ""))
        return 0

    return run


# ---- summary tables (kgeval.tables.steps) ----------------------------------------------------------------
@command("model-table", "print the README's model table (Markdown) from results/tables/model_quality.csv")
def _model_table(p: argparse.ArgumentParser):
    p.add_argument("table", nargs="?", default="results/tables/model_quality.csv", help="model_quality.csv")

    def run(a):
        import pandas as pd

        from .errors import InputError
        from .tables.steps import QUALITY_COLUMNS, model_table_markdown

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kgeval", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also show the INFO lines of third-party libraries (fontTools, matplotlib, …)")
    sub = parser.add_subparsers(dest="cmd", required=True)
    runners = {}
    for name, (add, help_) in {**BUILTIN, **COMMANDS}.items():
        runners[name] = add(sub.add_parser(name, help=help_))
    args = parser.parse_args(argv)
    setup_logging(verbose=args.verbose)
    enable_bars()  # on a terminal; redirected to a file, long commands log plain progress lines
    try:
        return int(runners[args.cmd](args) or 0)
    except KgevalError as exc:
        print(f"kgeval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
