"""Test sets with their judgments, as DataFrames: :func:`load_testset` and :class:`TestCollection`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..arguments import check_flag, check_path, kind_of, short_repr
from ..errors import BadTypeError, BadValueError
from . import data
from .checks import bound

_DEPTH_NAME = re.compile(r"^(?P<base>.+)\((?P<depth>\d+)\)$")  # FB-Test-S-C(3): FB-Test-S-C at pooling depth 3


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
        from ..data.kg import KnowledgeGraph

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
    from ..data.judged import judged_entities
    from ..data.kg import KnowledgeGraph
    from ..data.questions import load_questions
    from ..data.testsets import TestSet

    if not isinstance(name, str):
        raise BadTypeError("name", f"{short_repr(name)} is {kind_of(name)}, expected a test set's name (a str)")
    if not name:
        raise BadValueError("name", "an empty name: give a test set's name, e.g. 'FB-Test-S-C'")
    check_path(workdir, "workdir")
    check_path(config, "config", nullable=True)
    check_flag(build, "build")
    depth_bound = bound(("arguments", "depth"), workdir)
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
    cfg, cfg_path = data._load_config(workdir, config)
    specs = cfg["test_sets"]
    if base not in specs:
        raise KeyError(f"{base!r} is not a test set of {cfg_path} (test sets: {', '.join(specs)})")
    if depth is not None and specs[base]["kind"] != "pooled":
        raise BadValueError("depth", f"{base} is not a pooled test set: a pooling depth applies only to "
                                     f"{', '.join(t for t, s in specs.items() if s['kind'] == 'pooled')}")
    dataset = specs[base]["dataset"]
    root = data._data_root(workdir)
    files = data.data_files(root, dataset, base)
    missing = [p for p in files.values() if not p.is_file()]
    if missing:
        if not build:
            raise data.DataUnavailableError(f"{missing[0]} is missing: run the data stage (snakemake --cores 1 "
                                       f"{' '.join(str(p) for p in missing)}) or call with build=True")
        data.build_data(root, cfg_path, list(files.values()))

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

