"""The compared systems' top-k lists, read in one place for bounds, sampling and the judging campaign: from the
score dumps the workflow writes (:func:`load_runs`) or from a study folder (:func:`read_lists`: a results folder's
``scores/<test set>/<system>`` dumps or a reference pack's ``runs/<test set>/top<k>.parquet``), as a
(systems × questions × k) array of entity ids in the questions' order (:func:`stack_lists`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..scores.dumps import Dump, load_dump

RUNS = "runs"  # a reference pack's folder of top-k lists (kgeval.tables.reference writes it)


def top_k(dump: Dump, k: int) -> np.ndarray:
    if dump.k < k:  # a stored run shorter than k would turn unknown positions into absent ones
        raise InputError(dump.path, None, f"its run holds {dump.k} candidates per question, fewer than bounds.k = {k}")
    return dump.run_entity[:, :k].astype(np.int64)


def load_runs(dumps: dict[str, str], k: int) -> tuple[list[str], Dump, np.ndarray]:
    """The systems (sorted), the first system's dump (questions and published judgments) and the (S, Q, k) top
    k of every system; every system must rank the same questions."""
    systems = sorted(dumps)
    loaded = {s: load_dump(dumps[s]) for s in systems}
    first = loaded[systems[0]]
    for s in systems[1:]:
        if list(loaded[s].questions.qid) != list(first.questions.qid):
            raise InputError(dumps[s], None, f"its questions differ from {dumps[systems[0]]}'s; every system must "
                             "rank the same questions of the test set")
    return systems, first, np.stack([top_k(loaded[s], k) for s in systems])


def read_lists(folder: str | Path, testset: str, systems: list[str]) -> tuple[int, dict[str, pd.DataFrame]] | None:
    """The top-k lists of ``systems`` on ``testset`` in a study folder as (k, system → a (questions × k) frame of
    entities indexed by qid): a results folder's score dumps when it has ``scores/<testset>``, else a reference
    pack's ``runs/<testset>/top*.parquet``. None when one of ``systems`` has none (or the pack no lists: packs
    made before the lists were packed)."""
    scores = Path(folder) / "scores" / testset
    if scores.is_dir():
        if not all((scores / s / "meta.json").is_file() for s in systems):
            return None
        dumps = {s: load_dump(scores / s) for s in systems}
        lists = {s: pd.DataFrame(d.run_entity.astype(np.int64), index=np.asarray(d.questions.qid).astype(str))
                 for s, d in dumps.items()}
        return min((d.k for d in dumps.values()), default=0), lists
    found = sorted((Path(folder) / RUNS / testset).glob("top*.parquet"))
    if not found:
        return None
    df = pd.read_parquet(found[0])
    k = int(df["rank"].max())
    lists = {}
    for system in systems:
        sub = df[df["System"].astype(str) == system]
        if sub.empty:
            return None
        lists[system] = sub.pivot(index="qid", columns="rank", values="entity").astype(np.int64)
        lists[system].index = lists[system].index.astype(str)
    return k, lists


def stack_lists(lists: dict[str, pd.DataFrame], systems: list[str], qids, k: int, where) -> np.ndarray:
    """(S, Q, k) entity ids of ``systems``' lists on the questions ``qids`` in their order; ``where`` (a file or
    argument) is named when a question has no list."""
    qids = np.asarray(qids).astype(str)
    missing = next((s for s in systems if not np.isin(qids, lists[s].index).all()), None)
    if missing is not None:
        raise InputError(where, None, f"{missing}'s top-k lists lack questions of the test set: the lists are of "
                                      "another test set")
    return np.stack([lists[s].loc[qids].to_numpy(np.int64)[:, :k] for s in systems])
