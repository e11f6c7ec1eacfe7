"""Score dumps: everything downstream steps need from one model on one test set, stored once.

A dump is a folder with

* ``questions.parquet``: ``qid`` (published id), ``side`` (0 head, 1 tail), ``entity``, ``relation``,
  ``n_candidates`` (candidates under the macro filter, i.e. |E| minus the train ∪ valid answers);
* ``judged.parquet``: one row per judged entity of a question: ``q`` (row of questions.parquet), ``entity``,
  ``label`` (1 relevant, 0 judged non-relevant), ``depth`` (pooling depth, 0 = original test triple),
  ``score`` (float32), ``n_gt`` / ``n_eq`` (candidates scoring strictly higher / equal, excluding itself),
  ``candidate`` (false if the macro filter removed the entity);
* ``run.parquet``: the top-K candidates of each question in trec_eval order: ``q``, ``rank`` (1-based),
  ``entity``, ``score`` (float32, exact);
* ``scores.npy`` (only where requested, e.g. FB-Test-S): the raw score of every entity for every question as
  float16 (``Q × |E|``). float16 keeps about three significant digits: enough to rebuild pools and plots, not
  to break exact ties; exact values are in the other files;
* ``meta.json``: schema version, model, dataset fingerprint, test set, K, timings and the SHA-256 of every
  file above.

Everything is lossless except ``scores.npy``. Loading verifies each file's SHA-256 and the parquet page
checksums, so a truncated or corrupted dump is reported with its file name instead of being read as data.
``meta.json`` is written last: a folder without it is an incomplete dump.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .data.questions import Questions
from .errors import CorruptFileError
from .io import atomic_path, pause_point, read_json, set_aside, sha256_file, write_json
from .ranking import Judged, Ranking

SCHEMA_VERSION = 1

SCHEMAS = {
    "questions.parquet": pa.schema([("qid", pa.string()), ("side", pa.int8()), ("entity", pa.int32()),
                                    ("relation", pa.int32()), ("n_candidates", pa.int32())]),
    "judged.parquet": pa.schema([("q", pa.int32()), ("entity", pa.int32()), ("label", pa.int8()),
                                 ("depth", pa.int16()), ("score", pa.float32()), ("n_gt", pa.int32()),
                                 ("n_eq", pa.int32()), ("candidate", pa.bool_())]),
    "run.parquet": pa.schema([("q", pa.int32()), ("rank", pa.int32()), ("entity", pa.int32()),
                              ("score", pa.float32())]),
}


def _write_parquet(table: pa.Table, path: Path) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", compression_level=9,
                       use_byte_stream_split=[c for c in table.column_names if c == "score"],
                       write_page_checksum=True, write_statistics=False)


def _read_parquet(path: Path) -> pa.Table:
    name = path.name
    try:
        table = pq.read_table(path, page_checksum_verification=True)
    except (OSError, pa.ArrowException) as exc:
        raise CorruptFileError(path, f"unreadable parquet file: {exc}") from exc
    if not table.schema.equals(SCHEMAS[name], check_metadata=False):
        raise CorruptFileError(path, f"schema {table.schema} differs from the expected {SCHEMAS[name]}")
    return table


def save_ranking(ranking: Ranking, folder: str | Path, meta: dict) -> None:
    """Write a dump folder; ``meta`` (model, dataset, test set, fingerprint, ...) goes into meta.json."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").unlink(missing_ok=True)
    qs = ranking.questions
    tables = {
        "questions.parquet": pa.table({
            "qid": pa.array(qs.qid, pa.string()), "side": pa.array(qs.side, pa.int8()),
            "entity": pa.array(qs.entity, pa.int32()), "relation": pa.array(qs.relation, pa.int32()),
            "n_candidates": pa.array(ranking.n_candidates, pa.int32())}),
        "judged.parquet": pa.table({
            "q": pa.array(ranking.judged.q, pa.int32()), "entity": pa.array(ranking.judged.entity, pa.int32()),
            "label": pa.array(ranking.judged.label, pa.int8()), "depth": pa.array(ranking.judged.depth, pa.int16()),
            "score": pa.array(ranking.score, pa.float32()), "n_gt": pa.array(ranking.n_gt, pa.int32()),
            "n_eq": pa.array(ranking.n_eq, pa.int32()), "candidate": pa.array(ranking.candidate, pa.bool_())}),
    }
    valid = ranking.run_entity >= 0
    qq, rr = np.nonzero(valid)
    tables["run.parquet"] = pa.table({
        "q": pa.array(qq, pa.int32()), "rank": pa.array(rr + 1, pa.int32()),
        "entity": pa.array(ranking.run_entity[valid], pa.int32()),
        "score": pa.array(ranking.run_score[valid], pa.float32())})
    for name, table in tables.items():
        _write_parquet(table.cast(SCHEMAS[name]), folder / name)
    files = list(tables)
    if ranking.scores is not None:
        with atomic_path(folder / "scores.npy") as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, ranking.scores.astype(np.float16), allow_pickle=False)
        files.append("scores.npy")
    else:
        (folder / "scores.npy").unlink(missing_ok=True)
    info = {**ranking.meta, **meta, "schema_version": SCHEMA_VERSION, "k": int(ranking.run_entity.shape[1]),
            "num_entities": int(qs.num_entities), "num_relations": int(qs.num_relations),
            "files": {name: sha256_file(folder / name) for name in files}}
    pause_point("dump_before_meta")
    write_json(folder / "meta.json", info)


@dataclass
class Dump:
    """A loaded score dump (see the module docstring)."""

    path: Path
    meta: dict
    questions: Questions
    n_candidates: np.ndarray
    judged: Judged
    score: np.ndarray
    n_gt: np.ndarray
    n_eq: np.ndarray
    candidate: np.ndarray
    run_entity: np.ndarray
    run_score: np.ndarray

    def scores(self) -> np.ndarray:
        """The float16 full score matrix (only where the dump kept it)."""
        path = self.path / "scores.npy"
        if "scores.npy" not in self.meta["files"]:
            raise CorruptFileError(path, "this dump has no full score matrix")
        return np.load(path, allow_pickle=False)

    @property
    def k(self) -> int:
        return self.run_entity.shape[1]


def load_dump(folder: str | Path, verify: bool = True) -> Dump:
    """Read a score dump, verifying each file against the SHA-256 in ``meta.json`` (unless ``verify`` is false).

    A dump is always derived: an incomplete or corrupted one is set aside as ``<folder>.corrupt`` before the
    error is raised, so that the next run rebuilds it instead of failing on it again."""
    folder = Path(folder)
    try:
        return _load_dump(folder, verify)
    except CorruptFileError as exc:
        if not folder.is_dir():
            raise
        aside = set_aside(folder, str(exc))
        raise CorruptFileError(exc.path, f"{exc.problem}; the dump was set aside as {aside} (safe to delete), "
                                         "a rerun rebuilds it") from exc


def _load_dump(folder: Path, verify: bool) -> Dump:
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        raise CorruptFileError(folder, "incomplete score dump: meta.json is missing")
    try:
        meta = read_json(meta_path)
    except ValueError as exc:
        raise CorruptFileError(meta_path, f"not valid JSON: {exc}") from exc
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise CorruptFileError(meta_path, f"schema version {meta.get('schema_version')} is not {SCHEMA_VERSION}")
    if verify:
        for name, digest in meta["files"].items():
            path = folder / name
            if not path.is_file():
                raise CorruptFileError(path, "missing file of the score dump")
            actual = sha256_file(path)
            if actual != digest:
                raise CorruptFileError(path, f"SHA-256 {actual} differs from {digest} recorded in meta.json")
    q = _read_parquet(folder / "questions.parquet").to_pydict()
    questions = Questions(np.array(q["side"], np.int64), np.array(q["entity"], np.int64),
                          np.array(q["relation"], np.int64), q["qid"], meta["num_entities"], meta["num_relations"])
    j = {c: col.to_numpy() for c, col in zip(SCHEMAS["judged.parquet"].names,
                                              _read_parquet(folder / "judged.parquet").columns)}
    r = {c: col.to_numpy() for c, col in zip(SCHEMAS["run.parquet"].names,
                                              _read_parquet(folder / "run.parquet").columns)}
    Q, K = len(questions), int(meta["k"])
    run_entity = np.full((Q, K), -1, np.int32)
    run_score = np.full((Q, K), np.nan, np.float32)
    if len(r["q"]) and (r["q"].max() >= Q or r["rank"].max() > K or r["rank"].min() < 1):
        raise CorruptFileError(folder / "run.parquet", "question or rank out of range")
    run_entity[r["q"], r["rank"] - 1] = r["entity"]
    run_score[r["q"], r["rank"] - 1] = r["score"]
    judged = Judged(j["q"].astype(np.int64), j["entity"].astype(np.int64), j["label"], j["depth"])
    return Dump(folder, meta, questions, np.array(q["n_candidates"], np.int64), judged,
                j["score"], j["n_gt"].astype(np.int64), j["n_eq"].astype(np.int64), j["candidate"],
                run_entity, run_score)
