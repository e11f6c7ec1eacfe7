"""A sampling plan from a reference pack's lists, no model trained: the study systems' top 10 on a pooled test set
(``reference/<pack>/runs/<test set>/top10.parquet``, columns System, qid, rank, entity) with the test set's
published judgments, as :func:`kgeval.judgments.universe.build` takes them. What a judging campaign
(``kgeval campaign create``) on the real FB-Test-S-C starts from when no run of the workflow is at hand::

    from kgeval.sampling.reference import reference_plan
    reference_plan("resources/datasets/FB15k-237/kg.npz", "resources/testsets/FB-Test-S-C.tsv",
                   "resources/testsets/FB-Test-S-C.questions.tsv",
                   "reference/default/runs/FB-Test-S-C/top10.parquet", "annotations/templates.tsv", "plan",
                   budget=40, testset="FB-Test-S-C")
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..data.kg import KnowledgeGraph
from ..data.questions import load_questions
from ..data.testsets import TestSet
from ..errors import InputError
from ..judgments.lists import pack_array
from ..judgments.universe import Universe, build
from ..scores.ranking import judged_entities
from .steps import plan_universe

PLAN_FILES = ("sampling_plan.tsv", "sampling_plan.csv", "sampling_budgets.csv")
# what the plan was drawn from, so that `kgeval campaign create --plan` and `kgeval sample-estimate --plan` rebuild
# its universe without asking the user for files they never handled
SOURCE_FILE = "sampling_source.json"


def reference_universe(kg: KnowledgeGraph, testset: TestSet, questions_tsv: str | Path, top: str | Path,
                       k: int = 10, max_depth: int = 10) -> Universe:
    """The plan's universe from a pack's ``top10.parquet`` of the test set whose judgments and questions are given."""
    qs = load_questions(questions_tsv, kg)
    systems, entity = pack_array(top, qs.qid, k, questions_tsv)
    return build(systems, entity, judged_entities(testset, qs), qs, kg, k, max_depth)


def reference_plan(kg_path: str | Path, testset_tsv: str | Path, questions_tsv: str | Path, top: str | Path,
                   templates: str | Path, out_dir: str | Path, budget: int | None = None, metric: str = "P",
                   seed: int = 0, testset: str = "", k: int = 10, max_depth: int = 10, final_dir: str | Path | None = None,
                   **options) -> dict[str, Path]:
    """``sampling_plan.tsv``, ``sampling_plan.csv`` and ``sampling_budgets.csv`` in ``out_dir``, as the workflow's
    ``sampling_plan`` rule writes them (:func:`kgeval.sampling.steps.plan_step`; ``options`` are its keywords),
    on the pack's lists instead of score dumps, and :data:`SOURCE_FILE` naming those inputs (relative to
    ``final_dir``, where the files end up; default ``out_dir``). Returns the three plan files' paths by name."""
    kg = KnowledgeGraph.load(kg_path)
    u = reference_universe(kg, TestSet.load(testset_tsv, kg), questions_tsv, top, k, max_depth)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in PLAN_FILES}
    plan_universe(u, kg, str(templates), *(str(p) for p in paths.values()), metric=metric, budget=budget, seed=seed,
                  testset=testset, **options)
    where = Path(final_dir if final_dir is not None else out).resolve()
    rel = {key: os.path.relpath(Path(v).resolve(), where) for key, v in
           (("kg", kg_path), ("testset_tsv", testset_tsv), ("questions", questions_tsv), ("top", top))}
    source = {"kind": "reference", **rel, "k": k, "max_depth": max_depth, "prior": options.get("prior", "boosted"),
              "rbp_p": options.get("rbp_p", 0.8), "testset": testset}
    (out / SOURCE_FILE).write_text(json.dumps(source, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return paths


def read_source(plan_dir: str | Path) -> dict | None:
    """The plan folder's :data:`SOURCE_FILE` with its paths made absolute, or None when there is none (a plan the
    workflow or an older kgeval wrote)."""
    path = Path(plan_dir) / SOURCE_FILE
    if not path.is_file():
        return None
    try:
        source = json.loads(path.read_text(encoding="utf-8"))
        for key in ("kg", "testset_tsv", "questions", "top"):
            source[key] = str((Path(plan_dir) / source[key]).resolve())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(path, None, f"cannot read the plan's source: {exc}") from None
    if source.get("kind") != "reference":
        raise InputError(path, None, f"kind {source.get('kind')!r}: expected reference")
    missing = [source[key] for key in ("kg", "testset_tsv", "questions", "top") if not Path(source[key]).is_file()]
    if missing:
        raise InputError(path, None, f"the plan was drawn from {missing[0]}, which is no longer there")
    return source


def source_universe(source: dict) -> tuple[Universe, KnowledgeGraph]:
    """The universe a plan with a :data:`SOURCE_FILE` was drawn on, and its graph."""
    kg = KnowledgeGraph.load(source["kg"])
    return reference_universe(kg, TestSet.load(source["testset_tsv"], kg), source["questions"], source["top"],
                              source["k"], source["max_depth"]), kg
