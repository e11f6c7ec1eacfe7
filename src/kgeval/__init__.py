"""kgeval: evaluate knowledge-graph-completion models the way information retrieval evaluates search engines.

The Python API (:mod:`kgeval.api`) is importable from here: ``from kgeval import load_testset, evaluate, place``.
It is loaded on first use, so ``import kgeval`` (and the command line's start-up) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["__version__", "TestCollection", "Result", "load_testset", "evaluate", "place", "compare",
           "resolve_measures", "DataUnavailableError"]

if TYPE_CHECKING:
    from .api import (
        DataUnavailableError,
        Result,
        TestCollection,
        compare,
        evaluate,
        load_testset,
        place,
        resolve_measures,
    )


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'kgeval' has no attribute {name!r}")
