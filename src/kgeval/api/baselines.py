"""Baselines as run files from the API and the command line: :func:`baseline` (``kgeval baseline``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..arguments import check_path
from ..errors import BadValueError
from . import data
from .checks import bound


def baseline(kind: str = "popularity", out: str | os.PathLike = "runs", testsets: Sequence[str] | None = None,
             dataset: str = "FB15k-237", depth: int = 100, tag: str | None = None, workdir: str | os.PathLike = ".",
             config: str | os.PathLike | None = None) -> dict[str, Path]:
    """Write a baseline's run files, ``out/<test set>.run.gz``, ready for :func:`kgeval.evaluate` and
    ``kgeval evaluate``: ``popularity`` (entities ranked by how often they fill the question's side of its
    relation in training) or ``frequency`` (by how often they occur in training at all); see
    :mod:`kgeval.external.baselines`.

    The data come from where :func:`kgeval.load_testset` finds them (``workdir``'s ``resources/`` in a workflow
    folder, else ``$KGEVAL_HOME``) and are built there first when missing, only the test sets asked for. The
    files appear together when all are written, or none; a file of ``out`` that an earlier ``baseline`` did not
    write is never replaced.

    Args:
        kind: ``"popularity"`` or ``"frequency"``.
        out: the folder for the run files.
        testsets: test sets of ``dataset`` (default: every one in the configuration).
        dataset: the dataset whose training triples the baseline counts.
        depth: entities per question (the run's depth).
        tag: the run's tag column (default: ``kind``).
        workdir: the workflow folder, as for :func:`kgeval.load_testset`.
        config: the workflow configuration, as for :func:`kgeval.load_testset`.

    Returns:
        test set -> the run file written.
    """
    from ..data.kg import KnowledgeGraph
    from ..data.questions import load_questions
    from ..external.baselines import KINDS, write_baseline_runs
    from ..external.command import dataset_testsets
    from ..io import OutputStage

    if kind not in KINDS:
        raise BadValueError("kind", f"{kind!r} is not a baseline (baselines: {', '.join(KINDS)})")
    if tag is not None and (not isinstance(tag, str) or not tag or any(ch.isspace() for ch in tag)):
        # a TREC run line is six whitespace-separated fields: a tag with a space would make it seven
        raise BadValueError("tag", f"{tag!r}: a run's tag is one word, without spaces or tabs")
    check_path(out, "out")
    check_path(workdir, "workdir")
    check_path(config, "config", nullable=True)
    depth = int(bound(("arguments", "baseline_depth"), workdir).check(depth, "depth"))
    workdir = Path(workdir).resolve()
    cfg, cfg_path = data._load_config(workdir, config)
    names = dataset_testsets(cfg, dataset, list(testsets) if testsets else None, cfg_path)
    root = data._data_root(workdir)
    files = {name: data.data_files(root, dataset, name) for name in names}
    missing = [p for f in files.values() for p in f.values() if not p.is_file()]
    if missing:
        data.build_data(root, cfg_path, missing)
    kg = KnowledgeGraph.load(files[names[0]]["kg"])
    questions = {name: load_questions(files[name]["questions"], kg) for name in names}
    inputs = [cfg_path, *{p for f in files.values() for p in f.values()}]
    # one command name for both kinds: a frequency baseline replaces what a popularity one wrote, as --out says
    with OutputStage("baseline", inputs=inputs, folder=out) as stage:
        written = write_baseline_runs(kg, questions, kind, stage.root, depth, tag or kind)
    return {name: Path(out) / path.name for name, (path, _) in written.items()}
