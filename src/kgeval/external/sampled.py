"""Sampled judgments in ``kgeval evaluate``: per opponent (``--decide-against``, default every study system) the
budget a sample needs to decide the comparison at 95 %, one plan over the unknowns of the compared top-k lists
(``sampling_plan.tsv`` in ``annotate-export``'s format, its sidecar ``sampling_plan.csv`` with π and the judging
order), and, once the sheet went through ``annotate-merge`` (``--judgments``), Δ̂ with its interval
(:mod:`kgeval.sampling.outside`), as ``placement.csv`` columns and a ``summary.md`` paragraph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..errors import InputError
from ..judgments.items import METRIC_NAMES
from ..sampling.estimates import plan_labels
from ..sampling.more import more_words
from ..sampling.outside import SamplingOptions, check_against, outside_estimates, plan_outside
from ..sampling.weights import is_linear

__all__ = ["SamplingOptions", "check_against", "file_names", "judged", "sampled"]  # the options live in sampling

PLAN_FILES = ("sampling_plan.tsv", "sampling_plan.csv")


def file_names(name: str, several: bool) -> tuple[str, str]:
    """``sampling_plan.tsv`` / ``.csv``, or ``sampling_plan.<name>.tsv`` / ``.csv`` when several systems are placed."""
    return PLAN_FILES if not several else tuple(f.replace("plan.", f"plan.{name}.") for f in PLAN_FILES)


def sampled(out: Path, kg: KnowledgeGraph, name: str, dump, study: np.ndarray, opponents: list[str], k: int,
            rbp_p: float, opts: SamplingOptions, templates: dict, several: bool = False,
            written: dict[str, Path] | None = None) -> tuple[pd.DataFrame, str]:
    """The plan (written to ``out``) and, with ``opts.judgments``, the estimates of ``name`` (its dump) against
    the opponents ``opts.against`` (default: all the study systems ``opponents``, whose top k ``study``
    (S, Q, k) is in the dump's question order): one row per opponent (``System``, ``Opponent`` and the
    ``<M>@k_sample_*`` columns) and the summary's sentences."""
    sheet, sidecar = file_names(name, several)
    wanted, op, side = plan_outside(name, dump, study, opponents, kg, k, opts, rbp_p,
                                    files=(out / sheet, out / sidecar), templates=templates, skip_judged=True)
    prefix = f"{opts.metric}@{k}_sample"
    if op is None:
        return pd.DataFrame(), f"{name}: every item of the compared top {k} lists is judged, nothing to sample"
    if written is not None:
        written.update({sheet: out / sheet, sidecar: out / sidecar})
    pairs = op.plan.pairs
    rows = pd.DataFrame({"System": name, "Opponent": wanted, f"{prefix}_expected_delta": pairs["expected_delta"],
                         f"{prefix}_budget": pairs["budget_needed"], f"{prefix}_plan_budget": op.plan.budget,
                         f"{prefix}_plan_half_width": pairs["expected_half_width"]})
    need = ", ".join(f"{o} {_budget(b)}" for o, b in zip(wanted, pairs["budget_needed"]))
    text = (f"{name}: judgments a sample needs to decide Δ = {name} − opponent at {opts.level:.0%} (expected, "
            f"{opts.metric}@{k}, each opponent alone): {need}. {sheet} holds one plan for them all: "
            f"{side['item'].nunique():,} triples to judge (expected {op.plan.budget:,.0f}; {sidecar} gives each its π "
            "and judging order)")
    if opts.judgments:
        est = judged(op, side, sidecar, opts.judgments, rbp_p, opts.level)
        rows = rows.assign(**{f"{prefix}_delta": est["delta"].to_numpy(), f"{prefix}_lo": est["lo"].to_numpy(),
                              f"{prefix}_hi": est["hi"].to_numpy(), f"{prefix}_decided": est["decided"].to_numpy(),
                              f"{prefix}_judgments": est["judgments_used"].to_numpy(),
                              f"{prefix}_more_judgments": est["more_judgments"].to_numpy()})
        text += (f". From the judgments of {opts.judgments} ({opts.level:.0%} intervals): " + "; ".join(
            f"{o} Δ̂ {r.delta:+.4f} [{r.lo:+.4f}, {r.hi:+.4f}] "
            f"{'decided' if r.decided else 'undecided — ' + more_words(r.more_judgments, opts.max_budget)} "
            f"({r.judgments_used} judgments)" for o, r in zip(wanted, est.itertuples(index=False))))
        more = est["more_judgments"].to_numpy(float)
        if np.isfinite(more).any():
            # a larger budget with the same options draws a superset of this plan (kgeval.sampling.design.split)
            text += (f". A second look: the same command with --sample-budget {op.plan.budget + more[np.isfinite(more)].max():,.0f} "
                     "draws a plan holding every triple of this one, so only its new triples need judging")
    return rows, text


def _budget(b: float) -> str:
    return f"{b:,.0f}" if np.isfinite(b) else "more than max_budget (undecided at any affordable budget)"


def judged(op, side: pd.DataFrame, sidecar: str, labels: str, rbp_p: float = 0.8,
           level: float = 0.95) -> pd.DataFrame:
    """Δ̂ per opponent from the merged labels ``labels`` (``head relation tail Y|N``) of the plan's sheet; the
    plan is this run's (``side``, its sidecar's frame): the same seed and inputs draw the same plan, and a
    labels file that judges other triples, or leaves a drawn one unjudged, is refused."""
    from ..pools.annotation.qrels import _read_qrels_rows

    plan = side.assign(line=np.arange(2, len(side) + 2))
    x = plan_labels(plan, sidecar, _read_qrels_rows(labels), labels, not is_linear(METRIC_NAMES[op.metric]))
    try:
        return outside_estimates(op, op.plan.items, plan["pi"].to_numpy(float), x, plan["item"].to_numpy(int),
                                 rbp_p, level)
    except ValueError as exc:
        raise InputError(sidecar, None, str(exc)) from None
