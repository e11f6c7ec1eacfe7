"""The API's argument checks (:mod:`kgeval.arguments`, bounds from ``config/schema.yaml``) and the study a
result is compared with (:func:`study_reference`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..arguments import check_path, kind_of, short_repr
from ..errors import BadTypeError, BadValueError


def bound(keys: tuple[str, ...], workdir: str | os.PathLike | None = None):
    from ..config import schema_bound, schema_file

    return schema_bound(keys, schema_file(workdir))


def bounds(keys: list[tuple[str, ...]], workdir: str | os.PathLike | None = None) -> list:
    """:func:`bound` of several keys at once: one look-up of the schema."""
    from ..config import schema_bounds

    return schema_bounds(keys, workdir)


def check_run(run: Any) -> None:
    """A run is a DataFrame, a mapping ``{qid: {docno: score}}`` or a path; anything else is refused here rather
    than failing inside the reader."""
    if isinstance(run, pd.DataFrame | str | os.PathLike):
        if not isinstance(run, pd.DataFrame):
            check_path(run, "run")
        return
    if not isinstance(run, Mapping):
        raise BadTypeError("run", f"{short_repr(run)} is {kind_of(run)}, expected a DataFrame (qid, docno, score), "
                                  "a dict {qid: {docno: score}} or a run file's path")
    bad = next(((q, d) for q, d in run.items() if not isinstance(d, Mapping)), None)
    if bad is not None:
        raise BadTypeError("run", f"question {short_repr(bad[0])} maps to {kind_of(bad[1])}, expected a dict "
                                  "{docno: score} (the run is {qid: {docno: score}})")


def check_scores(df: pd.DataFrame) -> None:
    """Every row of a run given in memory has a finite numeric score (vectorised)."""
    if not len(df):
        raise BadValueError("run", "an empty run: no (qid, docno, score) row")
    raw = df["score"]
    # True would read as 1.0; only an object column can hold a bool among numbers (a slow path anyway)
    if raw.dtype == bool or (raw.dtype == object and raw.map(type).eq(bool).any()):
        raise BadTypeError("run", "a score is a bool, expected a number")
    scores = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):
        i = bad[0]
        score = raw.iloc[i].item() if hasattr(raw.iloc[i], "item") else raw.iloc[i]
        where = f"question {short_repr(df['qid'].iloc[i])}, document {short_repr(df['docno'].iloc[i])}"
        raise BadValueError("run", f"{where}: score {short_repr(score)} is not a finite number "
                                   f"({len(bad):,} row(s) in all)")


def study_reference(result, results: str | os.PathLike | None):
    """The reference :func:`~kgeval.api.placement.place`, :func:`~kgeval.api.placement.compare` and
    :func:`~kgeval.api.sampling.plan` use (:func:`kgeval.external.reference.resolve`): the
    given folder (or ``authors:DIR``), else ``<workdir>/results`` when it holds the test set's tables, else the
    shipped reference pack. ``result``: a :class:`kgeval.api.evaluation.Result` (not imported here: evaluation
    imports these checks)."""
    from ..external import reference

    if result.testset.depth is not None:
        raise ValueError(f"placement compares with the study's {result.testset.base} under all its judgments; "
                         f"evaluate on {result.testset.base} without a depth")
    spec = "auto" if results is None else str(results)
    local = result.testset.workdir / "results"
    ref = reference.resolve(spec, local, [result.testset.base], names=[result.name])
    if ref is None or result.testset.base not in ref.files:
        raise FileNotFoundError(reference.missing_note(spec, local, [result.testset.base]))
    return ref
