"""The compared systems' top-k lists, read in one place for bounds, sampling and the judging campaign: from the
score dumps the workflow writes (:func:`load_runs`) or from a study folder (:func:`read_lists`: a results folder's
``scores/<test set>/<system>`` dumps or a reference pack's ``runs/<test set>/top<k>.parquet``) or from a pack's
lists file (:func:`pack_array`, the (systems × questions × k) array of entity ids in the questions' order).
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
    df = pack_table(found[0])
    k = int(df["rank"].max())
    lists = {}
    for system in systems:
        sub = df[df["System"].astype(str) == system]
        if sub.empty:
            return None
        lists[system] = sub.pivot(index="qid", columns="rank", values="entity").astype(np.int64)
        lists[system].index = lists[system].index.astype(str)
    return k, lists


def pack_table(top: str | Path) -> pd.DataFrame:
    """A pack's ``top<k>.parquet``: System, qid, rank, entity, one row per list position."""
    try:
        return pd.read_parquet(top, columns=["System", "qid", "rank", "entity"])
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(top, None, f"cannot read a reference pack's top-k lists: {exc}") from None


def pack_array(top: str | Path, qids, k: int, questions_file) -> tuple[list[str], np.ndarray]:
    """The systems (sorted) of a pack's ``top<k>.parquet`` and their (S, Q, k) lists on the questions ``qids`` in
    their order (−1 where a list is shorter); ``questions_file`` is named when a list's question is not one of
    ``qids``."""
    runs = pack_table(top)
    systems = sorted(runs["System"].astype(str).unique())
    q = runs["qid"].astype(str).map({n: i for i, n in enumerate(qids)})
    if q.isna().any():
        raise InputError(top, None, f"question {runs['qid'].astype(str)[q.isna()].iloc[0]} is not a question of "
                                    f"{questions_file}: the lists are of another test set")
    rank = runs["rank"].to_numpy()
    if rank.min(initial=1) < 1 or rank.max(initial=1) > k:
        raise InputError(top, None, f"ranks {rank.min()}–{rank.max()}: expected 1–{k}")
    entity = np.full((len(systems), len(qids), k), -1, np.int64)
    s = runs["System"].astype(str).map({n: i for i, n in enumerate(systems)}).to_numpy()
    entity[s, q.to_numpy(int), rank - 1] = runs["entity"].to_numpy()
    return systems, entity
