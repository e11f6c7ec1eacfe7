"""The command line's parser: sub-command registration, one-line errors, and option types whose bounds and
words are the Python API's and the config's (:mod:`kgeval.arguments`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from ..arguments import Bounded, label_problem
from ..errors import ArgumentError

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
    """An argparse type: an int (or float) within bounds, stated in the option's help; the check and its words are
    :class:`kgeval.arguments.Bounded`'s, as the Python API's arguments and the config's keys have them."""

    def __init__(self, kind: type = int, lo: float | None = None, hi: float | None = None):
        self._spec = Bounded("integer" if kind is int else "number", lo, hi)

    def spec(self) -> Bounded:
        return self._spec

    def bounds(self) -> tuple[float | None, float | None]:
        return self.spec().bounds()

    def describe(self) -> str:
        return self.spec().describe()

    def __call__(self, text: str):
        try:
            return self.spec().parse(text, "")
        except ArgumentError as exc:
            raise argparse.ArgumentTypeError(exc.problem) from None


class SchemaNumber(Number):
    """A number bounded by a key of config/schema.yaml (``minimum``/``maximum`` and their exclusive forms), so that
    an option and the config key or API argument it stands for accept the same values. The schema is read when the
    option is used or shown."""

    def __init__(self, *keys: str):
        super().__init__(int)
        self.keys = keys

    def spec(self) -> Bounded:
        from ..config import schema_bound

        return schema_bound(self.keys, schema_file())


def schema_file() -> Path:
    """config/schema.yaml of the working folder, else of the source tree kgeval runs from."""
    from ..config import schema_file as find

    return find()


def name_type(text: str) -> str:
    """A label that also becomes a file or folder name: no separators, no ``.``/``..``, nothing empty or
    invisible, no space at either end (:func:`kgeval.arguments.label_problem`, as the Python API checks it)."""
    problem = label_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def batch_type(text: str) -> str:
    from ..pools.annotation.formats import _BATCH_RE

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
