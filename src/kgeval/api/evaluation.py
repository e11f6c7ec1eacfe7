"""A run evaluated on a test set as ``kgeval evaluate`` and the workflow's tables evaluate it: :func:`evaluate`."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..arguments import check_flag, check_name, check_path, check_strings, kind_of, short_repr
from ..errors import BadTypeError, BadValueError, InputError, MeasureError
from .checks import bound, check_run, check_scores
from .testsets import TestCollection, load_testset

Run = pd.DataFrame | Mapping[str, Mapping[str, float]] | str | os.PathLike
"""A run: a DataFrame (``qid``, ``docno``, ``score``[, ``rank``]), a dict ``{qid: {docno: score}}`` (pytrec_eval's
and ranx's form) or the path of a TREC run file (``qid Q0 docno rank score tag``, plain or ``.gz``)."""


DEFAULT_MEASURES = ("MRR", "Hits@1", "Hits@10", "MR", "nDCG@20", "AP@20", "RR@10")


def resolve_measures(measures: Iterable[str]) -> list[tuple[str, str | None, str | None]]:
    """Map measure names onto the metric registry's columns: ``(name, micro column, macro column)``.

    Accepted: KGC rank metrics by their registry names without the aggregation (``MRR``, ``MR``, ``Hits@10``,
    ``AMRI``, ``z-MRR`` is ``zmrr`` …: both micro and macro), a column itself (``micro_mrr``, ``ndcg_cut_20``),
    and trec_eval or ir_measures names (``nDCG@20``, ``AP@20``, ``P@10``, ``R@100``, ``Success@10``, ``RR``,
    ``RR@10``, ``Bpref``, ``infAP``: per question). ``Success@k`` is trec_eval's success (any relevant answer in the
    top k, trec_eval's tie order); ``Hits@k`` is the KGC metric (realistic ranks). Names resolve with
    :func:`kgeval.metrics.registry.resolve` (case and ``-`` do not matter); an unknown name or a cutoff the
    evaluation does not compute raises :class:`kgeval.errors.MeasureError`, a ``ValueError``.
    """
    from ..metrics.registry import resolve_all

    return [(m.name, m.micro, m.macro) for m in resolve_all(measures)]


def study_columns(measures: Iterable[str]) -> list[str]:
    """The registry columns of measure names, as the study's tables hold them (micro and macro where both
    exist). RR@k is refused: the tables hold recip_rank, and placing on it would silently drop the cut."""
    from ..metrics.registry import resolve_all

    columns = []
    for m in resolve_all(measures):
        if m.cut is not None:
            raise MeasureError(m.name, "the study's tables hold RR (recip_rank) without a cutoff: use RR")
        columns += [c for c in (m.micro, m.macro) if c is not None]
    return columns


def _run_frame(run: pd.DataFrame | Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    if isinstance(run, pd.DataFrame):
        df = run.rename(columns={"query_id": "qid", "doc_id": "docno", "q_id": "qid"})
        missing = [c for c in ("qid", "docno", "score") if c not in df.columns]
        if missing:
            raise BadValueError("run", "a run DataFrame needs the columns qid, docno, score (missing: "
                                       f"{', '.join(missing)})")
        check_scores(df)
        return df
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    df = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    check_scores(df)
    return df


def _as_given(exc: InputError, path: Path) -> InputError:
    """An error about the temporary run file written from a DataFrame or dict, naming the ``run`` argument and
    the offending row as written (qid Q0 docno rank score tag), not the temporary file the caller never saw."""
    row = ""
    if exc.line is not None:
        lines = path.read_text(encoding="utf-8").splitlines()
        row = f" (row {lines[exc.line - 1]!r})" if 0 < exc.line <= len(lines) else ""
    return InputError("run", None, f"{exc.problem}{row}")


def _write_run(df: pd.DataFrame, path: Path, tag: str) -> Path:
    """The run as a TREC run file: kgeval reads every run through the same checked reader."""
    df = df.copy()
    df["qid"] = df["qid"].astype(str)
    df["docno"] = df["docno"].astype(str)
    if "rank" not in df.columns:
        df = df.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable")
        df["rank"] = df.groupby("qid", sort=False).cumcount() + 1
    # repr-exact floats: the file reader must see the scores the caller gave
    scores = [repr(float(s)) for s in df["score"].to_numpy()]
    out = pd.DataFrame({"qid": df["qid"], "Q0": "Q0", "docno": df["docno"], "rank": df["rank"], "score": scores,
                        "tag": tag})
    out.to_csv(path, sep=" ", header=False, index=False)
    return path


@dataclass
class Result:
    """One system evaluated on one test set.

    Attributes:
        name: the system's name.
        testset: the :class:`TestCollection` it was evaluated on.
        aggregate: one row per requested measure: ``measure``, ``micro`` (mean over answers), ``macro`` (mean over
            questions; for trec_eval measures their value), and the registry columns they come from.
        per_question: one row per question: ``qid``, ``side``, ``relation``, ``rank`` (macro: the best-ranked
            answer's realistic rank), then each measure's per-question value.
        per_answer: one row per (question, relevant answer): ``qid``, ``docno``, ``rank`` (micro: realistic rank
            among the non-answers), then each KGC measure's per-answer value.
        table: the row ``kgeval evaluate`` writes to ``evaluation.csv`` (every column of the pipeline's evaluation
            tables, with BCa bootstrap intervals ``micro_mrr_lo``/``_hi``, ``macro_mrr_lo``/``_hi``).
        run_depth: the run's depth (most documents listed for one question).
        run_complete: whether the run lists every candidate (only then are MR and rank-magnitude metrics known).
        evaluation: the underlying :class:`kgeval.metrics.evaluate.Evaluation` (all per-item columns).
    """

    name: str
    testset: TestCollection
    aggregate: pd.DataFrame
    per_question: pd.DataFrame
    per_answer: pd.DataFrame
    table: pd.DataFrame
    run_depth: int
    run_complete: bool
    evaluation: Any = field(repr=False)
    run: pd.DataFrame | None = field(default=None, repr=False)  # the run as evaluated: qid, docno, score
    dump: Any = field(default=None, repr=False)  # the score dump (its top K, questions, judgments): plan() reads it

    def to_ranx(self):
        """The run as kgeval evaluated it, as a ``ranx.Run``: each question's top K after kgeval's filter (the
        question's train ∪ valid answers removed), so that ``ranx.evaluate(testset.to_ranx(), result.to_ranx(),
        ...)`` gives kgeval's per-question (macro) values on a run without tied scores."""
        from ranx import Run

        if self.run is None:
            raise ValueError(f"{self.name}: this Result holds no run (made by evaluate() of an older kgeval)")
        out: dict[str, dict[str, float]] = {}
        for qid, group in self.run.groupby("qid", sort=False):
            out[str(qid)] = dict(zip(group["docno"].astype(str), group["score"].astype(float)))
        return Run(out, name=self.name)

    def value(self, measure: str, aggregation: str = "macro") -> float:
        """The aggregate value of ``measure`` (``"micro"`` or ``"macro"``; trec_eval measures are ``"macro"``)."""
        row = self.aggregate.set_index("measure").loc[measure]
        return float(row[aggregation])

    def as_dict(self, aggregation: str = "macro") -> dict[str, float]:
        """``{measure: value}``, like ir_measures' ``calc_aggregate``."""
        return {m: float(v) for m, v in zip(self.aggregate["measure"], self.aggregate[aggregation])}


def evaluate(run: Run, testset: TestCollection | str, measures: Sequence[str] = DEFAULT_MEASURES,
             name: str = "run", allow_missing: bool = False, out: str | os.PathLike | None = None,
             bootstrap: int = 1000, workdir: str | os.PathLike = ".") -> Result:
    """Evaluate a run on a test set exactly as ``kgeval evaluate`` and the workflow's metric tables do.

    The run is filtered like the study's models (micro: the other known answers; macro: the question's
    train ∪ valid answers), tied scores get realistic KGC ranks and trec_eval's order for trec_eval measures;
    a run cut at depth K counts answers it does not list as not retrieved, and leaves MR and other rank-magnitude
    metrics empty (NaN).

    Args:
        run: a DataFrame (``qid``, ``docno``, ``score``[, ``rank``]; ir_measures' ``query_id``/``doc_id`` are
            accepted), a dict ``{qid: {docno: score}}``, or the path of a TREC run file. ``qid`` is the published
            question id (``testset.questions.qid``), ``docno`` the dataset's entity id.
        testset: a :class:`TestCollection` from :func:`load_testset`, or a test set's name.
        measures: measure names (:func:`resolve_measures`): ``MRR``, ``MR``, ``Hits@10``, ``nDCG@20``, ``P@10``,
            ``RR@10``, ``Success@10``, ``AP@20``, ``micro_mrr``, ``ndcg_cut_20`` …
        name: the system's name (in ``table`` and in placement).
        allow_missing: score questions the run lacks zero (``trec_eval -c``) instead of raising an error.
        out: keep the score dump under ``out/dumps/<name>/<test set>`` (default: a temporary folder).
        bootstrap: BCa bootstrap resamples of the MRR intervals in ``table``.
        workdir: the workflow folder, when ``testset`` is a name.

    Returns:
        The aggregate, per-question and per-answer values.

    Example:
        >>> r = evaluate({"head0": {"/m/0abc": 1.5}}, "FB-Test-S-C", measures=["MRR", "nDCG@20"],
        ...              allow_missing=True)                               # doctest: +SKIP
        >>> r.aggregate                                                    # doctest: +SKIP
    """
    from ..config import run_depth
    from ..data.kg import KnowledgeGraph
    from ..external.evaluate import HEADLINE, mean_interval
    from ..external.systems import System, dump_system
    from ..io import OutputStage
    from ..metrics.evaluate import evaluate as evaluate_dump
    from ..metrics.evaluate import qrels_at_depth
    from ..metrics.registry import resolve_all
    from ..metrics.steps import summary_frame
    from ..metrics.trec import reciprocal_rank_at
    from ..scores.dumps import load_dump

    check_run(run)
    if not isinstance(testset, TestCollection | str):
        raise BadTypeError("testset", f"{short_repr(testset)} is {kind_of(testset)}, expected a TestCollection of "
                                      "kgeval.load_testset or a test set's name")
    measures = check_strings(measures, "measures", "measure names")
    check_name(name, "name")
    if any(c in name for c in " \t\n/"):
        raise BadValueError("name", f"{name!r}: a system's name may not contain whitespace or '/'")
    check_flag(allow_missing, "allow_missing")
    check_path(out, "out", nullable=True)
    check_path(workdir, "workdir")
    bootstrap = bound(("arguments", "bootstrap"), workdir).check(bootstrap, "bootstrap")
    wanted = resolve_all(measures)
    tc = testset if isinstance(testset, TestCollection) else load_testset(testset, workdir=workdir)
    trec_measures = list(tc.config["evaluation"]["trec_measures"])
    trec_measures += [m.macro for m in wanted if m.trec and m.macro not in trec_measures]

    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kgeval-api-"))
        if isinstance(run, str | os.PathLike):
            path = Path(run)
            if not path.is_file():
                raise FileNotFoundError(f"{path}: run file not found")
        else:
            path = _write_run(_run_frame(run), Path(tmp) / f"{tc.base}.run", name)
        # out: the command line's output rule (a dump replaces only what this system's evaluation wrote there)
        stage = None if out is None else stack.enter_context(
            OutputStage(f"evaluate {name} {tc.base}", inputs=[path], folder=out))
        kg = KnowledgeGraph.load(tc.files["kg"])
        system = System(name, "run", path, {tc.base: path})
        folder = (Path(tmp) if stage is None else stage.root) / "dumps" / name / tc.base
        files = {"tsv": str(tc.files["tsv"]), "questions": str(tc.files["questions"])}
        try:
            meta = dump_system(system, kg, tc.base, files, folder, k=run_depth(tc.config, tc.base),
                               allow_missing=allow_missing)
        except InputError as exc:
            if isinstance(run, str | os.PathLike) or exc.path != str(path):
                raise
            raise _as_given(exc, path) from None
        dump = load_dump(folder)
        ev = evaluate_dump(dump, qrels_at_depth(dump, tc.depth), kg.relation_category, trec_measures, families=True)
        q, k = np.nonzero(dump.run_entity >= 0)
        evaluated_run = pd.DataFrame({"qid": np.asarray(dump.questions.qid, dtype=object)[q],
                                      "docno": np.asarray(kg.entities, dtype=object)[dump.run_entity[q, k]],
                                      "score": dump.run_score[q, k].astype(np.float64)})
    if stage is not None:
        dump.path = stage.final(dump.path)  # moved into place when the stage completed

    table = summary_frame({name: ev.summary}, {"TestSet": tc.name})
    for metric, items in HEADLINE.items():
        table[f"{metric}_lo"], table[f"{metric}_hi"] = mean_interval(getattr(ev, items)[metric].to_numpy(),
                                                                     bootstrap, 0)
    rels = np.array(kg.relations, dtype=object)
    ents = np.array(kg.entities, dtype=object)
    pq = pd.DataFrame({"qid": ev.per_question["qid"].to_numpy(), "side": ev.per_question["side"].to_numpy(),
                       "relation": rels[ev.per_question["relation"].to_numpy()],
                       "rank": ev.per_question["rank"].to_numpy()})
    pa = pd.DataFrame({"qid": ev.per_answer["qid"].to_numpy(), "docno": ents[ev.per_answer["entity"].to_numpy()],
                       "rank": ev.per_answer["rank"].to_numpy()})
    rows = []
    for m in wanted:
        micro = macro = np.nan
        if m.micro is not None:
            if m.micro in ev.per_answer:  # the metric families have no per-answer values, only their summary
                pa[m.name] = ev.per_answer[m.micro].to_numpy()
            micro = ev.summary.get(m.micro, np.nan)
        if m.macro is not None:
            if m.macro in ev.per_question:
                values = ev.per_question[m.macro].to_numpy(dtype=np.float64)
                if m.cut is not None:
                    values = reciprocal_rank_at(values, m.cut)
                pq[m.name] = values
            macro = float(values.mean()) if m.cut is not None and len(values) else ev.summary.get(m.macro, np.nan)
        rows.append({"measure": m.name, "micro": float(micro), "macro": float(macro), "micro_column": m.micro,
                     "macro_column": m.macro if m.cut is None else f"recip_rank (cut at {m.cut})"})
    aggregate = pd.DataFrame(rows, columns=["measure", "micro", "macro", "micro_column", "macro_column"])
    return Result(name, tc, aggregate, pq, pa, table, int(meta["run_depth"]), bool(meta["run_complete"]), ev,
                  evaluated_run, dump)

