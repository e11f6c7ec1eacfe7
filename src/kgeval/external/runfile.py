"""TREC run files of external systems, read into kgeval's score dumps.

A run file has one line per retrieved document, six whitespace-separated columns ``qid Q0 docno rank score tag``
(plain, or gzip when the name ends in ``.gz``): ``qid`` is the published question id of the test set
(``head<i>`` / ``tail<i>`` of ``resources/testsets/<test set>.questions.tsv``), ``docno`` the dataset's own entity
id. Like trec_eval, kgeval ignores the ``Q0`` and ``rank`` columns for ordering (``rank`` must still be an
integer) and orders each question's documents by score, ties by docno descending.

The run becomes a dump (``kgeval.scores.dumps``, schema version 2) with the same filtering and tie policy as kgeval's own
models (``kgeval.scores.ranking``): entities the macro filter removes (train ∪ valid answers that are not the question's
test answers) are dropped from the run; a judged entity's ``n_gt`` / ``n_eq`` count the remaining run entries that
score strictly higher / equally, so KGC ranks are realistic ranks (the mean of optimistic and pessimistic) and
micro ranks remove the other answers exactly as for a model. Entities the run does not list are taken to rank
below every listed one: a judged entity beyond the run's depth is *not retrieved* (rank ∞ in
``kgeval.metrics.ranks``: reciprocal rank 0, no hit, as trec_eval counts it), and a tie with entities beyond the
cut cannot be seen. A run is *complete* when it lists every candidate of every question; only then are MR and the
other rank-magnitude metrics reported (``kgeval.metrics.evaluate.depth_safe``).

Every problem is a one-line :class:`~kgeval.errors.InputError` naming the file and line: a line without exactly
six columns, an unknown question or entity id, a rank that is not an integer, a score that is not a finite
number, a docno listed twice for one question; a test-set question absent from the run is an error too, unless
``allow_missing`` (then it scores zero, as ``trec_eval -c`` scores it).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..data.questions import AnswerIndex, Questions, load_questions
from ..data.testsets import TestSet
from ..errors import InputError
from ..io import sha256_file
from ..limits import scan
from ..scores.dumps import save_ranking
from ..scores.ranking import Judged, Ranking, docno_ranks, judged_entities, macro_filter

log = logging.getLogger(__name__)

COLUMNS = ("qid", "Q0", "docno", "rank", "score", "tag")
_NAN_TEXT = {"nan", "+nan", "-nan"}


@dataclass
class RunFile:
    """The lines of a run file, mapped onto a test set's questions and the dataset's entities (file order)."""

    path: Path
    q: np.ndarray  # (n,) question row
    entity: np.ndarray  # (n,) entity id
    score: np.ndarray  # (n,) float64, as trec_eval reads it
    line: np.ndarray  # (n,) 1-based line number
    tag: str  # the first line's tag (the run's name)
    depth: int  # most lines of one question
    missing: np.ndarray  # question rows without any line

    def __len__(self) -> int:
        return len(self.q)


def _first(path: Path, mask: np.ndarray, line: np.ndarray, problem) -> None:
    """Raise for the first line where ``mask`` holds; ``problem(i)`` words it for row ``i``."""
    if mask.any():
        i = int(np.flatnonzero(mask)[0])
        raise InputError(path, int(line[i]), problem(i))


def _read_columns(path: Path) -> pd.DataFrame:
    """Every line as seven string columns (a seventh non-empty field means too many); a blank line keeps its row
    so that row i is line i + 1, and is dropped afterwards."""
    scan(path)  # the size, lines and NUL bytes, before pandas reads it all
    try:
        df = pd.read_csv(path, sep=r"\s+", header=None, names=range(7), dtype=str, keep_default_na=False,
                         na_filter=False, skip_blank_lines=False, engine="c", compression="infer",
                         encoding="utf-8")
    except pd.errors.EmptyDataError:
        raise InputError(path, None, "the run file is empty") from None
    except pd.errors.ParserError as exc:  # more than seven fields: the C parser names the line
        m = re.search(r"line (\d+), saw (\d+)", str(exc))
        raise InputError(path, int(m.group(1)) if m else None,
                         f"expected 6 columns ({' '.join(COLUMNS)}), found {m.group(2) if m else 'more'}") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, None, f"not valid UTF-8: {exc.reason}") from None
    except (OSError, EOFError) as exc:  # unreadable, or a truncated gzip stream
        raise InputError(path, None, f"cannot read the run file: {exc}") from None
    df.index = np.arange(1, len(df) + 1)
    return df[(df != "").any(axis=1)]


def read_run(path: str | Path, questions: Questions, kg: KnowledgeGraph, allow_missing: bool = False,
             testset: str = "the test set") -> RunFile:
    """Read and check a run file against a test set's questions (see the module docstring)."""
    path = Path(path)
    df = _read_columns(path)
    if df.empty:
        raise InputError(path, None, "the run file has no lines")
    line = df.index.to_numpy()
    n_fields = (df != "").sum(axis=1).to_numpy()
    _first(path, n_fields != 6, line,
           lambda i: f"expected 6 columns ({' '.join(COLUMNS)}), found {n_fields[i]}")
    qid, docno, rank, score_text = (df[c].to_numpy(dtype=object) for c in (0, 2, 3, 4))
    q = pd.Index(questions.qid).get_indexer(qid)
    _first(path, q < 0, line, lambda i: f"question id {qid[i]!r} is not a question of {testset}")
    entity = pd.Index(kg.entities).get_indexer(docno)
    _first(path, entity < 0, line, lambda i: f"docno {docno[i]!r} is not an entity of {kg.name}")
    rank_num = pd.to_numeric(pd.Series(rank), errors="coerce").to_numpy(dtype=float)
    _first(path, ~np.isfinite(rank_num) | (rank_num != np.round(rank_num)), line,
           lambda i: f"rank {rank[i]!r} is not an integer")
    score = pd.to_numeric(pd.Series(score_text), errors="coerce").to_numpy(dtype=np.float64)
    _first(path, ~np.isfinite(score), line,
           lambda i: f"score {score_text[i]!r} is " + ("NaN" if str(score_text[i]).lower() in _NAN_TEXT else
                                                       "not a finite number"))
    code = q.astype(np.int64) * kg.num_entities + entity
    dup = pd.Series(code).duplicated().to_numpy()
    _first(path, dup, line, lambda i: f"docno {docno[i]} is listed twice for question {qid[i]} (first on line "
                                      f"{int(line[np.flatnonzero(code == code[i])[0]])})")
    counts = np.bincount(q, minlength=len(questions))
    missing = np.flatnonzero(counts == 0)
    if len(missing) and not allow_missing:
        raise InputError(path, None, f"{len(missing)} of the {len(questions)} questions of {testset} have no line "
                                     f"(first: {questions.qid[missing[0]]}); --allow-missing scores them zero, as "
                                     "trec_eval -c does")
    return RunFile(path, q.astype(np.int64), entity.astype(np.int64), score, line, str(df.iloc[0, 5]),
                   int(counts.max()), missing)


def run_ranking(run: RunFile, questions: Questions, judged: Judged, known: AnswerIndex,
                docno_rank: np.ndarray) -> Ranking:
    """The ranking (dump content) of a run under the macro filter; vectorised over all lines."""
    E, Q = questions.num_entities, len(questions)
    f_rows, f_ents = macro_filter(questions, judged, known)
    n_cand = E - np.bincount(f_rows, minlength=Q)
    code = run.q * E + run.entity
    kept = ~np.isin(code, f_rows * E + f_ents)
    q, ent, score = run.q[kept], run.entity[kept], run.score[kept]
    n_kept = np.bincount(q, minlength=Q)
    complete = bool((n_kept == n_cand).all())

    # trec_eval's order: question, score descending, docno descending
    order = np.lexsort((-docno_rank[ent], -score, q))
    q, ent, score = q[order], ent[order], score[order]
    start = np.concatenate([[0], np.cumsum(n_kept)[:-1]])
    pos = np.arange(len(q)) - start[q]
    K = max(run.depth, 1)
    run_entity = np.full((Q, K), -1, np.int32)
    run_score = np.full((Q, K), np.nan, np.float64)
    run_entity[q, pos] = ent
    run_score[q, pos] = score

    # each judged entity's score, and the kept entries above / equal to it, through one sorted key per entry:
    # question × dense rank of the score
    jcode = judged.q * E + judged.entity
    all_code = np.sort(code)
    at = np.minimum(np.searchsorted(all_code, jcode), max(len(all_code) - 1, 0))
    retrieved = (all_code[at] == jcode) if len(all_code) else np.zeros(len(jcode), bool)
    by_code = np.argsort(code)
    j_score = np.where(retrieved, run.score[by_code[at]] if len(code) else 0.0, np.nan)
    levels, dense = np.unique(np.concatenate([score, j_score[retrieved]]), return_inverse=True)
    width = len(levels) + 1
    kept_key = np.sort(q * width + dense[:len(q)])
    j_key = judged.q[retrieved] * width + dense[len(q):]
    upper = np.searchsorted(kept_key, j_key, side="right")
    lower = np.searchsorted(kept_key, j_key, side="left")
    q_end = np.searchsorted(kept_key, (judged.q[retrieved] + 1) * width, side="left")
    codes_f = np.sort(f_rows * E + f_ents)
    candidate = ~np.isin(jcode, codes_f)
    n_gt = n_kept[judged.q].astype(np.int64)  # not retrieved: every kept entry is above it
    n_eq = np.zeros(len(judged), np.int64)
    n_gt[retrieved] = q_end - upper
    n_eq[retrieved] = upper - lower - candidate[retrieved]  # not counting itself (when it is a kept entry)
    return Ranking(questions, n_cand, judged, j_score, n_gt, n_eq, candidate, run_entity, run_score,
                   meta={"run_depth": int(run.depth), "run_complete": complete,
                         "missing_questions": int(len(run.missing))},
                   retrieved=retrieved)


def dump_run(run_path: str | Path, kg_path: str | Path, testset_path: str | Path, questions_path: str | Path,
             out: str | Path, system: str, testset_name: str, allow_missing: bool = False,
             kg: KnowledgeGraph | None = None) -> dict:
    """The score-stage step for a run file: read it against a test set and write its dump; returns its meta."""
    kg = kg or KnowledgeGraph.load(kg_path)
    ts = TestSet.load(testset_path, kg, testset_name)
    questions = load_questions(questions_path, kg)
    run = read_run(run_path, questions, kg, allow_missing, testset_name)
    judged = judged_entities(ts, questions)
    known = AnswerIndex(kg.known(("train", "valid")), kg.num_entities, kg.num_relations)
    ranking = run_ranking(run, questions, judged, known, docno_ranks(kg.entities))
    meta = {"model": system, "source": "trec run", "test_set": testset_name, "dataset": kg.name,
            "dataset_fingerprint": kg.fingerprint(), "run_file": str(run_path), "run_tag": run.tag,
            "run_sha256": sha256_file(run_path)}
    save_ranking(ranking, out, meta)
    log.info("%s on %s: %d run lines, depth %d, %s, %d questions missing", system, testset_name, len(run),
             run.depth, "complete" if ranking.meta["run_complete"] else "cut", len(run.missing))
    return {**ranking.meta, **meta}
