"""``kgeval campaign``: a judging campaign in the browser (kgeval.campaign; guide: docs/guide/campaign.md)."""

from __future__ import annotations

import argparse
import ipaddress
import sys

from ..errors import KgevalError
from ..io import require_inputs
from .options import Formatter, Parser, SchemaNumber, command

INSTALL = "the campaign server needs starlette, jinja2 and uvicorn: pip install 'kgeval[campaign]'"


def _need_server_packages() -> None:
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise KgevalError(INSTALL) from None


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _create(p):
    p.add_argument("db", help="the campaign file to create (SQLite; never replaced)")
    p.add_argument("--plan", default=None, metavar="DIR",
                   help="a sampling plan's folder (kgeval sample-plan's, or the workflow's results/sampling/<test "
                        "set>): its sheet, sidecar and comparisons, built from what the plan was drawn from")
    p.add_argument("--sheet", default=None, help="sampling_plan.tsv, next_judgments.tsv or any annotation sheet")
    p.add_argument("--plan-items", default=None, help="the plan's sidecar sampling_plan.csv (audit flags, π)")
    p.add_argument("--comparisons", default=None,
                   help="the comparisons the items decide: a CSV a,b,metric,base,lo,hi,item,c1,c0, one row per "
                        "comparison and item bearing on it (instead of --scores)")
    p.add_argument("--title", default=None, help="the campaign's name on its pages (default: the sheet's batch)")
    p.add_argument("--scores", default=None, help="with --plan-items: the folder of the study's score dumps (one "
                                                  "subfolder per system) the plan was made from, for the live "
                                                  "estimates of its pairs")
    p.add_argument("--kg", default=None, help="the dataset's kg.npz: each item's evidence on the judging page "
                   "(types, known facts, known answers; needed with --scores and --run-dump)")
    p.add_argument("--plan-pairs", default=None,
                   help="with --scores: the plan's sampling_budgets.csv (default: beside --plan-items)")
    p.add_argument("--k", type=SchemaNumber("bounds", "k"), default=10, help="cut-off k of the plan")
    p.add_argument("--max-depth", type=SchemaNumber("pooling", "depth"), default=10, help="deepest pool depth")
    p.add_argument("--prior", choices=("logistic", "binned", "uniform", "boosted"), default=None,
                   help="the plan's relevance prior (default: the one its sidecar records; another is refused)")
    p.add_argument("--run-dump", default=None,
                   help="with --plan-items and --kg, for the plan `kgeval evaluate --decide-against` wrote: its "
                        "score dump <out>/dumps/<system>/<test set> (instead of --scores)")
    p.add_argument("--reference", default="reference/default", help="with --run-dump: the reference pack the "
                                                                   "evaluation placed the system in")
    p.add_argument("--against", default=None, metavar="SYSTEM[,SYSTEM...]",
                   help="with --run-dump: the study systems evaluate's --decide-against named")
    p.add_argument("--sample-metric", choices=("P", "DCG", "RBP"), default="P",
                   help="with --run-dump: evaluate's --sample-metric")
    p.add_argument("--pool-depth", type=int, default=None, metavar="D",
                   help="with --run-dump: evaluate's --pool-depth (default: --max-depth)")
    p.add_argument("--order", choices=("plan", "mtc"), default="plan",
                   help="serving order: the sheet's (plan), or MTC's priority recomputed as labels arrive, the "
                        "audit items in their plan slots (mtc; needs --scores)")

    def run(a):
        from pathlib import Path

        from ..campaign.build import create_campaign
        from ..scores.dumps import dumps_in

        study = None
        if a.plan is not None:
            if a.sheet is not None or a.plan_items is not None:
                p.error("--plan DIR names the sheet and the sidecar: give no --sheet or --plan-items")
            a.sheet, a.plan_items = str(Path(a.plan, "sampling_plan.tsv")), str(Path(a.plan, "sampling_plan.csv"))
            study = plan_study(a, p)
        elif a.sheet is None:
            p.error("give --plan DIR (a sampling plan's folder) or --sheet FILE")
        if a.scores is not None:
            if a.plan_items is None or a.kg is None:
                p.error("--scores needs --plan-items and --kg")
            dumps = dumps_in(a.scores)
            pairs = a.plan_pairs or str(Path(a.plan_items).with_name("sampling_budgets.csv"))
            require_inputs([a.kg, pairs])
            study = {"dumps": dumps, "kg_path": a.kg, "plan_pairs": pairs, "k": a.k, "prior": a.prior,
                     "max_depth": a.max_depth}
        if a.run_dump is not None:
            if a.scores is not None or a.plan_items is None or a.kg is None or not a.against:
                p.error("--run-dump needs --plan-items, --kg and --against (and no --scores)")
            require_inputs([a.kg, a.run_dump])
            study = {"dump": a.run_dump, "reference": a.reference, "kg_path": a.kg, "k": a.k, "prior": a.prior,
                     "against": [s.strip() for s in a.against.split(",")], "metric": a.sample_metric,
                     "max_depth": a.max_depth if a.pool_depth is None else a.pool_depth}
        n, m = create_campaign(a.db, a.sheet, a.plan_items, a.comparisons, a.title, study, a.order, kg=a.kg,
                               k=a.k)
        print(f"{a.db}\t{n} items\t{m} comparisons")
        return 0

    return run


def plan_study(a, p) -> dict | None:
    """What ``create --plan DIR`` builds the comparisons from: the plan's sampling_source.json (a plan of
    ``kgeval sample-plan``), else the workflow's layout (``X/sampling/<test set>`` beside ``X/scores/<test set>``,
    the graph where the data stage writes it), else nothing unless --scores or --run-dump say it."""
    from pathlib import Path

    from ..sampling.reference import read_source

    require_inputs([a.sheet, a.plan_items])
    source = read_source(a.plan)
    if source is not None and a.scores is None and a.run_dump is None:
        if a.kg is None:  # the graph the plan was drawn on: each item's evidence on the judging page
            a.kg = source["kg"]
        return {"source": source, "plan_pairs": str(Path(a.plan, "sampling_budgets.csv"))}
    folder = Path(a.plan).resolve()
    if a.scores is None and a.run_dump is None and (folder / "placement.csv").is_file():
        _outside_plan(a, p, folder)
        return None
    scores = folder.parent.parent / "scores" / folder.name
    if a.scores is None and a.run_dump is None and folder.parent.name == "sampling" and scores.is_dir():
        a.scores = str(scores)
        if a.kg is None:
            a.kg = _workflow_kg(a, p, folder.name)
    return None


def _outside_plan(a, p, folder) -> None:
    """``--plan OUT`` of ``kgeval evaluate --decide-against``: the system, its test set, the opponents and the
    metric from OUT/placement.csv's sampled columns, the score dump evaluate wrote in OUT/dumps (``--reference``
    stays the pack or results folder the evaluation placed the system in)."""
    import pandas as pd

    try:
        pl = pd.read_csv(folder / "placement.csv")
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        p.error(f"--plan {a.plan}: cannot read placement.csv: {exc}")
    cols = [c for c in pl.columns if c.endswith("_sample_plan_budget")]  # set on every opponent's row
    rows = pl[pl[cols[0]].notna()] if cols else pl.iloc[:0]
    if rows.empty or rows["System"].nunique() != 1:
        p.error(f"--plan {a.plan}: placement.csv names no single system with sampled judgments: give --sheet, "
                "--plan-items and --run-dump")
    name, testset = str(rows["System"].iloc[0]), str(rows["TestSet"].iloc[0])
    a.run_dump = str(folder / "dumps" / name / testset)
    a.against = a.against or ",".join(dict.fromkeys(rows["Opponent"].astype(str)))
    a.sample_metric = cols[0].split("@")[0]
    if a.kg is None:
        a.kg = _workflow_kg(a, p, testset)


def _workflow_kg(a, p, testset: str) -> str:
    """The graph of the workflow's test set ``testset`` (the config's dataset, where the data stage writes it)."""
    from ..config import load_config_file, validate_config
    from ..external.command import testset_files
    from ..home import locate_defaults

    config = validate_config(locate_defaults(load_config_file("config/config.yaml")), "config/schema.yaml",
                             models=False)
    spec = config["test_sets"].get(testset)
    if spec is None:
        p.error(f"--plan {a.plan}: {testset} is no test set of config/config.yaml; give --scores and --kg")
    return str(testset_files("resources", spec["dataset"], [testset]).kg)


def _extend(p):
    p.add_argument("db", help="the campaign file (its judgments are never touched)")
    p.add_argument("--plan", required=True, metavar="DIR",
                   help="the folder `kgeval sample-plan --extend` wrote from the campaign's plan: its new items are "
                        "served after the campaign's, and the live estimates use every wave")
    p.add_argument("--kg", default=None, help="the dataset's kg.npz for the new items' evidence (default: the "
                                              "plan's)")

    def run(a):
        from ..campaign.build import extend_campaign

        new, total, m = extend_campaign(a.db, a.plan, kg=a.kg)
        print(f"{a.db}\t{new} new items\t{total} items\t{m} comparisons")
        return 0

    return run


DEFAULT_URL = "http://127.0.0.1:8765"  # campaign serve's default host and port


def _add_person(p):
    p.add_argument("db", help="the campaign file")
    p.add_argument("name", help="the person's name as the pages and the export show it")
    p.add_argument("--role", required=True, choices=("annotator", "adjudicator", "curator"))
    p.add_argument("--base-url", default=None,
                   help="the server's address as people reach it (default: the address `campaign serve` last "
                        f"served this campaign on, else {DEFAULT_URL})")

    def run(a):
        from urllib.parse import urlsplit

        from ..campaign.store import add_person, connect, meta
        from ..errors import InputError

        if a.base_url is not None:
            url = urlsplit(a.base_url) if a.base_url.isprintable() else None
            if url is None or url.scheme not in ("http", "https") or not url.netloc:
                # the link is printed for people to click: a javascript: or data: address would run in their
                # browser
                p.error(f"--base-url {a.base_url!r}: expected the server's http:// or https:// address")
        conn = connect(a.db)
        try:
            token = add_person(conn, a.name, a.role)
            served = meta(conn).get("serve_url")
        except InputError as exc:
            raise InputError(a.db, None, exc.problem) from None
        finally:
            conn.close()
        base = a.base_url or served or DEFAULT_URL
        if a.base_url is None:
            print(f"kgeval: the link is for {base}, " + ("where `kgeval campaign serve` last served this campaign"
                  if served else "`kgeval campaign serve`'s default address (not served yet)") +
                  "; --base-url URL prints it for the address people reach", file=sys.stderr)
        path = "live" if a.role == "curator" else "j"
        print(f"{base.rstrip('/')}/{path}/{token}")
        return 0

    return run


def _serve(p):
    p.add_argument("db", help="the campaign file")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback unless you mean otherwise)")
    p.add_argument("--port", type=int, default=8765, help="port to listen on")

    def run(a):
        _need_server_packages()
        from ..campaign.server import serve
        from ..campaign.store import connect

        conn = connect(a.db)  # a missing or foreign file is one line before the server starts
        try:  # the address add-person prints links for from now on
            from ..campaign.store import write

            host = f"[{a.host}]" if ":" in a.host else a.host
            with write(conn):
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('serve_url', ?)", (f"http://{host}:{a.port}",))
        finally:
            conn.close()
        if not _loopback(a.host):
            print(f"kgeval: warning: serving on {a.host}, reachable from other machines: anyone with a link can "
                  "judge; put it behind a reverse proxy with TLS (docs/guide/campaign.md)", file=sys.stderr)
        print(f"serving {a.db} on http://{a.host}:{a.port} (Ctrl-C stops)", file=sys.stderr)
        serve(a.db, a.host, a.port)
        return 0

    return run


def _status(p):
    p.add_argument("db", help="the campaign file")

    def run(a):
        from ..campaign.status import status_text

        print(status_text(a.db))
        return 0

    return run


def _export(p):
    p.add_argument("db", help="the campaign file")
    p.add_argument("out", help="output folder")
    p.add_argument("--format", choices=("kgeval", "label-studio"), default="kgeval",
                   help="kgeval: judgments.txt (head relation tail Y|N, for kgeval evaluate --judgments), "
                        "report.md/.json with kappa, judgments_detail.tsv; label-studio: tasks.json and "
                        "labeling_config.xml")

    def run(a):
        import json
        from pathlib import Path

        from ..campaign.export import export_kgeval
        from ..campaign.labelstudio import CONFIG, tasks
        from ..campaign.store import connect
        from ..io import OutputStage

        conn = connect(a.db)
        out = Path(a.out)
        with OutputStage("campaign export", inputs=[a.db], folder=out) as stage:
            if a.format == "kgeval":
                rep = export_kgeval(conn, a.db, out, stage)
                kappa = "undefined" if rep["kappa"] is None else f"{rep['kappa']:.4f}"
                line = (f"{out / 'judgments.txt'}\t{rep['items']} judgments ({rep['labels']['final']['Y']} Y)\t"
                        f"{rep['disagreements']} adjudicated\tkappa {kappa}\t{rep['unfinished']} unfinished")
            else:
                t = tasks(conn)
                stage.path(out / "tasks.json").write_text(json.dumps(t, indent=1, ensure_ascii=False) + "\n",
                                                          encoding="utf-8")
                stage.path(out / "labeling_config.xml").write_text(CONFIG, encoding="utf-8")
                line = f"{out / 'tasks.json'}\t{len(t)} tasks\t{out / 'labeling_config.xml'}"
        conn.close()
        print(line)
        return 0

    return run


def _import(p):
    p.add_argument("db", help="the campaign file")
    p.add_argument("file", help="a Label Studio JSON export, or merged labels (head relation tail Y|N) as "
                                "annotate-merge writes them")

    def run(a):
        from ..campaign.export import import_labels
        from ..campaign.labelstudio import import_export
        from ..campaign.store import connect
        from ..errors import InputError
        from ..io import require_inputs

        require_inputs([a.file])
        conn = connect(a.db)
        with open(a.file, "rb") as fh:
            head = fh.read(4096).lstrip()
        if not head:  # an empty export is a mistake (a failed download, the wrong file), never "0 imported"
            raise InputError(a.file, None, "empty: expected a Label Studio JSON export or merged labels")
        if head[:1] in (b"[", b"{"):
            n = import_export(conn, a.file)
            print(f"{a.db}\t{n['judgments']} judgments from Label Studio\t{n['skipped']} tasks without "
                  f"annotation\t{n['extra']} extra annotations left out")
        else:
            added, same = import_labels(conn, a.file)
            print(f"{a.db}\t{added} final labels imported\t{same} already final with the same label")
        conn.close()
        return 0

    return run


def _simulate(p):
    p.add_argument("db", help="the campaign file (a copy is judged; the file is left as it is)")
    p.add_argument("--labels", required=True, help="the oracle's labels: head relation tail Y|N (the published "
                                                   "judgments); an item they do not label is N")
    p.add_argument("--disagreement", type=float, default=0.1,
                   help="the share of items the second annotator answers wrongly (then adjudicated)")
    p.add_argument("--errors", default=None, metavar="FIRST,SECOND,ADJUDICATOR",
                   help="each person's error rate, or N for one who always answers N (e.g. 0.1,0.1,0.05 or "
                        "N,0.05,0.05; instead of --disagreement); benchmarks/campaign_errors.py measures what "
                        "such errors do to coverage")
    p.add_argument("--seed", type=int, default=0, help="seed of the disagreements")

    def run(a):
        _need_server_packages()
        from ..campaign.live import metric_name
        from ..campaign.simulate import offline, over_http, truth_of
        from ..campaign.store import connect, meta
        from ..io import require_inputs
        from ..pools.annotation.qrels import _read_qrels_rows

        if not 0 <= a.disagreement <= 1:
            p.error(f"--disagreement {a.disagreement}: expected a share in [0, 1]")
        rate = a.disagreement if a.errors is None else _errors(p, a.errors)
        require_inputs([a.labels])
        labels = {t: int(lab == "Y") for t, lab, _ in _read_qrels_rows(a.labels)}
        conn = connect(a.db)
        truth = truth_of(conn, labels)
        off = offline(conn, truth, rate, a.seed)
        k = meta(conn).get("k", "")
        conn.close()
        http = over_http(a.db, truth, rate, a.seed)
        same = off == http
        for o, h in zip(off["comparisons"], http["comparisons"]):
            name = metric_name(o["metric"], int(k) if k.isdigit() else None)  # P@10, as the live page
            print(f"{name}\t{o['a']} − {o['b']}\tdecided at judgment {h['decided_at'] or 'never'} (HTTP), "
                  f"{o['decided_at'] or 'never'} (offline)")
        print(f"{a.db}\t{http['judgments']} judgments over HTTP, {off['judgments']} offline\t"
              f"{int(truth.sum())} of {truth.size} items Y\t{http['wrong_labels']} final labels wrong\t"
              f"{'equal' if same else 'DIFFERENT'}")
        return 0 if same else 1

    return run


def _errors(p, spec: str) -> tuple:
    """``--errors FIRST,SECOND,ADJUDICATOR``: three error rates in [0, 1] or N."""
    parts = [x.strip() for x in spec.split(",")]
    try:
        out = tuple(x if x == "N" else float(x) for x in parts)
    except ValueError:
        out = ()
    if len(out) != 3 or any(x != "N" and not 0 <= x <= 1 for x in out):
        p.error(f"--errors {spec}: expected three error rates in [0, 1] or N, e.g. 0.1,0.1,0.05")
    return out


SUBCOMMANDS = {
    "create": (_create, "create a campaign file from a sheet", "kgeval campaign create c.db --sheet "
               "sampling_plan.tsv --plan-items sampling_plan.csv"),
    "extend": (_extend, "add the next wave of the campaign's plan (kgeval sample-plan --extend) without touching a "
                        "judgment", "kgeval campaign extend c.db --plan wave2"),
    "add-person": (_add_person, "add an annotator, adjudicator or curator; prints their personal link",
                   "kgeval campaign add-person c.db ana --role annotator"),
    "serve": (_serve, "serve the judging and live pages", "kgeval campaign serve c.db --port 8765"),
    "export": (_export, "export the final labels (kgeval's judgments and report, or Label Studio tasks)",
               "kgeval campaign export c.db out/"),
    "import": (_import, "import a Label Studio export or merged labels", "kgeval campaign import c.db ls.json"),
    "simulate": (_simulate, "judge a copy through the HTTP API with an oracle and compare with the offline "
                            "simulation", "kgeval campaign simulate c.db --labels published.txt --disagreement 0.1"),
    "status": (_status, "print the campaign's progress, agreement and decisions", "kgeval campaign status c.db"),
}


@command("campaign", "a judging campaign in the browser: two annotators per item, an adjudicator on conflicts, "
                     "the comparisons decided live (create, extend, add-person, serve, status, export, import, simulate).",
         "kgeval campaign create c.db --sheet sampling_plan.tsv --plan-items sampling_plan.csv")
def _campaign(p: argparse.ArgumentParser):
    sub = p.add_subparsers(dest="campaign_cmd", required=True, metavar="STEP", parser_class=Parser)
    runners = {}
    for name, (add, help_, example) in SUBCOMMANDS.items():
        runners[name] = add(sub.add_parser(name, help=help_, description=help_[0].upper() + help_[1:] + ".",
                                           epilog=f"example:\n  {example}", formatter_class=Formatter))

    def run(a):
        return runners[a.campaign_cmd](a)

    return run
