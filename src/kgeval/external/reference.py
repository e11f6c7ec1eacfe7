"""The study systems a ``kgeval evaluate`` places an outside system among: a results folder, a shipped reference
pack, or the authors' released aggregate tables.

**Reference pack** (:func:`kgeval.tables.reference.pack`, the workflow's ``pack_reference`` rule): what placement reads of a results
folder and nothing else, small enough to commit (``reference/<config name>/`` at the repository root)::

    metrics/<test set>/evaluation.csv       the results' table, byte for byte (a dozen rows)
    metrics/<test set>/per_answer.parquet   qid, entity, System, the headline micro metrics
    metrics/<test set>/per_question.parquet qid, System, the headline macro and trec metrics
    provenance.json                         kgeval version and commit, date, machine and CPU, config hash, cores

The parquet files are zstd-compressed with dictionary-encoded ``qid`` and ``System``, ``entity`` as int32 and a
metric as float32 only where that is exact (every value survives the round trip), else float64, so placement from
the pack equals placement from the results folder it was packed from. The layout is that of a results folder, so
:func:`kgeval.external.placement.study_files` reads either.

**Which reference** (:func:`resolve`): ``auto`` takes the local results folder when it holds tables of the test
sets, else the first shipped pack (``reference/default``, then ``reference/smoke``) that does; a folder is read as
a results folder or a pack; ``authors:DIR`` reads the authors' released tables (``DIR/<test set>/evaluation.csv``,
one row per system, as ``kgeval reanalyze`` reads them) for a **rank-only** placement: aggregate values carry no
per-item values, so no significance test is possible (:func:`rank_only`).

**The study's top-k lists** (:func:`study_lists`, :func:`study_entity`): what the pair decisions and
:func:`kgeval.plan` read of a reference besides its tables, through :func:`kgeval.judgments.lists.read_lists`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..judgments.lists import read_lists
from ..metrics.registry import higher_is_better, label
from ..tables.reference import describe, read_provenance
from . import placement

log = logging.getLogger(__name__)

SHIPPED = ("default", "smoke")  # searched in this order under reference/; default: a default run's pack
AUTHORS_PREFIX = "authors:"
NO_SIGNIFICANCE = ("Rank only: the authors' released tables hold one aggregate value per system, no per-answer or "
                   "per-question values, so no significance test is possible; a rank says only how many of their "
                   "systems have a better value.")


# ---- choosing the reference -------------------------------------------------------------------------------------
@dataclass
class Reference:
    """The study systems to place among. ``kind``: ``results``, ``pack`` or ``authors``; ``files``: per test set,
    :func:`placement.study_files`' paths (``results``, ``pack``) or the authors' ``evaluation`` table."""

    kind: str
    folder: Path
    files: dict[str, dict[str, Path]]
    provenance: dict[str, Any] | None = None
    note: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)  # authors: the released tables


def shipped_folders(roots: list[Path] | None = None) -> list[Path]:
    """The shipped packs, in the order ``auto`` tries them: ``reference/default`` then ``reference/smoke``, in the
    working folder and in the checkout kgeval runs from."""
    if roots is None:
        from ..home import resource_root

        installed = resource_root()  # the wheel's copy of reference/, else the checkout's
        roots = [Path("."), installed] if installed is not None else [Path(".")]
    seen, out = set(), []
    for root in roots:
        for name in SHIPPED:
            p = root / "reference" / name
            key = p.resolve()
            if key not in seen and (p / "metrics").is_dir():
                seen.add(key)
                out.append(p)
    return out


def _folder_reference(folder: Path, testsets: list[str]) -> Reference | None:
    files = placement.study_files(folder, testsets)
    if not files:
        return None
    prov = read_provenance(folder)
    return Reference("pack" if prov is not None else "results", folder, files, prov)


def authors_tables(folder: str | Path, testsets: list[str]) -> dict[str, pd.DataFrame]:
    """``DIR/<test set>/evaluation.csv`` of the authors' release, one row per system (column ``System``)."""
    from ..analysis.reanalyze import read_table

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, None, "not found: --reference authors:DIR needs the authors' result folder "
                                       "(DIR/<test set>/evaluation.csv)")
    return {t: read_table(folder / t / "evaluation.csv") for t in testsets
            if (folder / t / "evaluation.csv").is_file()}


def resolve(spec: str, results: str | Path, testsets: list[str], roots: list[Path] | None = None,
            names: list[str] | None = None) -> Reference | None:
    """The reference ``spec`` names (``auto``, a folder, or ``authors:DIR``), with the sentence the output says
    about it; None when there is nothing to place among (``note`` then says why, via :func:`missing_note`).
    ``names``: the evaluated systems' names, refused in one line where one is also a system of the reference
    (its rows would be indistinguishable)."""
    ref = _resolve(spec, Path(results), testsets, roots)
    if ref is not None and names:
        _check_names(ref, names)
    return ref


def _check_names(ref: Reference, names: list[str]) -> None:
    if ref.kind != "authors":
        placement.check_names(ref.files, names)
        return
    for t, table in ref.tables.items():
        clash = placement.name_clashes(names, table["System"].astype(str))
        if clash:
            raise InputError(ref.files[t]["evaluation"], None, f"system name {clash[0]!r} is also a released "
                                                                "system here; label yours with --name")


def _resolve(spec: str, results: Path, testsets: list[str], roots: list[Path] | None) -> Reference | None:
    if spec.startswith(AUTHORS_PREFIX):
        folder = Path(spec[len(AUTHORS_PREFIX):])
        tables = authors_tables(folder, testsets)
        if not tables:
            return None
        return Reference("authors", folder, {t: {"evaluation": folder / t / "evaluation.csv"} for t in tables},
                         note=f"Ranked among the authors' released systems of {folder} (rank only). "
                              + NO_SIGNIFICANCE, tables=tables)
    candidates = [results] + shipped_folders(roots) if spec == "auto" else [Path(spec)]
    for folder in candidates:
        ref = _folder_reference(folder, testsets)
        if ref is None:
            continue
        where = f"{folder}/metrics/"
        if ref.kind == "pack":
            shipped = "the shipped reference" if spec == "auto" else "the reference pack"
            ref.note = (f"Placed among the study's systems of {shipped} {where}, {describe(ref.provenance)}"
                        + (f"; no local results folder {results} with these test sets" if spec == "auto" else "")
                        + ".")
        else:
            ref.note = f"Placed among the study's systems of {where} (local results)."
        return ref
    return None


def missing_note(spec: str, results: str | Path, testsets: list[str]) -> str:
    if spec.startswith(AUTHORS_PREFIX):
        return (f"{spec[len(AUTHORS_PREFIX):]} holds no released table of {', '.join(testsets)} "
                "(<test set>/evaluation.csv): placement skipped.")
    if spec != "auto":
        return f"{spec} holds no metric tables of {', '.join(testsets)}: placement skipped."
    if not Path(results).is_dir():
        return (f"No results folder {results} and no shipped reference (reference/default, reference/smoke) with "
                f"tables of {', '.join(testsets)}: placement skipped (evaluation.csv is written).")
    return (f"{results} holds no metric tables of {', '.join(testsets)} and no shipped reference does: placement "
            "skipped.")


# ---- rank-only placement ----------------------------------------------------------------------------------------
def rank_only(evals: dict[tuple[str, str], Any], tables: dict[str, pd.DataFrame],
              metrics: list[str] = placement.HEADLINE) -> pd.DataFrame:
    """Placement rows (the columns of :func:`placement.place`) from aggregate tables alone: the rank is 1 + the
    number of released systems strictly better; the p-values are NaN and nothing is significant."""
    frames = []
    for (name, t), ev in evals.items():
        evaluation = tables.get(t)
        if evaluation is None:
            continue
        systems = list(evaluation["System"].astype(str))
        for col in metrics:
            if col not in evaluation.columns:
                continue
            higher = higher_is_better(col)
            value = float(ev.summary.get(col, np.nan))
            theirs = pd.to_numeric(evaluation[col], errors="coerce").to_numpy(np.float64)
            rank = 1 + int(((theirs > value) if higher else (theirs < value)).sum()) if np.isfinite(value) else np.nan
            diff = value - theirs
            frames.append(pd.DataFrame({
                "System": name, "TestSet": t, "Metric": col, "Label": label(col), "higher_is_better": higher,
                "value": value, "rank": rank, "systems": len(systems) + 1, "Opponent": systems,
                "opponent_value": theirs, "difference": diff, "better": np.where(higher, diff > 0, diff < 0),
                "items": 0, "t_p": np.nan, "t_p_holm": np.nan, "hsd_p": np.nan}))
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out["significant_t"] = False
    out["significant_hsd"] = False
    return out


# ---- the study's top-k lists ------------------------------------------------------------------------------------
NO_DUMPS = ("pair decisions need the study systems' top-k lists: this reference pack has none (packs made before "
            "they were packed hold per-item values only)")


def study_lists(ref: Reference, t: str, opponents: list[str]) -> tuple[int, dict] | str:
    """The study systems' top-k lists on ``t`` as (k, system → (questions × k) frame of entities by qid), from
    the results folder's score dumps or the pack's ``runs/`` (:func:`kgeval.judgments.lists.read_lists`); or the
    sentence saying why there are none."""
    if ref.kind != "pack":
        lacking = [s for s in opponents if not (Path(ref.folder) / "scores" / t / s / "meta.json").is_file()]
        if lacking:
            log.info("pair decisions on %s skipped: no dump of %s under %s", t, ", ".join(lacking), ref.folder)
            return (f"Pair decisions on {t} need the study systems' score dumps: not available in "
                    f"{ref.folder}/scores/{t} ({', '.join(lacking)} missing).")
    found = read_lists(ref.folder, t, opponents)
    return found if found is not None else f"Pair decisions on {t}: {NO_DUMPS}."


def in_order(lists: dict[str, pd.DataFrame], systems: list[str], qids: np.ndarray, k: int) -> np.ndarray:
    """The (S, Q, ≤ k) top k of ``systems`` (frames of :func:`study_lists`) on the questions ``qids`` in order."""
    return np.stack([lists[s].loc[qids].to_numpy(np.int64)[:, :k] for s in systems])


def study_entity(ref: Reference, t: str, qids: np.ndarray, k: int) -> tuple[list[str], int, np.ndarray]:
    """Every study system on ``t`` (the prior learns from all of them, whoever is compared), the length of their
    lists and their top k on the questions ``qids`` in order (:func:`kgeval.plan`); FileNotFoundError with the
    reason when the reference holds no lists."""
    study = list(placement.study_systems(ref.files[t])["System"].astype(str))
    found = study_lists(ref, t, study)
    if isinstance(found, str):
        raise FileNotFoundError(found)
    return study, found[0], in_order(found[1], study, qids, k)
