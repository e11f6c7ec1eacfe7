"""The ``kgeval`` command line, for use outside Snakemake.

Each sub-command calls the same package function as the corresponding workflow rule. Every command checks its
options and inputs before it starts, writes its outputs through one staging step (temporary files moved into place
together at the end, never over an input, never outside its output folder) and reports a bad input, a missing file
or a failed write as one line, ``kgeval: error: <path>: <problem>``, with a non-zero exit status.
"""

from __future__ import annotations

import contextlib
import sys

from .. import __version__
from ..errors import KgevalError, one_line
from ..progress import Heartbeat, enable_bars
from ..workflow import setup_logging
from . import (  # each registers its commands
    annotate,
    baseline,
    campaign,
    data,
    evaluate,
    reproduce,
    sampling,
    scale,
    tables,
)
from .evaluate import _ARGV
from .options import COMMANDS, Formatter, Parser, Runner

COMMAND_MODULES = (data, annotate, sampling, tables, baseline, evaluate, campaign, scale, reproduce)


def build_parser() -> tuple[Parser, dict[str, Runner]]:
    parser = Parser(prog="kgeval", description=DESCRIPTION, formatter_class=Formatter, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"kgeval {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also show the INFO lines of third-party libraries (fontTools, matplotlib, …)")
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND", parser_class=Parser)
    runners = {}
    order = [m.__name__ for m in COMMAND_MODULES]  # the order of `kgeval --help`: the workflow's stages
    for name, (add, help_, example) in sorted(COMMANDS.items(), key=lambda c: order.index(c[1][0].__module__)):
        runners[name] = add(sub.add_parser(name, help=help_.split(". ")[0], description=help_[0].upper() + help_[1:],
                                           epilog=f"example:\n  {example}", formatter_class=Formatter))
    return parser, runners


DESCRIPTION = ("kgeval: evaluate knowledge-graph-completion models the way information retrieval evaluates search "
               "engines.\n\nEach command calls the same package function as the corresponding workflow rule "
               "(the full study runs with snakemake). Run 'kgeval COMMAND --help' for a command's options.")
EPILOG = """errors:
  A bad option, a missing or malformed input or a failed write is one line on stderr,
  'kgeval: error: <path>: <problem>', and a non-zero exit status; inputs are never changed.
  An input over a limit is refused before it is parsed: KGEVAL_MAX_INPUT_MB (default 4096),
  KGEVAL_MAX_LINE_KB (1024) and KGEVAL_MAX_ROWS (100000000) raise them; a NUL byte is refused.

outputs:
  Outputs are written to temporary files and moved into place together when the command
  succeeds: all of them, or, when a rename fails, none, with the previous files put back. An
  output equal to an input is refused. A command with an output folder (--out) holds its lock
  (a second command on it is refused), writes into a fresh staging folder inside it and, on
  success, replaces what the same command wrote there before (listed file by file in
  OUT/.kgeval-outputs.json); any other file where an output goes is refused, never replaced,
  and other files in the folder stay.

example:
  kgeval evaluate FB-Test-S-C=my.run --dataset FB15k-237 --out eval/mine"""


def main(argv: list[str] | None = None) -> int:
    parser, runners = build_parser()
    _ARGV[:] = sys.argv[1:] if argv is None else argv
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, a bad option (one line, printed by the parser)
        return exc.code if isinstance(exc.code, int) else 2
    setup_logging(verbose=args.verbose)
    enable_bars()  # on a terminal; redirected to a file, long commands log plain progress lines
    # every command says it is still working when it has been quiet for 30 s (issue 52 §4); a server is quiet
    # by design between requests
    serving = getattr(args, "campaign_cmd", None) == "serve"
    try:
        with contextlib.nullcontext() if serving else Heartbeat(f"kgeval {args.cmd}"):
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
