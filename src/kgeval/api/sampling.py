"""Sampled judgments for an evaluated system against the study's systems: :func:`plan` and :func:`estimate`,
what ``kgeval evaluate --decide-against`` and ``--judgments`` do (:mod:`kgeval.external.sampled`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..arguments import Bounded, check_path, check_strings, kind_of, short_repr
from ..errors import BadTypeError, BadValueError
from .checks import bounds, study_reference
from .evaluation import Result

METRICS = ("P", "DCG", "RBP", "RR", "Success")


@dataclass
class SamplingPlan:
    """A plan of judgments deciding ``system`` against each of ``opponents``.

    Attributes:
        system: the evaluated system's name; every difference is Δ = system − opponent.
        opponents: the study systems it is compared with.
        metric: the metric's short name (``P``, ``DCG``, ``RBP``, ``RR``, ``Success``) at cut-off ``k``.
        budgets: one row per opponent: ``Opponent``, ``expected_delta`` (E[Δ] under the prior), ``budget`` (the
            judgments a sample of that comparison alone needs for its expected 95 % interval to exclude 0; NaN
            beyond ``max_budget``), ``plan_budget`` (this plan's expected judgments) and ``plan_half_width`` (the
            expected half-width of the interval at this plan).
        sheet: one row per drawn (question, entity), in judging order: the sidecar ``sampling_plan.csv``
            (``item`` the triple's number on the sheet, ``order``, ``head_id``, ``relation``, ``tail_id``,
            ``asks``, ``pi``, ``p``, ``audit``, ``plan_sha256``: the checksum :func:`estimate` verifies).
        files: ``{"sheet": sampling_plan.tsv, "sidecar": sampling_plan.csv}`` when written (``out``).
    """

    system: str
    opponents: list[str]
    metric: str
    k: int
    level: float
    budgets: pd.DataFrame
    sheet: pd.DataFrame
    files: dict[str, Path]
    rbp_p: float = field(default=0.8, repr=False)
    outside: Any = field(default=None, repr=False)  # kgeval.sampling.outside.OutsidePlan

    def triples(self) -> pd.DataFrame:
        """The distinct triples to judge, in sheet order: ``item``, ``head_id``, ``relation``, ``tail_id``."""
        return self.sheet.drop_duplicates("item").sort_values("item")[["item", "head_id", "relation", "tail_id"]]


def plan(result: Result, against: Sequence[str] | None = None, metric: str = "P", budget: int | None = None,
         results: str | os.PathLike | None = None, out: str | os.PathLike | None = None,
         floor_share: float | None = None, level: float | None = None, max_budget: int | None = None,
         seed: int | None = None, pool_depth: int | None = None) -> SamplingPlan:
    """The sampled judgments that decide ``result``'s system against study systems on the pooled test set.

    Args:
        result: a :func:`kgeval.evaluate` result on the pooled test set (``FB-Test-S-C``), without a depth.
        against: study system names (default: every study system of the reference).
        metric: ``P``, ``DCG`` or ``RBP`` (item sampling), ``RR`` or ``Success`` (question sampling: a sampled
            question has each compared top k judged from the top down to its first relevant item), at the config's ``bounds.k``.
        budget: the plan's expected judgments (default: the largest budget an opponent needs, at most
            ``max_budget``).
        results: the study (as :func:`kgeval.place`): a results folder or reference pack holding the study
            systems' top-k lists.
        out: a folder to write ``sampling_plan.tsv`` (annotate-export's format) and ``sampling_plan.csv`` into.
        floor_share: the share of the budget drawn uniformly from never-pooled unknowns, the prior's audit
            (default: the config's ``sampling.floor_share``).
        level: the intervals' confidence level (default: ``sampling.level``).
        max_budget: the largest budget a plan may propose (default: ``sampling.max_budget``).
        seed: the plan's random seed (default: ``sampling.seed``).
        pool_depth: the deepest pool depth whose judgments count as known (default: the config's
            ``pooling.depth``, every published judgment). ``0`` keeps only the test answers and leaves every pooled
            label unknown, as the sampling simulation does: the published labels can then judge the sheet, a
            check of the whole round trip on real labels.

    Returns:
        A :class:`SamplingPlan`; :func:`estimate` turns its judged sheet into Δ̂ with intervals.
    """
    from contextlib import nullcontext

    from ..external.reference import study_entity
    from ..external.sampled import file_names
    from ..io import OutputStage
    from ..pools.annotation import load_templates
    from ..sampling.outside import SamplingOptions, plan_outside

    if not isinstance(result, Result):
        raise BadTypeError("result", f"{short_repr(result)} is {kind_of(result)}, expected a Result of kgeval.evaluate")
    if against is not None:
        against = check_strings(against, "against", "study system names")
    if metric not in METRICS:
        raise BadValueError("metric", f"{short_repr(metric)}: expected one of {', '.join(METRICS)}")
    check_path(results, "results", nullable=True)
    check_path(out, "out", nullable=True)
    tc = result.testset
    cfg = tc.config.get("sampling", {})
    wd = tc.workdir
    # one look-up of the schema for every bounded argument
    b_budget, b_floor, b_level, b_max, b_seed, b_depth = bounds(
        [("sampling", key) for key in ("budget", "floor_share", "level", "max_budget", "seed")]
        + [("pooling", "depth")], wd)
    budget = b_budget.check(budget, "budget")
    floor_share = b_floor.check(cfg.get("floor_share", 0.1) if floor_share is None else floor_share, "floor_share")
    level = b_level.check(cfg.get("level", 0.95) if level is None else level, "level")
    max_budget = b_max.check(cfg.get("max_budget", 10_000) if max_budget is None else max_budget, "max_budget")
    seed = b_seed.check(cfg.get("seed", 0) if seed is None else seed, "seed")
    depth = tc.config.get("pooling", {}).get("depth", 10)
    # 0 (the test answers only) is a depth the pool was never cut at, but a universe the simulation uses
    depth = Bounded("integer", 0, b_depth.maximum).check(depth if pool_depth is None else pool_depth, "pool_depth")
    if tc.config["test_sets"][tc.base]["kind"] not in ("pooled", "sample"):
        raise BadValueError("result", f"{tc.base} has no pooled judgments: evaluate on the pooled test set")
    if result.dump is None:
        raise BadValueError("result", f"{result.name}: this Result holds no score dump (made by an older kgeval)")
    ref = study_reference(result, results)
    if ref.kind == "authors":
        raise BadValueError("results", "the authors' released tables hold no top-k lists: give a results folder "
                                       "or a reference pack")
    k = tc.config.get("bounds", {}).get("k", 10)
    rbp_p = tc.config.get("bounds", {}).get("rbp_p", 0.8)
    dump = result.dump
    qids = np.asarray(dump.questions.qid).astype(str)
    # every study list, in the dump's question order: the prior learns from all of them
    study, study_k, entity = study_entity(ref, tc.base, qids, k)
    if min(study_k, dump.k) < k:
        raise BadValueError("result", f"the runs are shorter than bounds.k = {k} (study {study_k}, "
                                      f"{result.name} {dump.k})")
    opts = SamplingOptions(against=against, metric=metric, budget=budget, design=cfg.get("design", "optimal"),
                           floor_share=floor_share, level=level, max_budget=max_budget,
                           prior=tc.config.get("bounds", {}).get("prior", "boosted"), seed=seed,
                           mc_draws=cfg.get("mc_draws", SamplingOptions.mc_draws), judging=cfg.get("judging", "rank_order"),
                           max_depth=depth)
    kg = tc.load_kg()
    files: dict[str, Path] = {}
    tmpl = Path(wd) / tc.config.get("annotation", {}).get("templates", "annotations/templates.tsv")
    if out is not None:
        sheet_name, side_name = file_names(result.name, False)
        files = {"sheet": Path(out) / sheet_name, "sidecar": Path(out) / side_name}
    # the command line's output rule: never inside the results read, never over a file kgeval did not write
    with (OutputStage("plan", folder=out, input_folders=[ref.folder]) if out is not None else nullcontext()) as stage:
        paths = (stage.path(files["sheet"]), stage.path(files["sidecar"])) if out is not None else None
        wanted, op, side = plan_outside(result.name, dump, entity, study, kg, k, opts, rbp_p, "against", paths,
                                        load_templates(tmpl) if out is not None and tmpl.is_file() else None)
    p = op.plan.pairs
    budgets = pd.DataFrame({"Opponent": wanted, "expected_delta": p["expected_delta"].to_numpy(),
                            "budget": p["budget_needed"].to_numpy(), "plan_budget": op.plan.budget,
                            "plan_half_width": p["expected_half_width"].to_numpy()})
    return SamplingPlan(result.name, wanted, metric, k, level, budgets, side, files, rbp_p, op)


def _check_sheet(side: pd.DataFrame) -> None:
    """The plan's sheet as :func:`plan` made it: π in (0, 1] and every row's checksum (an edited π, p or list
    moves Δ̂ anywhere: π = 1.5 or 1e-300 is refused, never estimated)."""
    from ..sampling.checksum import MESSAGE, first_broken

    pi = pd.to_numeric(side["pi"], errors="coerce").to_numpy(float) if "pi" in side.columns else np.array([np.nan])
    bad = ~((pi > 0) & (pi <= 1))  # NaN and inf fail both comparisons
    if bad.any():
        i = int(np.argmax(bad))
        shown = side["pi"].iloc[i] if "pi" in side.columns else None
        shown = float(shown) if isinstance(shown, np.number) else shown
        raise BadValueError("sampling_plan", f"sheet row {i}: pi {short_repr(shown)} is not a number in (0, 1]")
    broken = first_broken(side)
    if broken is not None:
        raise BadValueError("sampling_plan", f"sheet row {broken} " + MESSAGE)


def _check_design(sampling_plan: SamplingPlan) -> None:
    """The sheet's π against the design the plan drew (kept in memory beside it): a π edited with its checksum
    recomputed passes :func:`_check_sheet`, never this."""
    op = sampling_plan.outside
    if op is None or len(op.plan.pi) != len(sampling_plan.sheet):
        return
    got = pd.to_numeric(sampling_plan.sheet["pi"], errors="coerce").to_numpy(float)
    off = ~np.isclose(got, op.plan.pi, rtol=1e-6, atol=0.0)
    if off.any():
        i = int(np.argmax(off))
        raise BadValueError("sampling_plan", f"sheet row {i}: pi {got[i]:.6g} is not the plan's ({op.plan.pi[i]:.6g}, "
                                             "its design's): π was changed after the plan was drawn; plan again "
                                             "rather than edit its sheet")


def estimate(sampling_plan: SamplingPlan, judgments: str | os.PathLike | pd.DataFrame) -> pd.DataFrame:
    """Δ̂ = system − opponent per opponent, with its interval, from the judged sheet of ``sampling_plan``.

    Args:
        sampling_plan: a :func:`plan`.
        judgments: the merged labels of its sheet: a ``head relation tail Y|N`` file as ``kgeval annotate-merge``
            writes it, or a DataFrame with ``head_id``, ``relation``, ``tail_id`` and ``label`` (``Y``/``N``).
            Every drawn triple must be judged, and nothing else.

    Returns:
        One row per opponent: ``Metric``, ``A`` (the system), ``B`` (the opponent), ``delta`` (Δ̂, unbiased
        whatever the prior), ``var``, ``lo``/``hi`` (the interval at the plan's level), ``decided`` (the interval
        excludes 0), ``units``, ``judgments_used``, ``level``, ``more_judgments`` (an undecided opponent: the
        further judgments that would decide it at the estimate in hand; NaN when decided or beyond ``max_budget``).
    """
    from ..external.sampled import judged

    if not isinstance(sampling_plan, SamplingPlan):
        raise BadTypeError("sampling_plan", f"{short_repr(sampling_plan)} is {kind_of(sampling_plan)}, expected a "
                                            "SamplingPlan of kgeval.plan")
    _check_sheet(sampling_plan.sheet)
    _check_design(sampling_plan)
    if isinstance(judgments, pd.DataFrame):
        need = ["head_id", "relation", "tail_id", "label"]
        missing = [c for c in need if c not in judgments.columns]
        if missing:
            raise BadValueError("judgments", f"no column {', '.join(missing)} (expected {', '.join(need)})")
        bad = ~judgments["label"].isin(["Y", "N"])
        if bad.any():
            raise BadValueError("judgments", f"row {int(np.argmax(bad.to_numpy()))}: label "
                                             f"{short_repr(judgments['label'][bad].iloc[0])}, expected Y or N")
        import tempfile

        with tempfile.TemporaryDirectory(prefix="kgeval-labels-") as tmp:
            path = Path(tmp) / "judgments.txt"
            judgments[need].to_csv(path, sep="\t", header=False, index=False)
            return judged(sampling_plan.outside, sampling_plan.sheet, "sampling_plan.csv", str(path),
                          sampling_plan.rbp_p, sampling_plan.level)
    check_path(judgments, "judgments")
    return judged(sampling_plan.outside, sampling_plan.sheet, "sampling_plan.csv", os.fspath(judgments),
                  sampling_plan.rbp_p, sampling_plan.level)
