"""Declared model hyperparameters: type and bounds of every constructor argument a config may set.

Each model class declares ``HPARAMS = {name: HParam(...)}``; :func:`declared_hparams` merges the declarations
over the class hierarchy (a subclass overrides its base). The config validator (``kgeval.config``) checks every
``models/<name>/model`` value against them before any job starts, so ``dim: -3``, ``dim: "32"`` or
``dim: 32.5`` is refused naming the model and the key instead of failing deep inside training.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_TYPE_NAMES = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string"}


@dataclass(frozen=True)
class HParam:
    """One hyperparameter: ``kind`` is int, float, bool or str; ``lo``/``hi`` are bounds (inclusive unless
    ``lo_open``/``hi_open``); ``choices`` the admitted values; ``nullable`` admits null; ``multiple_of`` an
    integer step; ``pair`` admits a list of two such integers too (a kernel given as height and width)."""

    kind: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple[Any, ...] | None = None
    nullable: bool = False
    multiple_of: int | None = None
    pair: bool = False

    def expected(self) -> str:
        """What a valid value looks like, for the error message."""
        if self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        else:
            text = _TYPE_NAMES[self.kind]
            bounds = []
            if self.lo is not None:
                bounds.append(f"{'>' if self.lo_open else '>='} {self.lo:g}")
            if self.hi is not None:
                bounds.append(f"{'<' if self.hi_open else '<='} {self.hi:g}")
            if bounds:
                text += " " + " and ".join(bounds)
            if self.multiple_of:
                text += f", a multiple of {self.multiple_of}"
            if self.pair:
                text += " (or a list of two)"
        return text + (" or null" if self.nullable else "")

    def problem(self, value: Any) -> str | None:
        """None when ``value`` is admitted, else why not (naming what was expected)."""
        if value is None:
            return None if self.nullable else f"null is not allowed; expected {self.expected()}"
        if self.pair and isinstance(value, list):
            if len(value) != 2:
                return f"{value!r} is a list of {len(value)}; expected {self.expected()}"
            for v in value:
                p = self._scalar(v)
                if p:
                    return p
            return None
        return self._scalar(value)

    def _scalar(self, value: Any) -> str | None:
        # bool is a subclass of int in Python: `dim: true` must not pass as 1
        ok = {"int": isinstance(value, int) and not isinstance(value, bool),
              "float": isinstance(value, (int, float)) and not isinstance(value, bool),
              "bool": isinstance(value, bool),
              "str": isinstance(value, str)}[self.kind]
        if not ok:
            return f"{value!r} ({type(value).__name__}) is not {self.expected()}"
        if self.choices is not None:
            return None if value in self.choices else f"{value!r} is not {self.expected()}"
        if self.kind in ("int", "float"):
            if value != value or value in (float("inf"), float("-inf")):
                return f"{value!r} is not {self.expected()}"
            below = self.lo is not None and (value <= self.lo if self.lo_open else value < self.lo)
            above = self.hi is not None and (value >= self.hi if self.hi_open else value > self.hi)
            if below or above or (self.multiple_of and value % self.multiple_of):
                return f"{value!r} is not {self.expected()}"
        return None


def Int(lo: float | None = 1, hi: float | None = None, **kw: Any) -> HParam:
    return HParam("int", lo, hi, **kw)


def Float(lo: float | None = None, hi: float | None = None, **kw: Any) -> HParam:
    return HParam("float", lo, hi, **kw)


def Bool() -> HParam:
    return HParam("bool")


def Choice(*choices: Any) -> HParam:
    kind = "str" if all(isinstance(c, str) for c in choices) else "int"
    return HParam(kind, choices=tuple(choices))


#: a dropout probability: [0, 1) (p = 1 would zero every activation)
DROPOUT = Float(0, 1, hi_open=True)
#: a positive scale (standard deviation, range, budget) that may be left to its default (null)
POSITIVE_OR_NULL = Float(0, lo_open=True, nullable=True)
INIT = Choice("normal", "xavier", "uniform")

#: the arguments of ``KGEModel.__init__``
BASE = {"dim": Int(1, 100_000), "reciprocal": Bool(), "chunk_budget_mb": Float(0, lo_open=True)}


def declared_hparams(cls: type) -> dict[str, HParam]:
    """The hyperparameters a model class declares, merged over its class hierarchy (subclasses win)."""
    out: dict[str, HParam] = {}
    for klass in reversed(cls.__mro__):
        out.update(vars(klass).get("HPARAMS", {}))
    return out


def check_hparams(cls: type, values: dict[str, Any]) -> tuple[str, str] | None:
    """The first ``(key, problem)`` among ``values`` that the class's declarations refuse, else None.
    Keys the class does not declare are left to the caller (checked against the constructor's signature)."""
    declared = declared_hparams(cls)
    for key in sorted(values):
        if key in declared:
            problem = declared[key].problem(values[key])
            if problem:
                return key, problem
    return None
