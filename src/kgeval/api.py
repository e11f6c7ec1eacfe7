"""kgeval's Python API: test sets with their judgments, evaluation of a run, and placement among the study's systems.

Three calls cover the notebook workflow, in the style of ir_datasets, ir_measures and ranx::

    from kgeval import load_testset, evaluate, place

    sc = load_testset("FB-Test-S-C")                         # questions, answers, qrels as DataFrames
    result = evaluate("my.run", sc, measures=["MRR", "Hits@10", "nDCG@20", "RR@10"])
    result.aggregate                                         # one row per measure: micro and macro value
    place(result)                                            # rank and significance among the study's systems

Every number comes from the functions that build the workflow's own tables and that ``kgeval evaluate`` calls:
a run is read and filtered by :mod:`kgeval.external.runfile` into a score dump, evaluated by
:func:`kgeval.metrics.evaluate.evaluate` and placed by :mod:`kgeval.external.placement`; measure names resolve
with :func:`kgeval.metrics.registry.resolve` onto :data:`kgeval.metrics.registry.REGISTRY` (RR@k, too, is
:func:`kgeval.metrics.trec.reciprocal_rank_at`). Nothing here computes a metric of its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .arguments import check_flag, check_name, check_path, check_strings, kind_of, short_repr
from .errors import BadTypeError, BadValueError, InputError, KgevalError, MeasureError

if TYPE_CHECKING:
    from .external.comparison import Comparison

__all__ = ["TestCollection", "Result", "load_testset", "evaluate", "place", "compare", "resolve_measures",
           "DataUnavailableError", "data_files", "build_data"]

Run = pd.DataFrame | Mapping[str, Mapping[str, float]] | str | os.PathLike
"""A run: a DataFrame (``qid``, ``docno``, ``score``[, ``rank``]), a dict ``{qid: {docno: score}}`` (pytrec_eval's
and ranx's form) or the path of a TREC run file (``qid Q0 docno rank score tag``, plain or ``.gz``)."""

DEFAULT_MEASURES = ("MRR", "Hits@1", "Hits@10", "MR", "nDCG@20", "AP@20", "RR@10")
_DEPTH_NAME = re.compile(r"^(?P<base>.+)\((?P<depth>\d+)\)$")  # FB-Test-S-C(3): FB-Test-S-C at pooling depth 3


class DataUnavailableError(KgevalError):
    """The data a test set needs is missing and the workflow could not build it (no network, no mirror)."""


# ---- locating the workflow and its data ------------------------------------------------------------------------
def _repo_root() -> Path | None:
    """The checkout this package was installed from (an editable install), when it holds the workflow; None for
    an installed wheel, which builds data without the workflow (:mod:`kgeval.data.cache`)."""
    from .home import checkout_root

    return checkout_root()


def _config_path(workdir: Path, config: str | os.PathLike | None) -> Path:
    from .home import default_file

    if config is not None:
        path = Path(config)
        return path if path.is_absolute() or path.is_file() else workdir / path
    own = workdir / "config" / "config.yaml"
    return own if own.is_file() else default_file("config/config.yaml")  # the packaged default configuration


def _load_config(workdir: Path, config: str | os.PathLike | None) -> tuple[dict[str, Any], Path]:
    from .config import load_config_file, validate_config
    from .home import default_file, locate_defaults

    path = _config_path(workdir, config)
    schema = path.parent / "schema.yaml"
    if not schema.is_file():
        root = _repo_root()
        schema = root / "config" / "schema.yaml" if root else default_file("config/schema.yaml")
    cfg = locate_defaults(load_config_file(path))
    return validate_config(cfg, schema, models=False), path


def _data_root(workdir: Path) -> Path:
    """Where a test set's data are: the workflow folder ``workdir`` inside a checkout or where its
    ``resources/`` exists; for an installed wheel elsewhere, the user cache (:func:`kgeval.home.data_home`)."""
    from .home import cache_home

    if (workdir / "Snakefile").is_file() or (workdir / "resources").is_dir() or _repo_root() is not None:
        return workdir
    return cache_home()


def data_files(workdir: str | os.PathLike, dataset: str, testset: str) -> dict[str, Path]:
    """The data stage's files of one test set, as the rules declare them (``prepare_kg``: ``kg``;
    ``build_testset``: ``tsv``, ``questions``; ``workflow/rules/data.smk``), from the same function
    ``kgeval evaluate`` uses; ``tests/test_api.py`` checks them against the rules."""
    from .external.command import testset_files

    files = testset_files(Path(workdir) / "resources", dataset, [testset])
    return {"kg": files.kg, **{k: Path(v) for k, v in files.testsets[testset].items()}}


def build_data(workdir: Path, config_path: Path, targets: list[Path]) -> None:
    """Build only ``targets`` with the workflow (``snakemake --cores 1``), once, into ``workdir``; without a
    workflow (an installed wheel), with the data stage's functions (:mod:`kgeval.data.cache`)."""
    snakefile = workdir / "Snakefile"
    extra: list[str] = []
    if not snakefile.is_file():
        root = _repo_root()
        if root is None:
            _build_without_workflow(workdir, config_path, targets)
            return
        extra = ["--snakefile", str(root / "Snakefile"), "--directory", str(workdir)]
    rel = [str(t.relative_to(workdir)) if t.is_relative_to(workdir) else str(t) for t in targets]
    exe = shutil.which("snakemake") or str(Path(sys.executable).with_name("snakemake"))
    cmd = [exe, "--cores", "1", "--configfile", str(config_path), "--replace-workflow-config", *extra, "--", *rel]
    shown = f"cd {workdir} && snakemake --cores 1 --configfile {config_path} --replace-workflow-config {' '.join(rel)}"
    log = workdir / "logs" / "kgeval-api-build.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as fh:
        done = subprocess.run(cmd, cwd=workdir, stdout=fh, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0 or not all(t.is_file() for t in targets):
        raise DataUnavailableError(
            f"could not build the test set's data (log: {log}); without network access set KGEVAL_MIRROR to a "
            f"data mirror folder (or `mirror:` in the config) and run: {shown}")


# ---- argument checks (kgeval.arguments; bounds from config/schema.yaml) -----------------------------------------
def _bound(keys: tuple[str, ...], workdir: str | os.PathLike | None = None):
    from .config import schema_bound, schema_file

    return schema_bound(keys, schema_file(workdir))


def _check_run(run: Any) -> None:
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


def _check_scores(df: pd.DataFrame) -> None:
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


def _build_without_workflow(workdir: Path, config_path: Path, targets: list[Path]) -> None:
    """The targets (files of ``data_files``) built by the data stage's step functions into
    ``workdir/resources``."""
    from .data.cache import DataBuilder
    from .home import default_file

    cfg, _ = _load_config(workdir, config_path)
    res = workdir / "resources"
    builder = DataBuilder(cfg, default_file(cfg["manifest"]), res)
    wanted = {t.resolve() for t in targets}
    try:
        for testset, spec in cfg["test_sets"].items():
            files = data_files(workdir, spec["dataset"], testset)
            if {files["tsv"].resolve(), files["questions"].resolve()} & wanted:
                builder.build_testset(testset)
        for dataset in cfg["datasets"]:
            if data_files(workdir, dataset, "-")["kg"].resolve() in wanted:
                builder.build_kg(dataset)
    except (KgevalError, OSError) as exc:
        raise DataUnavailableError(f"could not build the test set's data into {res}: {exc}; without network "
                                   "access set KGEVAL_MIRROR to a data mirror folder (or `mirror:` in the "
                                   "config)") from exc
    missing = [t for t in targets if not t.is_file()]
    if missing:
        raise DataUnavailableError(f"{missing[0]}: not a file the data stage builds")


# ---- test sets -----------------------------------------------------------------------------------------------
@dataclass
class TestCollection:
    """A test set with its judgments, as DataFrames (an IR test collection: topics and qrels).

    Attributes:
        name: the test set, with the pooling depth when one was asked (``FB-Test-S-C(3)``).
        base: the test set's name in the workflow (``FB-Test-S-C``).
        dataset: its dataset (``FB15k-237``).
        depth: the pooling depth the judgments are cut at (FB-Test-S-C(d): judgments made at depth ≤ d), or None.
        questions: one row per question: ``qid`` (the published id, ``head<i>``/``tail<i>``), ``side`` (the side
            asked for), ``entity`` (the known entity), ``relation``.
        answers: one row per (question, relevant answer): ``qid``, ``docno`` (the answer's entity id).
        qrels: every judgment: ``qid``, ``docno``, ``relevance`` (1 relevant, 0 judged non-relevant), the columns
            of a TREC qrels file; :meth:`qrels_dict` gives pytrec_eval's and ranx's form.
        files: the workflow files it was read from (``kg``, ``tsv``, ``questions``).
        workdir: the workflow folder.
        config: the validated workflow configuration.
    """

    __test__ = False  # not a pytest class

    name: str
    base: str
    dataset: str
    depth: int | None
    questions: pd.DataFrame
    answers: pd.DataFrame
    qrels: pd.DataFrame
    files: dict[str, Path]
    workdir: Path
    config: dict[str, Any] = field(repr=False)
    config_path: Path | None = field(default=None, repr=False)

    def qrels_dict(self) -> dict[str, dict[str, int]]:
        """``{qid: {docno: relevance}}``, as pytrec_eval and ranx take judgments."""
        out: dict[str, dict[str, int]] = {}
        for qid, docno, rel in self.qrels[["qid", "docno", "relevance"]].itertuples(index=False):
            out.setdefault(qid, {})[docno] = int(rel)
        return out

    def to_ranx(self):
        """The judgments as a ``ranx.Qrels`` (relevance 1 for answers, 0 for judged non-relevant entities)."""
        from ranx import Qrels

        return Qrels(self.qrels_dict(), name=self.name)

    def load_kg(self):
        """The dataset's :class:`~kgeval.data.kg.KnowledgeGraph` (entities, relations, splits)."""
        from .data.kg import KnowledgeGraph

        return KnowledgeGraph.load(self.files["kg"])


def load_testset(name: str, depth: int | None = None, workdir: str | os.PathLike = ".",
                 config: str | os.PathLike | None = None, build: bool = True) -> TestCollection:
    """Load a test set with its judgments: FB-Test-O, FB-Test-S, FB-Test-S-C (at pooling depth ``depth``, 1–10,
    or written ``"FB-Test-S-C(3)"``), WN18RR, or any test set of the configuration.

    The data come from the workflow's data stage in ``workdir`` (``resources/``). When they are missing and
    ``build`` is true, only the files this test set needs are built, once, with ``snakemake --cores 1`` (the
    download uses ``KGEVAL_MIRROR`` when set); when that is impossible a :class:`DataUnavailableError` names the
    command to run. An installed kgeval used outside a checkout (no ``Snakefile``, no ``resources/`` in
    ``workdir``) keeps the data in the user cache, ``$KGEVAL_HOME/resources`` (:mod:`kgeval.home`), built there by
    the data stage's own functions (:mod:`kgeval.data.cache`), and reads the packaged default configuration when
    ``workdir`` has no ``config/config.yaml``.

    Args:
        name: the test set's name in the configuration, optionally with a depth in parentheses.
        depth: pooling depth of the judgments (only for a pooled test set such as FB-Test-S-C).
        workdir: the workflow folder (where ``Snakefile`` and ``resources/`` are).
        config: the workflow configuration (default ``config/config.yaml`` in ``workdir``).
        build: build missing data with the workflow.

    Returns:
        The test set's questions, relevant answers and judgments as DataFrames.

    Example:
        >>> sc = load_testset("FB-Test-S-C", depth=3)          # doctest: +SKIP
        >>> len(sc.questions), int(sc.qrels.relevance.sum())   # doctest: +SKIP
    """
    from .data.kg import KnowledgeGraph
    from .data.questions import load_questions
    from .data.testsets import TestSet
    from .scores.ranking import judged_entities

    if not isinstance(name, str):
        raise BadTypeError("name", f"{short_repr(name)} is {kind_of(name)}, expected a test set's name (a str)")
    if not name:
        raise BadValueError("name", "an empty name: give a test set's name, e.g. 'FB-Test-S-C'")
    check_path(workdir, "workdir")
    check_path(config, "config", nullable=True)
    check_flag(build, "build")
    depth_bound = _bound(("arguments", "depth"), workdir)
    if depth is not None:
        depth = int(depth_bound.check(depth, "depth"))
    workdir = Path(workdir).resolve()
    m = _DEPTH_NAME.match(name)
    base = name
    if m:
        base = m["base"]
        named = int(depth_bound.check(int(m["depth"]), "depth"))
        if depth is not None and depth != named:
            raise BadValueError("depth", f"{depth} contradicts the depth in the name {name!r} ({named})")
        depth = named
    cfg, cfg_path = _load_config(workdir, config)
    specs = cfg["test_sets"]
    if base not in specs:
        raise KeyError(f"{base!r} is not a test set of {cfg_path} (test sets: {', '.join(specs)})")
    if depth is not None and specs[base]["kind"] != "pooled":
        raise BadValueError("depth", f"{base} is not a pooled test set: a pooling depth applies only to "
                                     f"{', '.join(t for t, s in specs.items() if s['kind'] == 'pooled')}")
    dataset = specs[base]["dataset"]
    root = _data_root(workdir)
    files = data_files(root, dataset, base)
    missing = [p for p in files.values() if not p.is_file()]
    if missing:
        if not build:
            raise DataUnavailableError(f"{missing[0]} is missing: run the data stage (snakemake --cores 1 "
                                       f"{' '.join(str(p) for p in missing)}) or call with build=True")
        build_data(root, cfg_path, list(files.values()))

    kg = KnowledgeGraph.load(files["kg"])
    ts = TestSet.load(files["tsv"], kg, base)
    if depth is not None:
        deepest = int(ts.depth.max()) if len(ts) else 0
        if depth > deepest:  # deeper than the pools: the full set under another name
            raise BadValueError("depth", f"{depth} is out of range: {base} was pooled to depth {deepest} (expected "
                                         f"an integer from {depth_bound.minimum} to {deepest})")
        ts = ts.at_depth(depth)
    qs = load_questions(files["questions"], kg)
    ents, rels = np.array(kg.entities, dtype=object), np.array(kg.relations, dtype=object)
    qid = np.array(qs.qid, dtype=object)
    questions = pd.DataFrame({"qid": qid, "side": np.where(qs.side == 0, "head", "tail"),
                              "entity": ents[qs.entity], "relation": rels[qs.relation]})
    j = judged_entities(ts, qs)
    qrels = pd.DataFrame({"qid": qid[j.q], "docno": ents[j.entity], "relevance": j.label.astype(np.int64)})
    answers = qrels.loc[qrels["relevance"] == 1, ["qid", "docno"]].reset_index(drop=True)
    label = base if depth is None else f"{base}({depth})"
    return TestCollection(label, base, dataset, depth, questions, answers, qrels, files, workdir, cfg, cfg_path)


# ---- measures ------------------------------------------------------------------------------------------------
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
    from .metrics.registry import resolve_all

    return [(m.name, m.micro, m.macro) for m in resolve_all(measures)]


def _study_columns(measures: Iterable[str]) -> list[str]:
    """The registry columns of measure names, as the study's tables hold them (micro and macro where both
    exist). RR@k is refused: the tables hold recip_rank, and placing on it would silently drop the cut."""
    from .metrics.registry import resolve_all

    columns = []
    for m in resolve_all(measures):
        if m.cut is not None:
            raise MeasureError(m.name, "the study's tables hold RR (recip_rank) without a cutoff: use RR")
        columns += [c for c in (m.micro, m.macro) if c is not None]
    return columns


# ---- runs ----------------------------------------------------------------------------------------------------
def _run_frame(run: pd.DataFrame | Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    if isinstance(run, pd.DataFrame):
        df = run.rename(columns={"query_id": "qid", "doc_id": "docno", "q_id": "qid"})
        missing = [c for c in ("qid", "docno", "score") if c not in df.columns]
        if missing:
            raise BadValueError("run", "a run DataFrame needs the columns qid, docno, score (missing: "
                                       f"{', '.join(missing)})")
        _check_scores(df)
        return df
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    df = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    _check_scores(df)
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
    from .config import run_depth
    from .data.kg import KnowledgeGraph
    from .external.evaluate import HEADLINE, mean_interval
    from .external.systems import System, dump_system
    from .metrics.evaluate import evaluate as evaluate_dump
    from .metrics.evaluate import qrels_at_depth
    from .metrics.registry import resolve_all
    from .metrics.steps import summary_frame
    from .metrics.trec import reciprocal_rank_at
    from .scores.dumps import load_dump

    _check_run(run)
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
    bootstrap = _bound(("arguments", "bootstrap"), workdir).check(bootstrap, "bootstrap")
    wanted = resolve_all(measures)
    tc = testset if isinstance(testset, TestCollection) else load_testset(testset, workdir=workdir)
    trec_measures = list(tc.config["evaluation"]["trec_measures"])
    trec_measures += [m.macro for m in wanted if m.trec and m.macro not in trec_measures]

    with tempfile.TemporaryDirectory(prefix="kgeval-api-") as tmp:
        if isinstance(run, str | os.PathLike):
            path = Path(run)
            if not path.is_file():
                raise FileNotFoundError(f"{path}: run file not found")
        else:
            path = _write_run(_run_frame(run), Path(tmp) / f"{tc.base}.run", name)
        kg = KnowledgeGraph.load(tc.files["kg"])
        system = System(name, "run", path, {tc.base: path})
        folder = Path(out if out is not None else tmp) / "dumps" / name / tc.base
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
                  evaluated_run)


# ---- placement among the study's systems ---------------------------------------------------------------------
def _reference(result: Result, results: str | os.PathLike | None):
    """The reference :func:`place` and :func:`compare` use (:func:`kgeval.external.reference.resolve`): the
    given folder (or ``authors:DIR``), else ``<workdir>/results`` when it holds the test set's tables, else the
    shipped reference pack."""
    from .external import placement, reference

    if result.testset.depth is not None:
        raise ValueError(f"placement compares with the study's {result.testset.base} under all its judgments; "
                         f"evaluate on {result.testset.base} without a depth")
    spec = "auto" if results is None else str(results)
    local = result.testset.workdir / "results"
    ref = reference.resolve(spec, local, [result.testset.base])
    if ref is None or result.testset.base not in ref.files:
        raise FileNotFoundError(reference.missing_note(spec, local, [result.testset.base]))
    if ref.kind != "authors":
        placement.check_names(ref.files, [result.name])
    return ref


def _study(result: Result, results: str | os.PathLike | None) -> dict[str, Path]:
    return _reference(result, results).files[result.testset.base]


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
    from .external import placement, reference

    if metrics is not None:  # names first: a bad one is refused before any result or reference is looked at
        metrics = check_strings(metrics, "metrics", "metric columns")
    wanted = _study_columns(metrics) if metrics else None
    results_list = _check_results(result)
    check_path(results, "results", nullable=True)
    workdir = results_list[0].testset.workdir
    if trials is None:
        trials = results_list[0].testset.config.get("analysis", {}).get("tukey_trials")
    trials = _bound(("analysis", "tukey_trials"), workdir).check(trials, "trials")
    seed = _bound(("analysis", "seed"), workdir).check(seed, "seed")
    wanted = wanted or list(placement.HEADLINE)
    frames, notes = [], []
    for r in results_list:
        ref = _reference(r, results)
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
        trials, seed: the Tukey HSD's permutations.

    Returns:
        A :class:`~kgeval.external.comparison.Comparison`; ``.markdown()`` and ``.latex()`` give ranx's table. With the authors' released
        tables (``authors:DIR``: no per-item values) no test is possible and no mark is set.
    """
    from .external.comparison import TESTS, Comparison, better_marks, letters, pvalue_matrix
    from .external.placement import ITEM_KEYS, _study_items, item_kind, study_systems
    from .metrics.registry import higher_is_better

    measures = check_strings(measures, "measures", "measure names")
    columns = _study_columns(measures)  # names first, as place does
    results_list = _check_results(result)
    check_path(results, "results", nullable=True)
    if test not in TESTS:
        raise BadValueError("test", f"unknown test {test!r}: {' or '.join(TESTS)}")
    if len({r.testset.base for r in results_list}) > 1:
        raise BadValueError("result", "compare takes results on one test set: "
                                      + ", ".join(sorted({r.testset.base for r in results_list})))
    ref = _reference(results_list[0], results)
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
