"""The ``kgeval`` command line, for use outside Snakemake.

Each sub-command calls the same package function as the corresponding workflow rule. Every command checks its
options and inputs before it starts, writes its outputs through one staging step (temporary files moved into place
together at the end, never over an input, never outside its output folder) and reports a bad input, a missing file
or a failed write as one line, ``kgeval: error: <path>: <problem>``, with a non-zero exit status.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path

from . import __version__
from .errors import KgevalError
from .io import OutputStage, require_inputs
from .progress import enable_bars
from .workflow import setup_logging

Runner = Callable[[argparse.Namespace], int]
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], Runner], str, str]] = {}


def command(name: str, help: str, example: str):
    """Register a sub-command: the decorated function adds its arguments to the parser and returns the
    function that runs it. ``help`` is the one-paragraph description (its first sentence is the summary in
    ``kgeval --help``), ``example`` the epilog's example command."""

    def deco(add_args: Callable[[argparse.ArgumentParser], Runner]):
        COMMANDS[name] = (add_args, help, example)
        return add_args

    return deco


# ---- the parser: one-line errors, defaults and bounds in every option's help ---------------------------------
class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``kgeval: error: …``), as every other error of kgeval."""

    def error(self, message: str):
        self.exit(2, f"kgeval: error: {self.prog}: {message} (see {self.prog} --help)\n")


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's and epilog's line breaks; adds each option's bounds and default to its help."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        describe = getattr(action.type, "describe", None)
        if describe is not None:
            text += f" [{describe()}]"
        default = action.default
        if isinstance(action, argparse._StoreTrueAction):
            return text + " (default: off)"
        if ("default" not in text and not action.required and default not in (None, argparse.SUPPRESS, [])
                and not isinstance(action, (argparse._HelpAction, argparse._VersionAction))
                and (action.option_strings or action.nargs in ("?", "*"))):
            text += " (default: %(default)s)"
        return text


class Number:
    """An argparse type: an int (or float) within bounds, stated in the option's help."""

    def __init__(self, kind: type = int, lo: float | None = None, hi: float | None = None):
        self.kind, self._lo, self._hi = kind, lo, hi

    def bounds(self) -> tuple[float | None, float | None]:
        return self._lo, self._hi

    def describe(self) -> str:
        lo, hi = self.bounds()
        what = "an integer" if self.kind is int else "a number"
        if lo is not None and hi is not None:
            return f"{what} from {lo:,} to {hi:,}"
        return f"{what} ≥ {lo:,}" if lo is not None else f"{what} ≤ {hi:,}" if hi is not None else what

    def __call__(self, text: str):
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.describe()}") from None
        lo, hi = self.bounds()
        if not math.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{text} is out of range: expected {self.describe()}")
        return value


def schema_file() -> Path:
    """config/schema.yaml of the working folder, else the installed one (the checkout's, or the wheel's copy)."""
    from .home import default_file

    return default_file("config/schema.yaml")


class SchemaNumber(Number):
    """A number bounded by a key of config/schema.yaml (``minimum``/``maximum``), so that an option and the config
    key it stands for accept the same values. The schema is read when the option is used or shown."""

    def __init__(self, *keys: str):
        super().__init__(int)
        self.keys = keys

    def bounds(self) -> tuple[float | None, float | None]:
        from .config import schema_key

        spec = schema_key(schema_file(), self.keys)
        return spec.get("minimum"), spec.get("maximum")


def name_type(text: str) -> str:
    """A label that also becomes a file or folder name: no separators, no ``.``/``..``, nothing empty or
    invisible."""
    import os

    bad = next((c for c in text if ord(c) < 32 or ord(c) == 127), None)
    if not text.strip():
        raise argparse.ArgumentTypeError("a name may not be empty")
    if bad is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: a name may not hold control characters")
    if "/" in text or "\\" in text or (os.altsep and os.altsep in text) or text in (".", ".."):
        raise argparse.ArgumentTypeError(f"{text!r}: a name is a label, not a path (no '/', '\\', '.' or '..')")
    return text


def batch_type(text: str) -> str:
    from .pools.annotation.formats import _BATCH_RE

    if not _BATCH_RE.match(text):
        raise argparse.ArgumentTypeError(f"{text!r}: a batch name is letters, digits, '.', '_' and '-', starting "
                                         "with a letter or digit")
    return text


OUT_FOLDER = "output folder (what the command wrote there before is replaced; see 'outputs:' in kgeval --help)"


def out_option(p: argparse.ArgumentParser, help: str = OUT_FOLDER) -> None:
    """``--out``, and the positional form it replaces (deprecated, resolved by :func:`resolve_out`)."""
    p.add_argument("legacy_out", nargs="?", default=None, metavar="OUT", help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help=help)


def resolve_out(p: argparse.ArgumentParser, a: argparse.Namespace) -> str:
    if a.legacy_out is not None:
        if a.out is not None and a.out != a.legacy_out:
            p.error(f"two output folders: {a.legacy_out} and --out {a.out}")
        print(f"kgeval: warning: the positional output folder is deprecated; write --out {a.legacy_out}",
              file=sys.stderr)
        return a.legacy_out
    if a.out is None:
        p.error("the output folder is required: --out FOLDER")
    return a.out


# ---- data (kgeval.data) ---------------------------------------------------------------------------------------
@command("build-kg", "build a knowledge-graph file (kg.npz) from split files. Reads train.txt, valid.txt and "
                     "test.txt of FOLDER (tab-separated head, relation, tail), with optional entity names and "
                     "relation categories, and writes the compressed graph every later step loads.",
         "kgeval build-kg data/FB15k-237 --out FB15k-237.kg.npz --names data/mid2name.txt")
def _build_kg(p: argparse.ArgumentParser):
    p.add_argument("folder", help="folder with train.txt, valid.txt, test.txt (and optional side files)")
    out_option(p, "the knowledge graph file to write (kg.npz)")
    p.add_argument("--name", type=name_type, default=None, help="dataset name (default: the folder's name)")
    p.add_argument("--names", default=None, help="entity id to name file (mid2name.txt)")
    p.add_argument("--categories", default=None, help="folder with one_to_one.txt ... many_to_many.txt")

    def run(a):
        from .data.kg import build_kg

        out = resolve_out(p, a)
        f = Path(a.folder)
        splits = [f / "train.txt", f / "valid.txt", f / "test.txt"]
        with OutputStage("build-kg", inputs=[*splits, a.names, a.categories]) as stage:
            tmp = stage.path(out)
            kg = build_kg(a.name or f.resolve().name, *splits, names=a.names, categories_dir=a.categories)
            kg.save(tmp)
        print(f"{out}\t{kg.num_entities} entities\t{kg.num_relations} relations\t{kg.fingerprint()}")
        return 0

    return run


@command("synth", "generate a seeded synthetic knowledge graph with planted structure. Writes the files of a "
                  "published dataset (splits, names, relation categories and, unless --no-annotations, a sampled "
                  "test set with judged pools) into --out; the sizes obey the bounds of config/schema.yaml's "
                  "synth block.",
         "kgeval synth --out data/Synth --entities 500 --relations 24 --seed 1")
def _synth(p: argparse.ArgumentParser):
    out_option(p)
    p.add_argument("--seed", type=SchemaNumber("synth", "seed"), default=0, help="random seed")
    p.add_argument("--entities", type=SchemaNumber("synth", "num_entities"), default=250, help="number of entities")
    p.add_argument("--relations", type=SchemaNumber("synth", "num_relations"), default=16,
                   help="number of relations")
    p.add_argument("--no-annotations", action="store_true", help="no sampled test set and judged pools")

    def run(a):
        from .data.synth import SynthSpec, check_size, synthesize

        spec = SynthSpec(num_entities=a.entities, num_relations=a.relations, annotations=not a.no_annotations)
        check_size(spec)
        with OutputStage("synth", folder=resolve_out(p, a)) as stage:
            paths = synthesize(stage.root, a.seed, spec)
        for role, path in paths.items():
            print(f"{role}\t{stage.final(path)}")
        return 0

    return run


@command("fetch", "download every file of the manifest, from its pinned URL or a mirror folder, verifying each "
                  "SHA-256. Every file is fetched again; the files replace those in --out together, once all are "
                  "verified.",
         "KGEVAL_MIRROR=/data/mirror kgeval fetch --out resources/downloads")
def _fetch(p: argparse.ArgumentParser):
    p.add_argument("--manifest", default="config/resources.tsv", help="the manifest (mirror_path, url, sha256, …)")
    p.add_argument("--out", default="resources/downloads", help="folder to download into")
    p.add_argument("--mirror", default=None, help="mirror folder (default: $KGEVAL_MIRROR)")
    p.add_argument("--prefer-url", action="store_true", help="try the URL before the mirror")

    def run(a):
        from .data.download import fetch, resolve_mirror
        from .data.manifest import read_manifest
        from .progress import Progress

        with OutputStage("fetch", inputs=[a.manifest], folder=a.out) as stage:
            # a folder named on the command line beats $KGEVAL_MIRROR (which beats the config key)
            mirror = Path(a.mirror).expanduser() if a.mirror else resolve_mirror(None)
            manifest = read_manifest(a.manifest)
            sizes = [res.size for res in manifest.values()]
            # bytes when the manifest pins every size; a failed source's partial bytes count too (rare)
            total = sum(sizes) if all(size >= 0 for size in sizes) else None
            with Progress(total, "fetch", unit="B") as progress:
                for path, res in manifest.items():
                    source = fetch(res, stage.path(Path(a.out) / path), mirror=mirror,
                                   prefer_mirror=not a.prefer_url, progress=progress.update)
                    progress.write(f"{path}\t{source}\t{res.sha256}")
        return 0

    return run


@command("validate-config", "check a config file against the schema and its cross-references: types, bounds, "
                            "unknown keys (with the closest valid one), duplicate keys, references between test "
                            "sets and datasets, model hyperparameters, and that every outside system's files "
                            "exist.",
         "kgeval validate-config config/my.yaml")
def _validate(p: argparse.ArgumentParser):
    p.add_argument("config", help="a config YAML file")
    p.add_argument("--schema", default="config/schema.yaml", help="the config schema")

    def run(a):
        from .config import check_external_files, load_config_file, validate_config

        config = validate_config(load_config_file(a.config), a.schema)
        check_external_files(config, built=("resources/", "results/"))  # the workflow's own outputs
        print(f"{a.config}: valid")
        return 0

    return run


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
        from .data.kg import KnowledgeGraph
        from .pools.annotation import export_batch, load_templates, read_triple_list

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
        from .pools.annotation import export_disagreements

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
        from .pools.annotation import merge

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


# ---- re-analysis of metric tables (kgeval.analysis.reanalyze) -------------------------------------------
@command("reanalyze", "re-run every tau analysis and figure that needs only per-system metric tables: Figures "
                      "3-8 and Tables 3-4 of the paper from a folder laid out like the authors' result release "
                      "(or the workflow's own tables). What cannot be computed is listed in notes.txt.",
         "kgeval reanalyze release/ --out reanalysis/ --figure6-system HittER")
def _reanalyze(p: argparse.ArgumentParser):
    p.add_argument("folder", help="folder laid out like the published result release (FB-Test-O/evaluation.csv …)")
    out_option(p)
    p.add_argument("--names", default="", help="role=folder pairs overriding the published folder names, e.g. "
                   "original=Synth-Test-O,sample=Synth-Test-S,complete=Synth-Test-S-C,second=Synth2 "
                   "(default: the published names)")
    p.add_argument("--figure6-system", type=name_type, default="HittER",
                   help="the system whose per-relation micro MRR Figure 6 draws, as the paper")

    def run(a):
        from .analysis.reanalyze import ROLES
        from .analysis.steps import reanalyze_tables

        pairs = [pair.partition("=") for pair in a.names.split(",") if pair]
        bad = [f"{k}{s}{v}" for k, s, v in pairs if not s or k not in ROLES]
        if bad:
            p.error(f"--names: {bad[0]!r} is not role=folder with a role of {', '.join(ROLES)}")
        try:
            names = {k: name_type(v) for k, _, v in pairs}
        except argparse.ArgumentTypeError as exc:
            p.error(f"--names: {exc}")
        with OutputStage("reanalyze", inputs=[a.folder], folder=resolve_out(p, a)) as stage:
            notes = reanalyze_tables(a.folder, stage.root, names, figure6_system=a.figure6_system)
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

        from .errors import InputError
        from .tables.steps import QUALITY_COLUMNS, model_table_markdown

        try:
            df = pd.read_csv(a.table)
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
    p.add_argument("--max-width", type=Number(int, 1, 20_000), default=900, help="largest width in pixels")

    def run(a):
        from .docs_figures import export_docs_figures

        with OutputStage("docs-figures", input_folders=[a.results], folder=a.out) as stage:
            written = export_docs_figures(a.results, a.out, a.max_width, target=stage.path)
        for path in written:
            print(f"{path}\t{path.stat().st_size:,} bytes")
        return 0

    return run


# ---- evaluating any system (kgeval.external) -----------------------------------------------------------------
@command("evaluate", "evaluate your own systems (TREC run files, PyKEEN folders, kgeval or LibKGE checkpoints) "
                     "on every test set of a dataset, as the study evaluates its models, and place them among the "
                     "study's systems (rank and significance): against the local results folder when it exists, "
                     "else against the reference pack shipped in reference/ (summary.md says which, with its "
                     "provenance), or by rank only among the authors' released tables (--reference authors:DIR). "
                     "Missing data (the dataset and the test sets evaluated, nothing else) are built first with "
                     "the workflow, once. A PyKEEN model is a full pickle, which runs code from the file when "
                     "loaded: it is refused unless you pass --trust-pickle.",
         "kgeval evaluate FB-Test-S-C=my.run --dataset FB15k-237 --out eval/mine --name Mine")
def _evaluate(p: argparse.ArgumentParser):
    p.add_argument("systems", nargs="+", metavar="SYSTEM",
                   help="a run file (TESTSET=PATH, or named <test set>.run[.gz]), a folder of such run files, a "
                        "PyKEEN save_to_directory folder, or a kgeval / LibKGE checkpoint (.pt)")
    p.add_argument("--dataset", required=True, type=name_type, help="the dataset, e.g. FB15k-237")
    p.add_argument("--out", required=True, help="output folder (evaluation.csv, placement.csv/.png, per_category.csv, "
                   "per_relation.csv, unjudged*.csv, annotation_sheet.tsv, summary.md/.tex, dumps/); what an "
                   "earlier evaluate wrote there is replaced, nothing else is touched")
    p.add_argument("--name", action="append", type=name_type, default=[],
                   help="label of the SYSTEMs, in order (repeat; the rest keep their default: the run's file or "
                        "folder name, the PyKEEN folder's name, the checkpoint's model folder)")
    p.add_argument("--config", default="config/config.yaml",
                   help="the workflow config: its test sets of --dataset, trec measures and run depths")
    p.add_argument("--schema", default="config/schema.yaml", help="the config schema")
    p.add_argument("--resources", default="resources", help="the data stage's folder (datasets/, testsets/)")
    p.add_argument("--testsets", default=None, help="comma-separated test sets (default: all of the dataset's)")
    p.add_argument("--allow-missing", action="store_true",
                   help="a question absent from a run scores zero (as trec_eval -c) instead of being an error")
    p.add_argument("--trust-pickle", action="store_true",
                   help="load a PyKEEN trained_model.pkl. It is a full pickle: loading it runs whatever code the "
                        "file holds, with your permissions. Pass this only for models you trained yourself or "
                        "otherwise trust (kgeval and LibKGE checkpoints never need it)")
    p.add_argument("--bootstrap", type=Number(int, 20, 100_000), default=1000,
                   help="bootstrap resamples of the intervals")
    p.add_argument("--results", default="results", help="the workflow's results folder: the study's systems to "
                   "place the SYSTEMs among (results/metrics/<test set>/); --out may not lie inside it")
    p.add_argument("--reference", default="auto", metavar="auto|FOLDER|authors:DIR",
                   help="what to place among: auto (--results when it holds tables of the test sets, else the "
                        "shipped pack reference/default, else reference/smoke), a results folder or reference pack, "
                        "or authors:DIR, the authors' released tables (DIR/<test set>/evaluation.csv), for a "
                        "rank-only placement without significance, e.g. --reference authors:kgc-sparsity/result")
    p.add_argument("--no-build", action="store_true",
                   help="do not build missing data with the workflow (snakemake) but stop with an error")
    p.add_argument("--tukey-trials", type=SchemaNumber("analysis", "tukey_trials"), default=None,
                   help="trials of the randomised Tukey HSD (default: the config's analysis.tukey_trials)")
    p.add_argument("--unjudged-k", type=Number(int, 1, 1000), default=10, help="top k checked against the judged pool")
    p.add_argument("--templates", default="annotations/templates.tsv",
                   help="question templates of the annotation sheet (derived from relation names without it)")
    p.add_argument("--batch", type=batch_type, default="external", help="batch name of the annotation sheet")

    def run(a):
        from .config import load_config_file, run_depth, validate_config
        from .data.kg import KnowledgeGraph
        from .errors import InputError
        from .external.evaluate import evaluate_systems
        from .external.outputs import Options, study_files, write_outputs
        from .external.systems import parse_system
        from .home import locate_defaults, packaged_defaults

        packaged_defaults(a)  # outside a checkout: the installed configuration, data in the user cache
        config = validate_config(locate_defaults(load_config_file(a.config)), a.schema, models=False)
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
        needed = [kg_path] + [Path(f) for files in testsets.values() for f in files.values()]
        missing = [path for path in needed if not path.is_file()]
        if missing:
            prepare_data(a, missing, argv_command())
        if len(a.name) > len(a.systems):
            p.error(f"{len(a.name)} --name for {len(a.systems)} SYSTEM arguments")
        systems = [parse_system(s, names, a.name[i] if i < len(a.name) else None, trust_pickle=a.trust_pickle)
                   for i, s in enumerate(a.systems)]
        dup = {s.name for s in systems if [x.name for x in systems].count(s.name) > 1}
        if dup:
            p.error(f"two systems are named {sorted(dup)[0]!r}: label them with --name")
        for s in systems:  # a default name comes from a file name: it is a folder of dumps/ too
            try:
                name_type(s.name)
            except argparse.ArgumentTypeError as exc:
                raise InputError(s.path, None, f"{exc}: label the system with --name") from None
        inputs = [a.config, a.schema, kg_path, *(f for files in testsets.values() for f in files.values()),
                  *(path for s in systems for path in s.files())]
        with OutputStage("evaluate", inputs=inputs, folder=a.out,
                         input_folders=[a.results, a.resources, *reference_folder(a.reference),
                                        *(s.path for s in systems)]) as stage:
            kinds = {config["test_sets"][t]["kind"]: t for t in names}
            bounds = config.get("bounds", {})
            options = Options(a.results, kinds.get("pooled", kinds.get("sample")), a.unjudged_k, a.templates,
                              a.batch, a.tukey_trials or config.get("analysis", {}).get("tukey_trials", 1000),
                              repeats=a.bootstrap, reference=a.reference,
                              bounds_metrics=tuple(bounds.get("metrics", Options.bounds_metrics)),
                              bounds_k=bounds.get("k", Options.bounds_k), rbp_p=bounds.get("rbp_p", Options.rbp_p))
            # before any dump is written: a name clash with a study system or a broken results folder stops here
            ref, note = study_files(options, names, [s.name for s in systems])
            kg = KnowledgeGraph.load(kg_path)
            measures = config["evaluation"]["trec_measures"]
            evaluations: dict = {}
            table, metas = evaluate_systems(systems, kg, testsets, stage.root, measures,
                                            depth_of=lambda t: run_depth(config, t), allow_missing=a.allow_missing,
                                            repeats=a.bootstrap, evaluations=evaluations)
            written = write_outputs(stage.root, kg, table, metas, evaluations, ref, note, options)
            summary = (stage.root / "summary.md").read_text(encoding="utf-8")
        # the note saying where the systems were placed comes first; the summary's copy of it is not printed again
        print(note)
        print("\n\n".join(p for p in summary.split("\n\n") if p.strip() != note.strip()), end="")
        print(f"{Path(a.out, 'evaluation.csv')}\t{len(table)} rows")
        for path in written.values():
            print(stage.final(path))
        return 0

    return run


def reference_folder(spec: str) -> list[str]:
    """The folder ``--reference`` names (an input: --out may not lie inside it)."""
    if spec == "auto":
        return []
    return [spec[len("authors:"):] if spec.startswith("authors:") else spec]


_ARGV: list[str] = []


def argv_command() -> str:
    """The command as typed (for an error that tells what to rerun)."""
    import shlex

    return "kgeval " + " ".join(shlex.quote(x) for x in _ARGV)


def prepare_data(a: argparse.Namespace, missing: list[Path], command_line: str) -> None:
    """Build the missing data files of ``kgeval evaluate`` (only those) with the workflow, as
    :func:`kgeval.api.load_testset` does; one error line naming the command and KGEVAL_MIRROR when that fails."""
    from .api import DataUnavailableError, _build
    from .errors import InputError

    res = Path(a.resources)
    hint = (f"set KGEVAL_MIRROR to a data mirror folder (or mirror: in {a.config}) and rerun: "
            f"KGEVAL_MIRROR=<mirror folder> {command_line}")
    if a.no_build or res.name != "resources":
        raise InputError(missing[0], None, f"missing: build it with the workflow (snakemake --cores all "
                                           f"{' '.join(str(m) for m in missing)}) or rerun without --no-build")
    workdir = res.resolve().parent
    print(f"kgeval: building the missing data ({len(missing)} file(s): {', '.join(str(m) for m in missing)}) with "
          f"the workflow in {workdir}; log: {workdir / 'logs' / 'kgeval-api-build.log'}", file=sys.stderr)
    try:
        _build(workdir, Path(a.config).resolve(), [m.resolve() for m in missing])
    except DataUnavailableError as exc:
        text = str(exc).split("; without network")[0]
        raise InputError(missing[0], None, f"missing and {text}; {hint}") from None


def build_parser() -> tuple[Parser, dict[str, Runner]]:
    parser = Parser(prog="kgeval", description=DESCRIPTION, formatter_class=Formatter, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"kgeval {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also show the INFO lines of third-party libraries (fontTools, matplotlib, …)")
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND", parser_class=Parser)
    runners = {}
    for name, (add, help_, example) in COMMANDS.items():
        runners[name] = add(sub.add_parser(name, help=help_.split(". ")[0], description=help_[0].upper() + help_[1:],
                                           epilog=f"example:\n  {example}", formatter_class=Formatter))
    return parser, runners


DESCRIPTION = ("kgeval: evaluate knowledge-graph-completion models the way information retrieval evaluates search "
               "engines.\n\nEach command calls the same package function as the corresponding workflow rule "
               "(the full study runs with snakemake). Run 'kgeval COMMAND --help' for a command's options.")
EPILOG = """errors:
  A bad option, a missing or malformed input or a failed write is one line on stderr,
  'kgeval: error: <path>: <problem>', and a non-zero exit status; inputs are never changed.

outputs:
  Outputs are written to temporary files and moved into place together when the command
  succeeds; an output equal to an input is refused. A command with an output folder (--out)
  writes into a fresh staging folder inside it and, on success, replaces what the same command
  wrote there before (listed in OUT/.kgeval-outputs.json); other files in the folder stay.

example:
  kgeval evaluate FB-Test-S-C=my.run --dataset FB15k-237 --out eval/mine"""


def one_line(exc: BaseException) -> str:
    """An error as ``<path>: <problem>`` on one line."""
    if isinstance(exc, OSError) and exc.strerror:
        where = exc.filename if exc.filename is not None else ""
        text = f"{where}: {exc.strerror}" if where != "" else exc.strerror
        return text + (f" (and {exc.filename2})" if exc.filename2 else "")
    return " ".join(str(exc).split("\n")) or type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    parser, runners = build_parser()
    _ARGV[:] = sys.argv[1:] if argv is None else argv
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, a bad option (one line, printed by the parser)
        return exc.code if isinstance(exc.code, int) else 2
    setup_logging(verbose=args.verbose)
    enable_bars()  # on a terminal; redirected to a file, long commands log plain progress lines
    try:
        return int(runners[args.cmd](args) or 0)
    except SystemExit as exc:  # p.error inside a command
        return exc.code if isinstance(exc.code, int) else 2
    except (KgevalError, OSError) as exc:
        print(f"kgeval: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"kgeval: error: {args.cmd}: out of memory", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kgeval: interrupted (outputs left as they were)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
