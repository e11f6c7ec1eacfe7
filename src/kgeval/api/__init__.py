"""kgeval's Python API: test sets with their judgments, evaluation of a run, and placement among the study's systems.

Three calls cover the notebook workflow, in the style of ir_datasets, ir_measures and ranx::

    from kgeval import load_testset, evaluate, place

    sc = load_testset("FB-Test-S-C")                         # questions, answers, qrels as DataFrames
    result = evaluate("my.run", sc, measures=["MRR", "Hits@10", "nDCG@20", "RR@10"])
    result.aggregate                                         # one row per measure: micro and macro value
    place(result)                                            # rank and significance among the study's systems

and two more decide a comparison with sampled judgments: ``plan(result, against=["ComplEx"])`` (the budget and
the sheet to judge) and ``estimate(the_plan, "merged.labels.txt")`` (Δ̂ with its interval).

``reproduce("results", "reference/smoke")`` compares a rerun with a reference pack or another run, bit for bit
(``kgeval reproduce``): its ``identical``, ``values`` and ``verdicts``; ``reproduce_report`` of it is the command's
text.

Every number comes from the functions that build the workflow's own tables and that ``kgeval evaluate`` calls:
a run is read and filtered by :mod:`kgeval.external.runfile` into a score dump, evaluated by
:func:`kgeval.metrics.evaluate.evaluate` and placed by :mod:`kgeval.external.placement`; measure names resolve
with :func:`kgeval.metrics.registry.resolve` onto :data:`kgeval.metrics.registry.REGISTRY` (RR@k, too, is
:func:`kgeval.metrics.trec.reciprocal_rank_at`). Nothing here computes a metric of its own.
"""

from .baselines import baseline
from .data import DataUnavailableError, build_data, data_files
from .evaluation import DEFAULT_MEASURES, Result, Run, evaluate, resolve_measures
from .placement import compare, place
from .reproduce import Comparison, reproduce, reproduce_report
from .sampling import SamplingPlan, estimate, plan
from .testsets import TestCollection, load_testset

__all__ = ["TestCollection", "Result", "load_testset", "evaluate", "place", "compare", "resolve_measures",
           "DataUnavailableError", "data_files", "build_data", "DEFAULT_MEASURES", "Run", "plan", "estimate",
           "SamplingPlan", "baseline", "reproduce", "reproduce_report", "Comparison"]
