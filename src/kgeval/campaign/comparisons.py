"""The comparisons a sampling plan decides, as the campaign's live terms (:mod:`kgeval.campaign.live`).

From the plan's sidecar and per-pair table and the study's lists (the inputs of ``kgeval sample-estimate``),
per pair of the plan: ``base`` = K + Σ_U p_e d_e (the known part and the prior's expected rest), and per sheet
item i of the T items, drawn through its units e (a triple asked as a head and as a tail question is one item),

    c_x(i) = T · Σ_{e of i} d_e (x − p_e) / π_e,   x ∈ {0, 1},

so that the mean of base + c over all T final labels is the plan's Horvitz–Thompson estimate with the prior
as control variate (``kgeval sample-estimate``'s Δ̂, exactly), and each term is a draw of the confidence
sequence (an item drawn with q_i = π_i / T). ``lo`` and ``hi`` bound the terms over the plan's items. Linear
metrics only (P, DCG, RBP): a question metric's difference is observed only when a whole question is judged.

Each comparison also carries what the exact bounds and MTC's order need (:mod:`kgeval.campaign.exact`): the
bounds of Δ with every unknown of the study's lists unjudged (``bound_low``, ``bound_high``: the bounds module's
:class:`~kgeval.bounds.linear.LinearPairs`), and per item the rows ``dpos`` = Σ_{e of i} max(0, d_e), ``dneg`` =
Σ min(0, d_e) (what its label moves the bounds by), ``mtc`` = Σ d_e² p_e(1 − p_e) and ``mtc_tie`` = Σ d_e² (its
MTC priority and tie-break on this pair). They ride in the comparison dicts so that the (comps, c1, c0) triple
the callers unpack stays as it is.

And the plan's budget statistics (:func:`kgeval.sampling.more.pair_units`), for the judgments that would decide
the pair at the estimate in hand (:func:`kgeval.sampling.more.more_needed`, as ``kgeval sample-estimate``
computes them): ``budget_v``, the prior variance of every unit that bears on the pair in the study's lists,
drawn or not, and ``budget_item``, the sheet item (0-based, serving order) whose final label judges it, −1 for a
unit the plan did not draw (as ``sample-estimate`` counts the labels in hand: its drawn units).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..bounds.linear import LinearPairs
from ..data.kg import KnowledgeGraph
from ..errors import InputError
from ..judgments.items import METRIC_NAMES
from ..judgments.universe import Universe, from_dumps
from ..sampling.estimates import read_plan_items
from ..sampling.more import pair_units
from ..sampling.problem import Problem
from ..sampling.sheet import (
    check_design,
    locate_items,
    pair_columns,
    plan_prior,
    read_plan_pairs,
    unknown_units,
)
from ..sampling.weights import is_linear


def plan_comparisons(dumps: dict[str, str], kg_path: str, plan_items: str, plan_pairs: str, items: list[dict],
                     k: int = 10, prior: str | None = None, max_depth: int = 10, rbp_p: float = 0.8
                     ) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """The comparisons of the plan's pairs with their (comparisons × items in serving order) terms."""
    plan = read_plan_items(plan_items)
    table = read_plan_pairs(plan_pairs)
    short = table["Metric"].iloc[0]
    if not is_linear(METRIC_NAMES[short]):
        raise InputError(plan_pairs, 2, f"metric {short!r}: live estimates need a linear metric (P, DCG, RBP)")
    kg = KnowledgeGraph.load(kg_path)
    return universe_comparisons(from_dumps(dumps, kg, k, max_depth), kg, plan, plan_items, table, plan_pairs, items,
                                prior, rbp_p)


def source_comparisons(source: dict, plan_items: str, plan_pairs: str, items: list[dict]
                       ) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """The comparisons of a plan ``kgeval sample-plan`` drew from a reference pack (its ``sampling_source.json``,
    read by :func:`kgeval.sampling.reference.read_source`); none for a question metric's plan (RR, Success),
    whose difference is observed only when a whole question is judged: its campaign shows progress only."""
    from ..sampling.reference import source_universe

    table = read_plan_pairs(plan_pairs)
    if not is_linear(METRIC_NAMES[table["Metric"].iloc[0]]):
        return [], None, None
    u, kg = source_universe(source)
    return universe_comparisons(u, kg, read_plan_items(plan_items), plan_items, table, plan_pairs, items,
                                source["prior"], source["rbp_p"])


def universe_comparisons(u: Universe, kg: KnowledgeGraph, plan: pd.DataFrame, plan_items: str, table: pd.DataFrame,
                         plan_pairs: str, items: list[dict], prior: str | None = None, rbp_p: float = 0.8
                         ) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """:func:`plan_comparisons` on the study's lists already built (from score dumps, or from a reference pack's
    lists: :func:`kgeval.sampling.reference.reference_universe`), the plan's sidecar and pairs read."""
    short = table["Metric"].iloc[0]
    cols = pair_columns(u.systems, table, plan_pairs)
    where = unknown_units(u, kg)
    units = locate_items(plan, plan_items, u, kg, None, where)
    p = u.pooled_prior(plan_prior(plan, plan_items, u, prior))  # the plan's prior: None asks for no other
    check_design(plan, plan_items, u, p, METRIC_NAMES[short], cols, units, rbp_p)
    pb = Problem(u.cand, np.zeros(u.truth.size), METRIC_NAMES[short], rbp_p, 0)
    pos = {it["sheet_item"]: i for i, it in enumerate(items)}
    col = np.array([pos.get(str(int(i)), -1) for i in plan["item"]])
    if (col < 0).any():
        raise InputError(plan_items, int(plan["line"].iloc[int(np.argmax(col < 0))]), "item is not an item of the "
                                                                                       "sheet")
    # a final label fixes every unknown unit of its triple (asked as a head and as a tail question), drawn or not
    of_triple: dict[tuple, list[int]] = {}
    for (h, r, t, _), e in where.items():
        of_triple.setdefault((h, r, t), []).append(e)
    first = np.flatnonzero(~plan["item"].duplicated().to_numpy())
    every = [(e, col[i]) for i in first
             for e in of_triple[plan["head_id"].iloc[i], plan["relation"].iloc[i], plan["tail_id"].iloc[i]]]
    every = np.array(every, np.int64).reshape(-1, 2)
    return terms(pb, p, cols, units, plan["pi"].to_numpy(), col, len(items), u.systems,
                 METRIC_NAMES[short], rbp_p, every[:, 0], every[:, 1])


def terms(pb: Problem, p: np.ndarray, cols: np.ndarray, units: np.ndarray, pi: np.ndarray, item_of: np.ndarray,
          n_items: int, systems: list[str], metric: str, rbp_p: float = 0.8, all_units: np.ndarray | None = None,
          all_item_of: np.ndarray | None = None) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """The live terms of the pairs ``cols`` (see the module docstring) from the plan's drawn ``units``
    (candidate items) with their π and the sheet item (0-based, serving order) each belongs to. The exact
    bounds and MTC's terms count ``all_units`` (default: the drawn ones), every unknown unit a sheet item's label
    fixes, with their items ``all_item_of``."""
    base = pb.known[cols] + p[pb.U] @ pb.d[:, cols]
    d = pb.d[np.searchsorted(pb.U, units)][:, cols]  # (units × comparisons)
    pe = p[units]
    c1, c0 = np.zeros((cols.size, n_items)), np.zeros((cols.size, n_items))
    np.add.at(c1.T, item_of, n_items * d * ((1 - pe) / pi)[:, None])
    np.add.at(c0.T, item_of, n_items * d * (-pe / pi)[:, None])
    low, high = LinearPairs(pb.cand, p, metric, rbp_p).bounds()
    if all_units is None:
        all_units, all_item_of = units, item_of
    d, pe = pb.d[np.searchsorted(pb.U, all_units)][:, cols], p[all_units]
    per_item = {}
    for name, v in (("dpos", np.maximum(d, 0)), ("dneg", np.minimum(d, 0)),
                    ("mtc", d * d * (pe * (1 - pe))[:, None]), ("mtc_tie", d * d)):
        per_item[name] = np.zeros((cols.size, n_items))
        np.add.at(per_item[name].T, all_item_of, v)
    order = np.argsort(units, kind="stable")
    budget = []
    for bunits, bv in pair_units(pb, p, cols):
        at = np.clip(np.searchsorted(units[order], bunits), 0, max(units.size - 1, 0))
        hit = units[order][at] == bunits if units.size else np.zeros(bunits.size, bool)
        budget.append({"budget_v": bv, "budget_item": np.where(hit, item_of[order][at] if units.size else -1, -1)})
    comps = [{"a": systems[pb.a[c]], "b": systems[pb.b[c]], "metric": metric, "base": float(base[j]),
              "lo": float(base[j] + min(0.0, c0[j].min(), c1[j].min())),
              "hi": float(base[j] + max(0.0, c0[j].max(), c1[j].max())),
              "bound_low": float(low[c]), "bound_high": float(high[c])} | {k: v[j] for k, v in per_item.items()}
             | budget[j]
             for j, c in enumerate(cols)]
    return comps, c1, c0


def outside_comparisons(dump: str, reference: str, kg_path: str, plan_items: str, items: list[dict],
                        against: list[str], metric: str = "P", k: int = 10, prior: str | None = None,
                        max_depth: int = 10, rbp_p: float = 0.8) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """The comparisons of an outside system's plan (``kgeval evaluate --decide-against``): ``dump`` the score
    dump evaluate wrote (``<out>/dumps/<system>/<test set>``), the study's lists from the reference pack, the
    universe rebuilt as evaluate built it (:func:`kgeval.sampling.outside.outside_universe`, every study system of
    the pack's test set; ``max_depth`` its ``--pool-depth``), pairs (the outside system, each of ``against``)."""
    from pathlib import Path

    from ..judgments.lists import read_lists
    from ..sampling.outside import outside_universe
    from ..scores.dumps import load_dump

    folder = Path(dump)
    name, testset = folder.parent.name, folder.name
    if metric not in METRIC_NAMES or not is_linear(METRIC_NAMES[metric]):
        raise InputError(None, None, f"metric {metric!r}: live estimates need a linear metric (P, DCG, RBP)")
    scores = Path(reference) / "scores" / testset
    if scores.is_dir():  # a results folder: the study's score dumps
        study = sorted(f.name for f in scores.iterdir() if (f / "meta.json").is_file())
    else:  # a reference pack: its top-k lists
        evaluation = Path(reference) / "metrics" / testset / "evaluation.csv"
        try:
            study = list(dict.fromkeys(pd.read_csv(evaluation, usecols=["System"])["System"].astype(str)))
        except (OSError, ValueError, pd.errors.ParserError) as exc:
            raise InputError(evaluation, None, f"cannot read the study's systems on {testset}: {exc}") from None
    found = read_lists(reference, testset, study)
    unknown = [s for s in against if s not in study]
    if unknown or not against:
        raise InputError(None, None, f"--against {','.join(against)}: name study systems of {testset} "
                                     f"({', '.join(study)})")
    if found is None or found[0] < k:
        raise InputError(reference, None, f"no top-{k} lists of the study's systems on {testset}")
    d = load_dump(folder)
    kg = KnowledgeGraph.load(kg_path)
    qids = np.asarray(d.questions.qid).astype(str)
    lists = found[1]
    if any(not np.isin(qids, f.index).all() for f in lists.values()):
        raise InputError(folder, None, f"the dump's questions are not those of the pack's {testset} lists")
    entity = np.stack([lists[s].loc[qids].to_numpy(np.int64)[:, :k] for s in study])
    u = outside_universe(name, d.run_entity[:, :k], entity, study, d.judged, d.questions, kg, k, max_depth)
    table = pd.DataFrame({"Metric": metric, "A": name, "B": against})
    return universe_comparisons(u, kg, read_plan_items(plan_items), plan_items, table, plan_items, items, prior,
                                rbp_p)
