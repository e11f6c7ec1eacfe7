"""The evaluate sub-command: your own systems judged as the study judges its models."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..io import OutputStage, require_inputs
from .options import (
    SchemaNumber,
    batch_type,
    command,
    name_type,
)


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
                   "earlier evaluate wrote there is replaced, nothing else is touched, and a file of yours where "
                   "an output goes is refused")
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
    p.add_argument("--bootstrap", type=SchemaNumber("arguments", "bootstrap"), default=1000,
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
    p.add_argument("--unjudged-k", type=SchemaNumber("arguments", "unjudged_k"), default=10,
                   help="top k checked against the judged pool")
    p.add_argument("--templates", default="annotations/templates.tsv",
                   help="question templates of the annotation sheet (derived from relation names without it)")
    p.add_argument("--batch", type=batch_type, default="external", help="batch name of the annotation sheet")
    p.add_argument("--decide-against", default=None, metavar="SYSTEM[,SYSTEM...]",
                   help="study systems to decide each SYSTEM against with sampled judgments on the pooled test "
                        "set (default: every study system): per opponent the judgments a sample needs, and "
                        "sampling_plan.tsv (annotate-export's format; sampling_plan.csv gives each item's pi and "
                        "judging order) to judge")
    p.add_argument("--judgments", default=None, metavar="LABELS",
                   help="the merged labels (head relation tail Y|N, as annotate-merge writes them) of the "
                        "sampling_plan.tsv an earlier run with the same options wrote: placement.csv and "
                        "summary.md then give each difference's estimate with its 95 %% interval")
    p.add_argument("--pool-depth", type=int, default=None, metavar="D",
                   help="judgments made at pool depth <= D count as known to the sampled judgments (default: the "
                        "config's pooling.depth, all of them); 0 leaves every pooled label unknown, so that the "
                        "published labels can judge the sheet: a dry run of the round trip on real labels")
    p.add_argument("--sample-metric", choices=("P", "DCG", "RBP", "RR", "Success"), default=None,
                   help="metric of the sampled judgments (default: the config's sampling.plan_metric)")
    p.add_argument("--sample-budget", type=SchemaNumber("sampling", "budget"), default=None,
                   help="judgments of the plan (default: the config's sampling.budget, else the largest budget "
                        "an opponent needs)")

    def run(a):
        from ..config import load_config_file, validate_config
        from ..errors import InputError
        from ..external.command import dataset_testsets, evaluate_into, placement_options, testset_files
        from ..external.systems import parse_system
        from ..home import locate_defaults, packaged_defaults

        packaged_defaults(a)  # outside a checkout: the installed configuration, data in the user cache
        config = validate_config(locate_defaults(load_config_file(a.config)), a.schema, models=False)
        names = dataset_testsets(config, a.dataset, a.testsets.split(",") if a.testsets else None, a.config)
        files = testset_files(a.resources, a.dataset, names)
        missing = files.missing()
        if missing:
            prepare_data(a, missing, argv_command())
        if a.judgments:  # a part-judged campaign export is refused now, not after the evaluation
            from ..sampling.estimates import refuse_unfinished

            require_inputs([a.judgments])
            refuse_unfinished(Path(a.judgments))
        if a.pool_depth is not None and not 0 <= a.pool_depth <= 1000:
            p.error(f"--pool-depth {a.pool_depth}: expected an integer from 0 to 1,000")
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
        inputs = [a.config, a.schema, *files.paths(), *(path for s in systems for path in s.files()),
                  *([a.judgments] if a.judgments else [])]
        with OutputStage("evaluate", inputs=inputs, folder=a.out,
                         input_folders=[a.results, a.resources, *reference_folder(a.reference),
                                        *(s.path for s in systems)]) as stage:
            against = [x.strip() for x in a.decide_against.split(",")] if a.decide_against is not None else None
            options = placement_options(config, names, a.results, a.unjudged_k, a.templates, a.batch,
                                        a.tukey_trials, a.bootstrap, a.reference, against, a.judgments,
                                        a.sample_metric, a.sample_budget, a.pool_depth)
            done = evaluate_into(stage.root, systems, config, files, options, a.allow_missing, a.bootstrap)
            summary = (stage.root / "summary.md").read_text(encoding="utf-8")
        # the note saying where the systems were placed comes first; the summary's copy of it is not printed again
        print(done.note)
        print("\n\n".join(p for p in summary.split("\n\n") if p.strip() != done.note.strip()), end="")
        print(f"{Path(a.out, 'evaluation.csv')}\t{len(done.table)} rows")
        for path in done.written.values():
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
    from ..api import DataUnavailableError
    from ..api import data as api_data
    from ..errors import InputError

    res = Path(a.resources)
    hint = (f"set KGEVAL_MIRROR to a data mirror folder (or mirror: in {a.config}) and rerun: "
            f"KGEVAL_MIRROR=<mirror folder> {command_line}")
    if a.no_build or res.name != "resources":
        raise InputError(missing[0], None, f"missing: build it with the workflow (snakemake --cores all "
                                           f"{' '.join(str(m) for m in missing)}) or rerun without --no-build")
    workdir = res.resolve().parent
    log = api_data.build_log(workdir)
    how = f"with the workflow in {workdir}; log: {log}" if log is not None else f"into {res}"
    print(f"kgeval: building the missing data ({len(missing)} file(s): {', '.join(str(m) for m in missing)}) "
          f"{how}", file=sys.stderr)
    try:
        api_data.build_data(workdir, Path(a.config).resolve(), [m.resolve() for m in missing])
    except DataUnavailableError as exc:
        text = str(exc).split("; without network")[0]
        raise InputError(missing[0], None, f"missing and {text}; {hint}") from None


