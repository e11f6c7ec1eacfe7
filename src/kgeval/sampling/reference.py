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

from pathlib import Path

from ..data.kg import KnowledgeGraph
from ..data.questions import load_questions
from ..data.testsets import TestSet
from ..judgments.lists import pack_array
from ..judgments.universe import Universe, build
from ..scores.ranking import judged_entities
from .steps import plan_universe

PLAN_FILES = ("sampling_plan.tsv", "sampling_plan.csv", "sampling_budgets.csv")


def reference_universe(kg: KnowledgeGraph, testset: TestSet, questions_tsv: str | Path, top: str | Path,
                       k: int = 10, max_depth: int = 10) -> Universe:
    """The plan's universe from a pack's ``top10.parquet`` of the test set whose judgments and questions are given."""
    qs = load_questions(questions_tsv, kg)
    systems, entity = pack_array(top, qs.qid, k, questions_tsv)
    return build(systems, entity, judged_entities(testset, qs), qs, kg, k, max_depth)


def reference_plan(kg_path: str | Path, testset_tsv: str | Path, questions_tsv: str | Path, top: str | Path,
                   templates: str | Path, out_dir: str | Path, budget: int | None = None, metric: str = "P",
                   seed: int = 0, testset: str = "", k: int = 10, max_depth: int = 10, **options) -> dict[str, Path]:
    """``sampling_plan.tsv``, ``sampling_plan.csv`` and ``sampling_budgets.csv`` in ``out_dir``, as the workflow's
    ``sampling_plan`` rule writes them (:func:`kgeval.sampling.steps.plan_step`; ``options`` are its keywords),
    on the pack's lists instead of score dumps. Returns the three paths by name."""
    kg = KnowledgeGraph.load(kg_path)
    u = reference_universe(kg, TestSet.load(testset_tsv, kg), questions_tsv, top, k, max_depth)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in PLAN_FILES}
    plan_universe(u, kg, str(templates), *(str(p) for p in paths.values()), metric=metric, budget=budget, seed=seed,
                  testset=testset, **options)
    return paths
