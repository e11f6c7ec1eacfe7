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

Schema version 2 (written only for a ranking that needs it: an external TREC run, ``kgeval.external.runfile``)
adds to version 1

* ``judged.parquet`` column ``retrieved`` (bool): false where the judged entity lies beyond the run's depth, so
  its rank is unknown and it counts as not retrieved (``score`` NaN, ``n_gt`` = the question's retrieved
  candidates, ``n_eq`` 0);
* ``score`` columns of ``judged.parquet`` and ``run.parquet`` as float64: a run file's scores are text, read as
  doubles (as trec_eval reads them); rounding them to float32 could create ties the file does not have;
* ``meta.json`` keys ``run_depth`` (most lines of one question in the run file) and ``run_complete`` (the run
  ranks every candidate of every question, so ranks beyond any cut-off are known).

Every dump kgeval writes from a model stays version 1, byte for byte as before; version 1 loads with every
judged entity retrieved.

Everything is lossless except ``scores.npy``. Loading verifies each file's SHA-256 and the parquet page
checksums, so a truncated or corrupted dump is reported with its file name instead of being read as data.
``meta.json`` is written last: a folder without it is an incomplete dump.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..data.judged import Judged
from ..data.questions import Questions
from ..errors import CorruptFileError, InputError
from ..io import atomic_path, in_workflow_job, pause_point, read_json, set_aside, sha256_file, write_json

if TYPE_CHECKING:  # torch (ranking's import) costs seconds of every job that only reads a dump
    from .ranking import Ranking

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)

SCHEMAS_V1 = {
    "questions.parquet": pa.schema([("qid", pa.string()), ("side", pa.int8()), ("entity", pa.int32()),
                                    ("relation", pa.int32()), ("n_candidates", pa.int32())]),
    "judged.parquet": pa.schema([("q", pa.int32()), ("entity", pa.int32()), ("label", pa.int8()),
                                 ("depth", pa.int16()), ("score", pa.float32()), ("n_gt", pa.int32()),
                                 ("n_eq", pa.int32()), ("candidate", pa.bool_())]),
    "run.parquet": pa.schema([("q", pa.int32()), ("rank", pa.int32()), ("entity", pa.int32()),
                              ("score", pa.float32())]),
}
SCHEMAS_V2 = {
    "questions.parquet": SCHEMAS_V1["questions.parquet"],
    "judged.parquet": pa.schema([(f.name, pa.float64() if f.name == "score" else f.type)
                                 for f in SCHEMAS_V1["judged.parquet"]] + [("retrieved", pa.bool_())]),
    "run.parquet": pa.schema([(f.name, pa.float64() if f.name == "score" else f.type)
                              for f in SCHEMAS_V1["run.parquet"]]),
}
SCHEMAS = {1: SCHEMAS_V1, 2: SCHEMAS_V2}


def ranking_version(ranking: Ranking) -> int:
    """The schema version a ranking needs: 2 only where some judged entity was not retrieved or its scores are
    float64 (a run file); 1 otherwise, so that the dumps of kgeval's own models do not change."""
    needs_v2 = ranking.retrieved is not None or np.asarray(ranking.score).dtype == np.float64 or \
        np.asarray(ranking.run_score).dtype == np.float64
    return 2 if needs_v2 else 1


def _write_parquet(table: pa.Table, path: Path) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", compression_level=9,
                       use_byte_stream_split=[c for c in table.column_names if c == "score"],
                       write_page_checksum=True, write_statistics=False)


def _read_parquet(path: Path, version: int = 1) -> pa.Table:
    expected = SCHEMAS[version][path.name]
    try:
        table = pq.read_table(path, page_checksum_verification=True)
    except (OSError, pa.ArrowException) as exc:
        raise CorruptFileError(path, f"unreadable parquet file: {exc}") from exc
    if not table.schema.equals(expected, check_metadata=False):
        raise CorruptFileError(path, f"schema {table.schema} differs from the expected {expected}")
    return table


def save_ranking(ranking: Ranking, folder: str | Path, meta: dict) -> None:
    """Write a dump folder; ``meta`` (model, dataset, test set, fingerprint, ...) goes into meta.json."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").unlink(missing_ok=True)
    qs = ranking.questions
    version = ranking_version(ranking)
    schemas = SCHEMAS[version]
    tables = {
        "questions.parquet": pa.table({
            "qid": pa.array(qs.qid, pa.string()), "side": pa.array(qs.side, pa.int8()),
            "entity": pa.array(qs.entity, pa.int32()), "relation": pa.array(qs.relation, pa.int32()),
            "n_candidates": pa.array(ranking.n_candidates, pa.int32())}),
        "judged.parquet": pa.table({
            "q": pa.array(ranking.judged.q, pa.int32()), "entity": pa.array(ranking.judged.entity, pa.int32()),
            "label": pa.array(ranking.judged.label, pa.int8()), "depth": pa.array(ranking.judged.depth, pa.int16()),
            "score": pa.array(ranking.score), "n_gt": pa.array(ranking.n_gt, pa.int32()),
            "n_eq": pa.array(ranking.n_eq, pa.int32()), "candidate": pa.array(ranking.candidate, pa.bool_())}),
    }
    if version == 2:
        retrieved = np.ones(len(ranking.judged), bool) if ranking.retrieved is None else ranking.retrieved
        tables["judged.parquet"] = tables["judged.parquet"].append_column("retrieved", pa.array(retrieved, pa.bool_()))
    valid = ranking.run_entity >= 0
    qq, rr = np.nonzero(valid)
    tables["run.parquet"] = pa.table({
        "q": pa.array(qq, pa.int32()), "rank": pa.array(rr + 1, pa.int32()),
        "entity": pa.array(ranking.run_entity[valid], pa.int32()),
        "score": pa.array(ranking.run_score[valid])})
    for name, table in tables.items():
        _write_parquet(table.cast(schemas[name]), folder / name)
    files = list(tables)
    if ranking.scores is not None:
        with atomic_path(folder / "scores.npy") as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, ranking.scores.astype(np.float16), allow_pickle=False)
        files.append("scores.npy")
    else:
        (folder / "scores.npy").unlink(missing_ok=True)
    info = {**ranking.meta, **meta, "schema_version": version, "k": int(ranking.run_entity.shape[1]),
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
    retrieved: np.ndarray | None = None  # (J,) see the module docstring; all true in a version-1 dump
    k: int = field(init=False)  # the lists' length, set once (a plain value: the callers above read it freely)

    def __post_init__(self):
        if self.retrieved is None:
            self.retrieved = np.ones(len(self.judged), bool)
        self.k = self.run_entity.shape[1]

    @property
    def complete(self) -> bool:
        """Whether the ranking covers every candidate (always for kgeval's own models; for a run file only when
        it lists every candidate of every question): only then are ranks beyond the run's depth known."""
        return bool(self.meta.get("run_complete", True))

    def scores(self) -> np.ndarray:
        """The float16 full score matrix (only where the dump kept it)."""
        path = self.path / "scores.npy"
        if "scores.npy" not in self.meta["files"]:
            raise CorruptFileError(path, "this dump has no full score matrix")
        return np.load(path, allow_pickle=False)


def load_dump(folder: str | Path, verify: bool = True, set_aside_corrupt: bool | None = None) -> Dump:
    """Read a score dump, verifying each file against the SHA-256 in ``meta.json`` (unless ``verify`` is false).

    A dump the workflow derived (``set_aside_corrupt``; by default: inside a workflow job,
    :func:`kgeval.io.workflow_job`) that is incomplete or corrupted is set aside as ``<folder>.corrupt`` before
    the error is raised, so that the next run rebuilds it instead of failing on it again. A folder a user passed
    (``--scores`` of the command line, the API) is never renamed: nothing would rebuild it."""
    folder = Path(folder)
    try:
        return _load_dump(folder, verify)
    except CorruptFileError as exc:
        if not folder.is_dir() or not (in_workflow_job() if set_aside_corrupt is None else set_aside_corrupt):
            raise
        aside = set_aside(folder, str(exc))
        raise CorruptFileError(exc.path, f"{exc.problem}; the dump was set aside as {aside} (safe to delete), "
                                         "a rerun rebuilds it") from exc


def dumps_in(folder: str | Path, option: str = "--scores") -> dict[str, str]:
    """The score dumps of a folder given as input (one subfolder per system, as ``results/scores/<test set>/``),
    by system name. A subfolder that is not a dump (no ``meta.json``: a user's notes, a killed dump) is refused in
    one line, never read as one nor set aside; hidden folders and dumps already set aside (``.corrupt``) are not
    systems and are left out."""
    folder = Path(folder)
    subs = sorted(d for d in folder.iterdir() if d.is_dir() and not d.name.startswith(".")
                  and not d.name.endswith(".corrupt")) if folder.is_dir() else []
    if not subs:
        raise InputError(folder, None, f"{option}: not a folder of score dumps (one subfolder per system)")
    for d in subs:
        if not (d / "meta.json").is_file():
            raise InputError(d, None, f"not a score dump (no meta.json): {option} must hold only score dumps, one "
                                      "subfolder per system; move this folder out (kgeval leaves it as it is)")
    return {d.name: str(d) for d in subs}


def _load_dump(folder: Path, verify: bool) -> Dump:
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        raise CorruptFileError(folder, "incomplete score dump: meta.json is missing")
    try:
        meta = read_json(meta_path)
    except ValueError as exc:
        raise CorruptFileError(meta_path, f"not valid JSON: {exc}") from exc
    version = meta.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise CorruptFileError(meta_path, f"schema version {version} is not one of {READABLE_VERSIONS}")
    if verify:
        for name, digest in meta["files"].items():
            path = folder / name
            if not path.is_file():
                raise CorruptFileError(path, "missing file of the score dump")
            actual = sha256_file(path)
            if actual != digest:
                raise CorruptFileError(path, f"SHA-256 {actual} differs from {digest} recorded in meta.json")
    schemas = SCHEMAS[version]
    q = _read_parquet(folder / "questions.parquet", version).to_pydict()
    questions = Questions(np.array(q["side"], np.int64), np.array(q["entity"], np.int64),
                          np.array(q["relation"], np.int64), q["qid"], meta["num_entities"], meta["num_relations"])
    j = {c: col.to_numpy() for c, col in zip(schemas["judged.parquet"].names,
                                              _read_parquet(folder / "judged.parquet", version).columns)}
    r = {c: col.to_numpy() for c, col in zip(schemas["run.parquet"].names,
                                              _read_parquet(folder / "run.parquet", version).columns)}
    Q, K = len(questions), int(meta["k"])
    run_entity = np.full((Q, K), -1, np.int32)
    run_score = np.full((Q, K), np.nan, r["score"].dtype)
    if len(r["q"]) and (r["q"].max() >= Q or r["rank"].max() > K or r["rank"].min() < 1):
        raise CorruptFileError(folder / "run.parquet", "question or rank out of range")
    run_entity[r["q"], r["rank"] - 1] = r["entity"]
    run_score[r["q"], r["rank"] - 1] = r["score"]
    judged = Judged(j["q"].astype(np.int64), j["entity"].astype(np.int64), j["label"], j["depth"])
    return Dump(folder, meta, questions, np.array(q["n_candidates"], np.int64), judged,
                j["score"], j["n_gt"].astype(np.int64), j["n_eq"].astype(np.int64), j["candidate"],
                run_entity, run_score, j.get("retrieved"))
