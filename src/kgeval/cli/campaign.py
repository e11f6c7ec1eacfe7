"""``kgeval campaign``: a judging campaign in the browser (kgeval.campaign; guide: docs/guide/campaign.md)."""

from __future__ import annotations

import argparse
import ipaddress
import sys

from ..errors import KgevalError
from .options import Formatter, Parser, command

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
    p.add_argument("--sheet", required=True, help="sampling_plan.tsv, next_judgments.tsv or any annotation sheet")
    p.add_argument("--plan-items", default=None, help="the plan's sidecar sampling_plan.csv (audit flags, π)")
    p.add_argument("--comparisons", default=None,
                   help="the comparisons the items decide, as `kgeval campaign comparisons` writes them (CSV)")
    p.add_argument("--title", default=None, help="the campaign's name on its pages (default: the sheet's batch)")

    def run(a):
        from ..campaign.build import create_campaign

        n, m = create_campaign(a.db, a.sheet, a.plan_items, a.comparisons, a.title)
        print(f"{a.db}\t{n} items\t{m} comparisons")
        return 0

    return run


def _add_person(p):
    p.add_argument("db", help="the campaign file")
    p.add_argument("name", help="the person's name as the pages and the export show it")
    p.add_argument("--role", required=True, choices=("annotator", "adjudicator", "curator"))
    p.add_argument("--base-url", default="http://127.0.0.1:8765", help="the server's address as people reach it")

    def run(a):
        from ..campaign.store import add_person, connect

        conn = connect(a.db)
        token = add_person(conn, a.name, a.role)
        conn.close()
        path = "live" if a.role == "curator" else "j"
        print(f"{a.base_url.rstrip('/')}/{path}/{token}")
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

        connect(a.db).close()  # a missing or foreign file is one line before the server starts
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


SUBCOMMANDS = {
    "create": (_create, "create a campaign file from a sheet", "kgeval campaign create c.db --sheet "
               "sampling_plan.tsv --plan-items sampling_plan.csv"),
    "add-person": (_add_person, "add an annotator, adjudicator or curator; prints their personal link",
                   "kgeval campaign add-person c.db ana --role annotator"),
    "serve": (_serve, "serve the judging and live pages", "kgeval campaign serve c.db --port 8765"),
    "status": (_status, "print the campaign's progress, agreement and decisions", "kgeval campaign status c.db"),
}


@command("campaign", "a judging campaign in the browser: two annotators per item, an adjudicator on conflicts, "
                     "the comparisons decided live (create, add-person, serve, status, export, import, simulate).",
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
