"""Bounded arguments: one check of a value against a type and bounds, shared by the Python API (:mod:`kgeval.api`),
the command line's option types (:mod:`kgeval.cli`) and the config schema's type checks (:mod:`kgeval.config`), so
that an argument, an option and the config key it stands for accept the same values and refuse the others in the
same words.

Bounds are the JSON-schema keywords config/schema.yaml writes (``minimum``, ``maximum``, ``exclusiveMinimum``,
``exclusiveMaximum``); :meth:`Bounded.from_schema` reads them from a key's schema, so the schema stays the one place
bounds live. The rules everywhere:

- an integer is an ``int`` (or numpy integer), never a ``bool`` and never a float, not even ``200.0``;
- a number is an ``int`` or ``float`` (or numpy's), never a ``bool``, never NaN and never infinite: NaN compares
  false with every bound, so it would pass them all, and no argument or config key of kgeval means "unbounded"
  by infinity;
- a name is a label that also becomes a file or folder name (no separator, no ``.``/``..``, nothing empty or
  invisible).

A refusal is a :class:`~kgeval.errors.BadValueError` (a :class:`ValueError`) or a
:class:`~kgeval.errors.BadTypeError` (a :class:`TypeError`) whose message starts with the argument's name; its
``problem`` is the message without the name, what the command line prints after ``argument --option:``. Messages
quote a value through :func:`short_repr`, never its whole ``repr``.
"""

from __future__ import annotations

import math
import numbers
import os
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import BadTypeError, BadValueError

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxlevel = 3


def short_repr(value: Any) -> str:
    """A ``repr`` of at most a few dozen characters, built without the whole ``repr`` of a container (a config
    value may be a huge nested list)."""
    return _REPR.repr(value)


def is_integer(value: Any) -> bool:
    """An integer in the strict sense: ``int`` or a numpy integer, not ``bool``, not a whole float."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A finite real number, not ``bool``: NaN and ±infinity are not numbers to kgeval."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    return True if isinstance(value, numbers.Integral) else math.isfinite(value)


def kind_of(value: Any) -> str:
    """What a value is, in the words of a refusal."""
    if isinstance(value, bool):
        return "a bool"
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and not math.isfinite(value):
        return "not a finite number"
    name = type(value).__name__
    return f"a{'n' if name[:1] in 'aeiou' else ''} {name}"


@dataclass(frozen=True)
class Bounded:
    """An integer or a number within bounds (inclusive ``minimum``/``maximum``, exclusive ``exclusive_*``);
    ``nullable`` admits ``None``."""

    kind: str = "integer"  # "integer" or "number"
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    nullable: bool = False

    @classmethod
    def from_schema(cls, spec: Mapping[str, Any]) -> Bounded:
        """The bounds of one key of config/schema.yaml (``type`` integer or number, maybe with ``null``)."""
        types = spec.get("type", "number")
        types = [types] if isinstance(types, str) else list(types)
        kind = "integer" if "integer" in types else "number"
        return cls(kind, spec.get("minimum"), spec.get("maximum"), spec.get("exclusiveMinimum"),
                   spec.get("exclusiveMaximum"), "null" in types)

    def bounds(self) -> tuple[float | None, float | None]:
        """The lowest and highest bound, inclusive or not."""
        lo = self.minimum if self.minimum is not None else self.exclusive_minimum
        hi = self.maximum if self.maximum is not None else self.exclusive_maximum
        return lo, hi

    def describe(self) -> str:
        """``an integer from 20 to 100,000``, ``a number > 0 and < 1``, ``an integer ≥ 0``."""
        what = "an integer" if self.kind == "integer" else "a number"
        lo = [f"≥ {self.minimum:,}"] if self.minimum is not None else (
            [f"> {self.exclusive_minimum:,}"] if self.exclusive_minimum is not None else [])
        hi = [f"≤ {self.maximum:,}"] if self.maximum is not None else (
            [f"< {self.exclusive_maximum:,}"] if self.exclusive_maximum is not None else [])
        if self.minimum is not None and self.maximum is not None:
            text = f"{what} from {self.minimum:,} to {self.maximum:,}"
        else:
            text = " and ".join([f"{what} {' and '.join(lo)}"] + hi) if lo else (
                f"{what} {hi[0]}" if hi else what)
        return text + (" (or null)" if self.nullable else "")

    def within(self, value: float) -> bool:
        return not ((self.minimum is not None and value < self.minimum)
                    or (self.maximum is not None and value > self.maximum)
                    or (self.exclusive_minimum is not None and value <= self.exclusive_minimum)
                    or (self.exclusive_maximum is not None and value >= self.exclusive_maximum))

    def check(self, value: Any, argument: str) -> Any:
        """``value`` itself when it is of the kind and within the bounds, else a refusal naming ``argument``."""
        if value is None and self.nullable:
            return None
        ok = is_integer(value) if self.kind == "integer" else is_number(value)
        if not ok:
            # NaN and infinity are floats of the right type and the wrong value
            non_finite = kind_of(value) == "not a finite number"
            error = BadValueError if non_finite else BadTypeError
            raise error(argument, f"{short_repr(value)} is {kind_of(value)}, expected {self.describe()}")
        if not self.within(value):
            raise BadValueError(argument, f"{value} is out of range: expected {self.describe()}")
        return value

    def parse(self, text: str, argument: str) -> Any:
        """A command-line value: the text as an integer (or number), then :meth:`check`."""
        try:
            value = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            raise BadValueError(argument, f"{text!r} is not {self.describe()}") from None
        if not is_number(value):
            raise BadValueError(argument, f"{text} is not {self.describe()}")
        if not self.within(value):
            raise BadValueError(argument, f"{text} is out of range: expected {self.describe()}")
        return value


def label_problem(text: str) -> str | None:
    """Why ``text`` cannot be a label that also becomes a file or folder name, or None."""
    bad = next((c for c in text if ord(c) < 32 or ord(c) == 127), None)
    if not text.strip():
        return "a name may not be empty"
    if bad is not None:
        return f"{text!r}: a name may not hold control characters"
    if text != text.strip():
        return f"{text!r}: a name may not begin or end with whitespace"
    if "/" in text or "\\" in text or (os.altsep and os.altsep in text) or text in (".", ".."):
        return f"{text!r}: a name is a label, not a path (no '/', '\\', '.' or '..')"
    return None


def check_name(value: Any, argument: str) -> str:
    """A label that also becomes a file or folder name (a system's name, a dataset's)."""
    if not isinstance(value, str):
        raise BadTypeError(argument, f"{short_repr(value)} is {kind_of(value)}, expected a name (a str)")
    problem = label_problem(value)
    if problem is not None:
        raise BadValueError(argument, problem)
    return value


def check_flag(value: Any, argument: str) -> bool:
    """True or False (numpy's bool too), not 0, 1 or a string."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise BadTypeError(argument, f"{short_repr(value)} is {kind_of(value)}, expected True or False")


def check_path(value: Any, argument: str, nullable: bool = False) -> Any:
    """A path: a ``str`` or an ``os.PathLike`` (``None`` when ``nullable``); not bytes, not empty."""
    if value is None and nullable:
        return None
    if not isinstance(value, str | os.PathLike) or isinstance(os.fspath(value), bytes):
        raise BadTypeError(argument, f"{short_repr(value)} is {kind_of(value)}, expected a path (str or os.PathLike)"
                           + (" or None" if nullable else ""))
    if not os.fspath(value):
        raise BadValueError(argument, "an empty path")
    return value


def check_strings(value: Any, argument: str, what: str = "names") -> list[str]:
    """A non-empty list (or tuple) of strings; a single string is refused rather than read letter by letter."""
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        hint = f" (write [{value!r}])" if isinstance(value, str) and len(value) <= 60 else ""
        raise BadTypeError(argument, f"{short_repr(value)} is {kind_of(value)}, expected a list of {what}{hint}")
    if not value:
        raise BadValueError(argument, f"an empty list: give at least one of the {what}")
    bad = next((v for v in value if not isinstance(v, str)), None)
    if bad is not None:
        raise BadTypeError(argument, f"{short_repr(bad)} is {kind_of(bad)}, expected a list of {what} (str)")
    return list(value)
