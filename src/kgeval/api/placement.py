"""Where an evaluated system stands among the study's systems: :func:`place` and :func:`compare`."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..arguments import check_path, check_strings, kind_of, short_repr
from ..errors import BadTypeError, BadValueError

if TYPE_CHECKING:
    from ..external.comparison import Comparison
from .checks import bound, study_reference
from .evaluation import Result, study_columns


def _check_results(result: Any, argument: str = "result") -> list[Result]:
    """One :class:`Result` or a non-empty list of them."""
    items = [result] if isinstance(result, Result) else result
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence):
        raise BadTypeError(argument, f"{short_repr(result)} is {kind_of(result)}, expected a Result of "
                                     "kgeval.evaluate or a list of them")
    if not items:
        raise BadValueError(argument, "an empty list: give at least one Result of kgeval.evaluate")
    bad = next((r for r in items if not isinstance(r, Result)), None)
    if bad is not None:
        raise BadTypeError(argument, f"{short_repr(bad)} is {kind_of(bad)}, expected a Result of kgeval.evaluate")
    return list(items)


def _study(result: Result, results: str | os.PathLike | None) -> dict[str, Path]:
    return study_reference(result, results).files[result.testset.base]


def place(result: Result | Sequence[Result], results: str | os.PathLike | None = None,
          metrics: Sequence[str] | None = None, trials: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Where each evaluated system stands among the study's systems (the rows of ``kgeval evaluate``'s
    ``placement.csv``).

    One row per (system, metric, study system): the system's value and rank (1 + the study systems strictly
    better), the study system's value, the number of shared items, the paired t-test p-value with Holm's
    correction over the system's comparisons (``t_p``, ``t_p_holm``, ``significant_t``) and the randomised
    Tukey HSD p-value over all systems (``hsd_p``).

    Args:
        result: one or more results of :func:`evaluate` on the same test set.
        results: the study to place among: a results folder or reference pack, or ``"authors:DIR"`` (the authors'
            released tables: rank only, no significance). Default: ``<workdir>/results`` when it holds the test
            set's tables, else the reference pack shipped in ``reference/`` (``default``, then ``smoke``). The
            returned frame's ``attrs["reference"]`` (also printed to stderr) says which was used, with its
            provenance.
        metrics: measure names or registry columns to place on (:func:`resolve_measures`; ``MRR`` is micro and
            macro MRR; default: micro and macro MRR and Hits@10, MAP@20, nDCG@20).
        trials: randomised Tukey HSD trials (default: the test set's config, ``analysis.tukey_trials``; the
            bounds of that key, 10 to 100,000).
        seed: seed of the Tukey HSD permutations (``analysis.seed``'s bounds: an integer ≥ 0).
    """
    from ..external import placement, reference

    if metrics is not None:  # names first: a bad one is refused before any result or reference is looked at
        metrics = check_strings(metrics, "metrics", "metric columns")
    wanted = study_columns(metrics) if metrics else None
    results_list = _check_results(result)
    check_path(results, "results", nullable=True)
    workdir = results_list[0].testset.workdir
    if trials is None:
        trials = results_list[0].testset.config.get("analysis", {}).get("tukey_trials")
    trials = bound(("analysis", "tukey_trials"), workdir).check(trials, "trials")
    seed = bound(("analysis", "seed"), workdir).check(seed, "seed")
    wanted = wanted or list(placement.HEADLINE)
    frames, notes = [], []
    for r in results_list:
        ref = study_reference(r, results)
        evals = {(r.name, r.testset.base): r.evaluation}
        if ref.kind == "authors":
            frames.append(reference.rank_only(evals, ref.tables, wanted))
        else:
            frames.append(placement.placement_table(evals, {r.testset.base: ref.files[r.testset.base]}, wanted,
                                                    trials, seed))
        notes.append(ref.note)
    frames = [f for f in frames if len(f)]
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    out.attrs["reference"] = " ".join(dict.fromkeys(notes))
    print(out.attrs["reference"], file=sys.stderr)
    return out


def _first_repeat(names) -> str | None:
    seen: set = set()
    for n in names:
        if n in seen:
            return n
        seen.add(n)
    return None


def compare(result: Result | Sequence[Result], results: str | os.PathLike | None = None,
            measures: Sequence[str] = ("MRR", "Hits@10", "nDCG@20"), test: str = "student", max_p: float = 0.05,
            trials: int = 1000, seed: int = 0) -> Comparison:
    """A table of the study's systems and the evaluated ones on ``measures`` (registry columns, micro and macro
    where both exist), best first by the first column, with ``evaluated`` marking your systems, and significance
    marks as ``ranx.compare`` has them: for each value, the systems it is significantly better than.

    Args:
        result: one or more results of :func:`evaluate` on the same test set.
        results: the study to compare with (as :func:`place`).
        measures: measure names (:func:`resolve_measures`).
        test: ``"student"``, the paired t-test with Holm's correction over each system's comparisons (the
            ``t_p_holm`` of :func:`place`), or ``"tukey"``, the randomised Tukey HSD over all pairs (``hsd_p``).
        max_p: significance level.
        trials: the Tukey HSD's permutations.
        seed: the seed of the Tukey HSD's permutations.

    Returns:
        A :class:`~kgeval.external.comparison.Comparison`; ``.markdown()`` and ``.latex()`` give ranx's table. With the authors' released
        tables (``authors:DIR``: no per-item values) no test is possible and no mark is set.
    """
    from ..external.comparison import TESTS, Comparison, better_marks, pvalue_matrix
    from ..external.placement import ITEM_KEYS, _study_items, item_kind, study_systems
    from ..external.report import letters
    from ..metrics.registry import higher_is_better

    measures = check_strings(measures, "measures", "measure names")
    columns = study_columns(measures)  # names first, as place does
    results_list = _check_results(result)
    check_path(results, "results", nullable=True)
    # a name twice would make the table's rows (columns) ambiguous and its marks point at either one
    twice = _first_repeat(measures) or _first_repeat(columns)
    if twice is not None:
        raise BadValueError("measures", f"{twice!r} is named twice (or two names give the same column)")
    twice = _first_repeat([r.name for r in results_list])
    if twice is not None:
        raise BadValueError("result", f"two results are named {twice!r}: give each system its own name "
                                      "(evaluate(..., name=...))")
    if test not in TESTS:
        raise BadValueError("test", f"unknown test {test!r}: {' or '.join(TESTS)}")
    if len({r.testset.base for r in results_list}) > 1:
        raise BadValueError("result", "compare takes results on one test set: "
                                      + ", ".join(sorted({r.testset.base for r in results_list})))
    ref = study_reference(results_list[0], results)
    study = ref.files[results_list[0].testset.base]

    table = study_systems(study).copy()
    table["evaluated"] = False
    own = pd.concat([r.table.assign(evaluated=True) for r in results_list], ignore_index=True)
    table = pd.concat([table, own], ignore_index=True)
    columns = [c for c in columns if c in table.columns]
    table = table[["System", *columns, "evaluated"]]
    first = columns[0]
    table = table.sort_values(first, ascending=not higher_is_better(first), kind="stable").reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    keys = letters(len(table))
    table.insert(1, "#", keys)
    systems = table["System"].astype(str).tolist()
    for c in columns:
        marks: list[list[int]] = [[] for _ in systems]
        kind = item_kind(c)
        if kind in study:  # a results folder or pack: per-item values (the authors' tables have none)
            wide = _study_items(study[kind], kind, [c])
            if c in wide.columns:
                wide = wide.pivot_table(index=ITEM_KEYS[kind], columns="System", values=c, aggfunc="first")
                for r in results_list:
                    items = r.evaluation.per_answer if kind == "micro" else r.evaluation.per_question
                    wide = wide.join(items.set_index(ITEM_KEYS[kind])[c].rename(r.name), how="inner")
                X = wide.reindex(columns=systems).dropna().to_numpy()
                P = pvalue_matrix(X, test, trials, seed)
                marks = better_marks(table[c].to_numpy(dtype=np.float64), P, higher_is_better(c), max_p)
        table[f"{c}_better_than"] = [",".join(keys[j] for j in m) for m in marks]
    out = Comparison(table)
    out.attrs.update(test=test, max_p=max_p, columns=columns, reference=ref.note)
    return out

