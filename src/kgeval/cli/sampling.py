"""Sub-commands of the sampling stage (kgeval.sampling)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import InputError
from ..io import OutputStage
from .options import SchemaNumber, command


def _labels_file(arg: str) -> Path:
    """``--labels``: a labels file, or the folder `kgeval campaign export` wrote (its judgments.txt)."""
    path = Path(arg)
    if path.is_dir():
        if not (path / "judgments.txt").is_file():
            raise InputError(path, None, "--labels: a folder without judgments.txt, not one `kgeval campaign "
                                         "export` wrote (give it, or the merged labels file)")
        return path / "judgments.txt"
    return path


@command("sample-estimate", "estimate each pair's difference from a sampling plan whose sheet went through "
                            "annotate-merge: estimates.csv (per pair of the plan: the estimate with the prior as "
                            "control variate, its confidence interval, decided when it excludes 0, the judgments used) "
                            "and prior_audit.csv (predicted against observed relevant rates) in --out. A plan `kgeval "
                            "sample-plan` drew from a reference pack needs nothing more (its sampling_source.json "
                            "names the pack's lists); a plan of the workflow needs the score dumps and the "
                            "knowledge graph it was made from, with the same --k and --max-depth (the prior is "
                            "the one the plan's sidecar records); a plan made otherwise is refused.",
         "kgeval sample-estimate --plan plan --labels judged --out estimate")
def _sample_estimate(p: argparse.ArgumentParser):
    p.add_argument("--plan", required=True, help="the plan's folder: sampling_plan.csv and sampling_budgets.csv")
    p.add_argument("--labels", required=True, help="the merged judgments (head relation tail Y|N) of the plan's "
                                                   "sheet, as annotate-merge writes them, or the folder `kgeval "
                                                   "campaign export` wrote (its judgments.txt)")
    p.add_argument("--scores", default=None, help="a folder holding one score dump per study system (its "
                                                  "subfolders), as results/scores/<test set>/; not needed for a "
                                                  "plan `kgeval sample-plan` drew from a reference pack")
    p.add_argument("--kg", default=None, help="with --scores: the dataset's kg.npz")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--k", type=SchemaNumber("bounds", "k"), default=10, help="cut-off k of the plan")
    p.add_argument("--max-depth", type=SchemaNumber("pooling", "depth"), default=10, help="deepest pool depth")
    p.add_argument("--prior", choices=("logistic", "binned", "uniform", "boosted"), default=None,
                   help="the plan's relevance prior (default: the one its sidecar records; another is refused)")
    p.add_argument("--rbp-p", type=SchemaNumber("bounds", "rbp_p"), default=None,
                   help="RBP's persistence, 0 < p < 1 (a plan on RBP only; default 0.8)")

    def run(a):
        from ..sampling.estimates import refuse_unfinished
        from ..sampling.more import more_words
        from ..sampling.reference import read_source, source_universe
        from ..sampling.steps import estimate_step
        from ..scores.dumps import dumps_in

        sidecar, pairs = Path(a.plan) / "sampling_plan.csv", Path(a.plan) / "sampling_budgets.csv"
        labels = _labels_file(a.labels)
        refuse_unfinished(labels)
        source = read_source(a.plan) if a.scores is None else None
        dumps, folders, universe, options = {}, [], None, {"k": a.k, "prior": a.prior, "max_depth": a.max_depth}
        if source is not None:
            universe = lambda: source_universe(source)  # noqa: E731 (read only once the labels passed)
            options = {"k": source["k"], "prior": source["prior"], "max_depth": source["max_depth"],
                       "testset": source["testset"]}
            kg = source["kg"]
        elif a.scores is None or a.kg is None:
            p.error(f"--plan {a.plan} has no sampling_source.json (a plan the workflow made): give --scores and "
                    "--kg, the score dumps and graph it was made from")
        else:
            scores, kg = Path(a.scores), a.kg
            dumps = dumps_in(scores)
            folders = [scores]
        if a.rbp_p is not None:
            from ..sampling.sheet import read_plan_pairs

            metric = read_plan_pairs(str(pairs))["Metric"].iloc[0]
            if metric != "RBP":  # a persistence on a P or DCG plan means nothing: a mistaken plan, most likely
                p.error(f"--rbp-p {a.rbp_p}: the plan {a.plan} is on {metric}, not RBP; leave --rbp-p out")
        out = Path(a.out)
        with OutputStage("sample-estimate", inputs=[sidecar, pairs, labels, kg], input_folders=folders,
                         folder=out) as stage:
            est = estimate_step(dumps, kg, str(sidecar), str(pairs), str(labels),
                                str(stage.path(out / "estimates.csv")), str(stage.path(out / "prior_audit.csv")),
                                rbp_p=0.8 if a.rbp_p is None else a.rbp_p, universe=universe, **options)
        for row in est.itertuples(index=False):
            verdict = "decided" if row.decided else "undecided — " + more_words(row.more_judgments)
            print(f"{row.Metric}\t{row.A} − {row.B}\t{row.delta:+.4f}\t[{row.lo:+.4f}, {row.hi:+.4f}]\t{verdict}\t"
                  f"{row.judgments_used} judgments")
        print(f"{out / 'estimates.csv'}\t{int(est['decided'].sum())} of {len(est)} pairs decided")
        return 0

    return run



@command("sample-plan", "draw a sampling plan from a reference pack's top-k lists, no model trained: "
                        "sampling_plan.tsv (the sheet to judge), sampling_plan.csv (π per item), "
                        "sampling_budgets.csv (the pairs) and sampling_source.json (what it was drawn from) in "
                        "--out, for `kgeval campaign create --plan` and `kgeval sample-estimate --plan`. Missing "
                        "data (the dataset and the test set) are built first with the workflow, once.",
         "kgeval sample-plan --testset FB-Test-S-C --budget 40 --out plan")
def _sample_plan(p: argparse.ArgumentParser):
    p.add_argument("--testset", default=None, help="a pooled test set of the pack, e.g. FB-Test-S-C (not with "
                                                   "--extend: the plan's)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--reference", default="reference/default", help="the reference pack (its runs/<test "
                                                                     "set>/top10.parquet)")
    p.add_argument("--budget", type=SchemaNumber("sampling", "budget"), default=None,
                   help="expected judgments (default: what the prior says the pairs need)")
    p.add_argument("--metric", choices=("P", "DCG", "RBP", "RR", "Success"), default="P",
                   help="the metric the pairs are decided on (P, DCG and RBP are estimated live in a campaign)")
    ask = p.add_mutually_exclusive_group()
    ask.add_argument("--pair", default=None, metavar="A,B",
                     help="ask one question: the pair of study systems A and B only (the plan, its budget and a "
                          "campaign made from it hold that pair alone)")
    ask.add_argument("--against", default=None, metavar="A[,B...]",
                     help="system A against every other study system, or against the systems listed after it")
    p.add_argument("--prior", choices=("boosted", "logistic", "binned", "uniform"), default=None,
                   help="the relevance prior of the design (default: the config's bounds.prior, boosted)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw")
    p.add_argument("--config", default="config/config.yaml", help="the workflow config (the test set's dataset)")
    p.add_argument("--schema", default="config/schema.yaml", help="the config schema")
    p.add_argument("--resources", default="resources", help="the data stage's folder (datasets/, testsets/)")
    p.add_argument("--templates", default="annotations/templates.tsv", help="the questions' sentence templates")
    p.add_argument("--no-build", action="store_true", help="do not build missing data but stop with an error")
    p.add_argument("--extend", default=None, metavar="PLAN",
                   help="draw the next wave of the judged plan in the folder PLAN (one `sample-plan` drew, or an "
                        "extended one) for the asked pairs (--pair/--against; default the plan's), sized by "
                        "--budget further judgments or by what the labels in hand say would decide them; --out "
                        "gets the whole plan (every wave, each item with its union π), for `kgeval campaign "
                        "extend` and `kgeval sample-estimate`")
    p.add_argument("--labels", default=None, help="with --extend: the judgments of every item of PLAN (head "
                                                  "relation tail Y|N, or the folder `kgeval campaign export` wrote)")

    def run(a):
        if a.extend is not None:
            return _extend(p, a)
        if a.labels is not None:
            p.error("--labels goes with --extend PLAN (sample-estimate takes the labels of a plan)")
        if a.testset is None:
            p.error("give --testset (a new plan) or --extend PLAN (the next wave of a judged plan)")
        from ..config import load_config_file, validate_config
        from ..external.command import testset_files
        from ..home import locate_defaults, packaged_defaults
        from ..sampling.reference import reference_plan
        from .evaluate import argv_command, prepare_data

        packaged_defaults(a)
        config = validate_config(locate_defaults(load_config_file(a.config)), a.schema, models=False)
        spec = config["test_sets"].get(a.testset)
        if spec is None:
            raise InputError(a.config, None, f"--testset {a.testset}: not a test set of the config "
                                             f"({', '.join(config['test_sets'])})")
        top = Path(a.reference) / "runs" / a.testset / "top10.parquet"
        if not top.is_file():
            raise InputError(top, None, f"no top-10 lists of {a.testset} in the reference pack {a.reference}")
        files = testset_files(a.resources, spec["dataset"], [a.testset])
        if files.missing():
            prepare_data(a, files.missing(), argv_command())
        data = files.testsets[a.testset]
        out = Path(a.out)
        with OutputStage("sample-plan", inputs=[top, a.templates, *files.paths()], input_folders=[a.reference],
                         folder=out) as stage:
            reference_plan(files.kg, data["tsv"], data["questions"], top, a.templates, stage.root, budget=a.budget,
                           metric=a.metric, seed=a.seed, testset=a.testset, final_dir=out,
                           prior=a.prior or config["bounds"]["prior"], source="--pair" if a.pair else "--against",
                           pair=names(a.pair), against=names(a.against))
            sidecar = stage.root / "sampling_plan.csv"
            n = pd_items(sidecar)
        print(f"{out / 'sampling_plan.tsv'}\t{n} items to judge\t{out / 'sampling_budgets.csv'}")
        return 0

    return run


def _extend(p: argparse.ArgumentParser, a) -> int:
    """``sample-plan --extend PLAN --labels L --out OUT``: the next wave (kgeval.sampling.extend)."""
    import json

    from ..sampling.estimates import refuse_unfinished
    from ..sampling.extend import WAVES_FILE, extend_plan
    from ..sampling.reference import SOURCE_FILE, read_source, source_universe
    from ..sampling.steps import _pair_columns

    if a.labels is None:
        p.error("--extend needs --labels: the judgments of every item of the plan")
    if a.testset is not None or a.prior is not None:
        p.error("--extend draws on the plan's test set and prior: give no --testset or --prior")
    plan = Path(a.extend)
    if not plan.is_dir():
        raise InputError(plan, None, "--extend: no such plan folder")
    source = read_source(plan)
    if source is None:
        raise InputError(plan, None, f"--extend: no {SOURCE_FILE} (a plan the workflow made): extend a plan "
                                     "`kgeval sample-plan` drew")
    labels = _labels_file(a.labels)
    refuse_unfinished(labels)
    out = Path(a.out)
    if out.resolve() == plan.resolve():
        raise InputError(out, None, "--out must be a new folder: the judged plan stays as it is")
    inputs = [plan / n for n in ("sampling_plan.csv", "sampling_budgets.csv", SOURCE_FILE)]
    with OutputStage("sample-plan", inputs=[*inputs, labels, a.templates], folder=out,
                     input_folders=[plan, a.reference]) as stage:
        u, kg = source_universe(source)
        cols = None
        if a.pair or a.against:
            cols = _pair_columns(u.systems, names(a.against), names(a.pair), "--pair" if a.pair else "--against")
        done = extend_plan(u, kg, plan, labels, stage.root, a.templates, cols, a.budget, a.seed,
                           rbp_p=source.get("rbp_p", 0.8), testset=source["testset"])
        kept = json.loads((plan / SOURCE_FILE).read_text(encoding="utf-8"))
        for key in ("kg", "testset_tsv", "questions", "top"):  # relative to the new folder
            kept[key] = os.path.relpath(source[key], out.resolve())
        (stage.root / SOURCE_FILE).write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        n = pd_items(stage.root / "sampling_plan.csv")
    for row in done["estimate"].itertuples(index=False):
        more = row.more_judgments
        state = "decided" if row.decided else (f"undecided — about {more:,.0f} more judgments" if more == more
                                               else "undecided — no budget within 10,000 decides it")
        print(f"{row.A} − {row.B}\t{row.delta:+.4f}\t[{row.lo:+.4f}, {row.hi:+.4f}]\t{state}")
    print(f"{out / 'sampling_plan.tsv'}\twave {done['wave']}: {done['new_items']} new items (about "
          f"{done['expected_new_judgments']:,.0f} new judgments), {n} in all\t{out / WAVES_FILE}")
    return 0


def names(value: str | None) -> list[str] | None:
    """``A,B`` as a list of names (None stays None)."""
    return None if value is None else [n.strip() for n in value.split(",") if n.strip()]


def pd_items(sidecar: Path) -> int:
    """The sheet's items (distinct item numbers of the sidecar)."""
    import pandas as pd

    return int(pd.read_csv(sidecar, usecols=["item"])["item"].nunique())

