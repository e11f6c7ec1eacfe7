"""``reproduce``: is a rerun bit-identical to a reference pack or another run (:mod:`kgeval.reproduce`);
``reproduce_report`` is the text ``kgeval reproduce`` prints for it."""

from __future__ import annotations

from ..reproduce.compare import Comparison, reproduce
from ..reproduce.report import render as reproduce_report

__all__ = ["Comparison", "reproduce", "reproduce_report"]
