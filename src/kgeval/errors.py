"""Error types. Every error about bad input names the file, the line (where there is one) and the problem."""

from __future__ import annotations

import re
from pathlib import Path


class KgevalError(Exception):
    """Base class of every error kgeval raises on purpose."""


class InputError(KgevalError):
    """Malformed or inconsistent input: names the file, the 1-based line and the problem."""

    def __init__(self, path: str | Path | None, line: int | None, problem: str):
        self.path = str(path) if path is not None else None
        self.line = line
        self.problem = problem
        # no path: the problem names its argument itself; never a placeholder the user cannot look up
        where = self.path or ""
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {problem}" if where else problem)


class ChecksumError(KgevalError):
    """A file whose SHA-256 differs from the pinned one."""

    def __init__(self, path: str | Path, expected: str, actual: str):
        self.path, self.expected, self.actual = str(path), expected, actual
        super().__init__(f"{path}: SHA-256 mismatch: expected {expected}, got {actual}")


class ConfigError(KgevalError):
    """A configuration that does not validate."""


class CorruptFileError(KgevalError):
    """A score dump, checkpoint or table that fails its checksum or schema check."""

    def __init__(self, path: str | Path, problem: str):
        self.path, self.problem = str(path), problem
        super().__init__(f"{path}: {problem}")


class ScoreError(KgevalError):
    """A model produced NaN or infinite scores."""


class ArgumentError(KgevalError):
    """A bad argument of a Python API call or a command-line option: names the argument and what is allowed.
    Raised as :class:`BadValueError` (also a :class:`ValueError`) or :class:`BadTypeError` (also a
    :class:`TypeError`), so that code catching the built-in exceptions keeps working.

    Attributes:
        argument: the argument's name (``depth``, ``trials``, ``--bootstrap``).
        problem: the message without the argument's name (what a command-line option prints after its name).
    """

    def __init__(self, argument: str, problem: str):
        self.argument, self.problem = argument, problem
        super().__init__(f"{argument}: {problem}")


class BadValueError(ArgumentError, ValueError):
    """An argument of the right type with a value outside what is allowed (out of range, empty, not finite)."""


class BadTypeError(ArgumentError, TypeError):
    """An argument of the wrong type (a float or a bool where an integer is needed, a list where a run is)."""


class MeasureError(KgevalError, ValueError):
    """A measure name the resolver (:mod:`kgeval.metrics.names`) does not know, or a cutoff it does not allow:
    names the measure as written and what is allowed."""

    def __init__(self, name: str, problem: str, what: str = "measure"):
        self.name, self.problem = name, problem
        super().__init__(f"{what} {name!r}: {problem}")


# the temporary names that outputs are written under (kgeval.io.OutputStage): a staging folder inside the output
# folder, and ``.kgeval-part-<host>-<pid>-<8 random characters>-<name>.part`` beside a destination (before it,
# ``.<name>.<8 random characters>.part``)
_STAGING = re.compile(r"/\.kgeval-staging-[A-Za-z0-9._-]+?-\d+-[a-z0-9_]{8}(?=/|\b)")
_PART = re.compile(r"(?<![^/\s'\"(])\.([^/\s'\"]+?)\.[a-z0-9_]{8}\.part\b")
_KGEVAL_PART = re.compile(r"(?<![^/\s'\"(])\.kgeval-part-[A-Za-z0-9._-]+?-\d+-[a-z0-9_]{8}-([^/\s'\"]+?)\.part\b")


def user_paths(text: str) -> str:
    """``text`` with every staging folder or temporary ``.part`` file replaced by the output it becomes: an
    error names the path the user gave or will find, never a temporary one."""
    previous = None
    while previous != text:  # a temporary of a temporary names its destination too
        previous, text = text, _KGEVAL_PART.sub(r"\1", text)
    return _PART.sub(r"\1", _STAGING.sub("", text))


def one_line(exc: BaseException) -> str:
    """An error as ``<path>: <problem>`` on one line, naming the user's paths (:func:`user_paths`)."""
    if isinstance(exc, OSError) and exc.strerror:
        where = exc.filename if exc.filename is not None else ""
        text = f"{where}: {exc.strerror}" if where != "" else exc.strerror
        text += f" (and {exc.filename2})" if exc.filename2 else ""
    else:
        text = " ".join(str(exc).split("\n")) or type(exc).__name__
    return user_paths(text)
