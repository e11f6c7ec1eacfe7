"""kgeval: evaluate knowledge-graph-completion models the way information retrieval evaluates search engines.

The Python API (:mod:`kgeval.api`) is importable from here: ``from kgeval import load_testset, evaluate, place``.
It is loaded on first use, so ``import kgeval`` (and the command line's start-up) stays light.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from . import numerics as _numerics

# the reproducible numerical mode (kgeval.numerics): set before numpy or torch first computes anything, so that the
# study's numbers are the same bits on either CPU kind; KGEVAL_NUMERICS=native turns it off
_numerics.apply()

__version__ = "0.1.0"

__all__ = ["__version__", "TestCollection", "Result", "load_testset", "evaluate", "place", "compare",
           "resolve_measures", "DataUnavailableError", "plan", "estimate", "SamplingPlan", "baseline", "reproduce"]

if TYPE_CHECKING:
    from .api import (
        DataUnavailableError,
        Result,
        SamplingPlan,
        TestCollection,
        baseline,
        compare,
        estimate,
        evaluate,
        load_testset,
        place,
        plan,
        reproduce,
        resolve_measures,
    )


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'kgeval' has no attribute {name!r}")


class _RegisterInIrDatasets:
    """kgeval's test collections appear in ir_datasets (``ir_datasets.load("kgeval/fb15k-237/test-s-c")``) once
    both are imported, in either order, without importing ir_datasets (slow) when only kgeval is used: this import
    hook runs :func:`kgeval.integrations.ir_datasets.register` right after ir_datasets' own module."""

    def find_spec(self, name, path=None, target=None):
        if name != "ir_datasets":
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _AfterLoad(spec.loader)
        return spec


class _AfterLoad:
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _register_in_ir_datasets()

    def __getattr__(self, name):
        return getattr(self.loader, name)


def _register_in_ir_datasets() -> None:
    try:
        from .integrations.ir_datasets import register

        register()
    except Exception as exc:  # never break the user's import of ir_datasets
        import warnings

        warnings.warn(f"kgeval: could not register its test collections in ir_datasets: {exc}", stacklevel=2)


if "ir_datasets" in sys.modules:
    _register_in_ir_datasets()
elif not any(isinstance(f, _RegisterInIrDatasets) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterInIrDatasets())
