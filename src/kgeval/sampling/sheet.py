"""A sampling plan on disk: ``sampling_plan.tsv`` (the annotation sheet in ``annotate-export``'s format, its
triples numbered in judging order) and its sidecar ``sampling_plan.csv`` (one row per sampled (question, entity):
its sheet ``item``, ``order``, π, p and audit flag), and back: the sidecar's rows as candidate items of a universe.
The plan of the study's pairs (:mod:`.steps`) and the plan of an outside system (:mod:`.outside`) share both."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..data.kg import HEAD, KnowledgeGraph
from ..errors import InputError
from ..io import write_csv
from ..judgments.candidates import system_pairs
from ..judgments.items import METRIC_NAMES
from ..judgments.universe import Universe
from ..pools.annotation.formats import EXPORT_HEADER, _write_sheet
from ..pools.annotation.templates import question
from . import design as dz
from .checksum import CHECK, row_checks
from .plan import Plan
from .waves import WAVE_COLUMNS, union_pi, wave_design


def _sheet_items(triples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct triple's first row and every row's sheet number: a triple answers a head and a tail
    question, so it is judged once, on the sheet once (numbered by its first place in the judging order)."""
    _, first, inverse = np.unique(triples, axis=0, return_index=True, return_inverse=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(1, first.size + 1)
    return first, rank[inverse.ravel()]


def write_plan_sheet(u: Universe, kg: KnowledgeGraph, plan: Plan, templates: dict, batch: str, out_sheet,
                     out_items, *, prior: str, fit: str) -> pd.DataFrame:
    """Write the sheet and the sidecar of ``plan``, drawn with ``u``'s pooled prior of kind ``prior`` (its
    :meth:`Universe.prior_fit` ``fit``); returns the sidecar's frame."""
    triples = u.triples[plan.items]
    first, sheet_item = _sheet_items(triples)
    rows = [[batch, str(i), kg.entities[h], kg.relations[r], kg.entities[t], kg.display_name(h),
             kg.display_name(t), question(kg, (h, r, t), templates), "", "", ""]
            for i, (h, r, t) in enumerate(triples[np.sort(first)].tolist(), start=1)]
    _write_sheet(out_sheet, EXPORT_HEADER, rows)
    side = plan_sidecar(u, kg, plan, prior, fit, triples, sheet_item)
    write_csv(side, out_items)
    return side


def plan_sidecar(u: Universe, kg: KnowledgeGraph, plan: Plan, prior: str, fit: str, triples: np.ndarray | None = None,
                 sheet_item: np.ndarray | None = None) -> pd.DataFrame:
    """The sidecar's frame: one row per drawn (question, entity) in judging order; ``prior`` and ``prior_fit``
    record the prior that gave p (its kind and ``fit``, :meth:`Universe.prior_fit`), so that an estimate uses
    that one."""
    if triples is None:
        triples = u.triples[plan.items]
        sheet_item = _sheet_items(triples)[1]
    side = pd.DataFrame({"item": sheet_item, "order": np.arange(1, plan.items.size + 1),
                         "head_id": [kg.entities[h] for h in triples[:, 0]],
                         "relation": [kg.relations[r] for r in triples[:, 1]],
                         "tail_id": [kg.entities[t] for t in triples[:, 2]],
                         "asks": np.where(u.questions.side[u.items.q[plan.items]] == HEAD, "head", "tail"),
                         "pi": plan.pi, "p": plan.p, "audit": plan.audit})
    if plan.lists is not None:  # a question plan: which compared lists rank the item, for judging in rank order
        side["lists"] = plan.lists
    side["prior"], side["prior_fit"] = prior, fit
    for name, value in (plan.design or {}).items():  # what recomputes π (:func:`check_design`)
        side[name] = value
    if plan.wave is not None:  # an extended plan: each item's wave (π is the union's, :mod:`.waves`)
        side["wave"] = plan.wave
    side[CHECK] = row_checks(side)  # estimating checks it: π, p, the lists and the prior stay the plan's
    return side


def read_plan_pairs(plan_pairs) -> pd.DataFrame:
    """The plan's ``sampling_budgets.csv``: one metric and its pairs A, B (the metric a name of the bounds'
    resolver)."""
    try:
        table = pd.read_csv(plan_pairs, dtype={"Metric": str, "A": str, "B": str})
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(plan_pairs, None, f"cannot read the plan's pairs: {exc}") from None
    if not {"Metric", "A", "B"} <= set(table.columns) or table.empty or table["Metric"].nunique() != 1:
        raise InputError(plan_pairs, None, "expected the plan's sampling_budgets.csv: one metric, its pairs A, B")
    short = table["Metric"].iloc[0]
    if short not in METRIC_NAMES:
        raise InputError(plan_pairs, 2, f"metric {short!r}: expected one of {', '.join(METRIC_NAMES)}")
    return table


def pair_columns(systems: list[str], table: pd.DataFrame, plan_pairs) -> np.ndarray:
    """The column (in :func:`.weights.pairs` order) of every pair of the plan's table; a pair of other systems is
    refused with its line."""
    a, b = system_pairs(len(systems))
    index = {(systems[i], systems[j]): c for c, (i, j) in enumerate(zip(a, b))}
    cols = []
    for line, pair in enumerate(zip(table["A"], table["B"]), start=2):
        if pair not in index:
            raise InputError(plan_pairs, line, f"pair {pair[0]} – {pair[1]} is not a pair of the study's systems "
                                               f"({', '.join(systems)})")
        cols.append(index[pair])
    return np.array(cols, np.int64)


def unknown_units(u: Universe, kg: KnowledgeGraph) -> dict[tuple[str, str, str, str], int]:
    """Every unknown of ``u``'s lists by (head id, relation, tail id, asked side): its candidate index."""
    unknown = np.flatnonzero(u.cand.state == -1)
    trip = u.triples[unknown]
    asks = np.where(u.questions.side[u.items.q[unknown]] == HEAD, "head", "tail")
    return {(kg.entities[h], kg.relations[r], kg.entities[t], s): e
            for (h, r, t), s, e in zip(trip.tolist(), asks, unknown.tolist())}


def locate_items(plan: pd.DataFrame, plan_path, u: Universe, kg: KnowledgeGraph, p: np.ndarray | None,
                 where: dict | None = None) -> np.ndarray:
    """The candidate index of every sidecar row (read by :func:`.estimates.read_plan_items`), each checked to be
    an unknown of ``u``'s lists and, unless ``p`` is None, drawn with the prior ``p``: a plan made from other
    lists or another prior is refused, never estimated with a bias. ``where``: :func:`unknown_units`, if known."""
    where = unknown_units(u, kg) if where is None else where
    items = np.empty(len(plan), np.int64)
    for i, key in enumerate(zip(plan["head_id"], plan["relation"], plan["tail_id"], plan["asks"])):
        if key not in where:
            raise InputError(plan_path, int(plan["line"].iloc[i]), f"item {' '.join(key[:3])} ({key[3]} "
                             "question) is not an unknown of the compared top-k lists: the plan was made from "
                             "other runs")
        items[i] = where[key]
    if p is None:
        return items
    off = np.abs(p[items] - plan["p"].to_numpy()) > 1e-6 * np.maximum(1, p[items])
    if off.any():
        i = int(np.argmax(off))
        raise InputError(plan_path, int(plan["line"].iloc[i]), f"p {plan['p'].iloc[i]:.6g} differs from the prior "
                         f"refitted on the same inputs ({p[items[i]]:.6g}): the plan was made with another prior "
                         "or other runs")
    return items


def plan_prior(plan: pd.DataFrame, plan_path, u: Universe, requested: str | None = None) -> str:
    """The prior kind to estimate ``plan`` (a sidecar read by :func:`.estimates.read_plan_items`) with: the one its
    ``prior`` column records, checked against ``requested`` (None: the plan's) and its ``prior_fit`` against
    ``u``'s (the same labelled items); ``requested`` for a sidecar of an older kgeval, which records none."""
    if "prior" not in plan.columns:
        if requested is None:
            raise InputError(plan_path, 1, "no prior column: the plan (made by an older kgeval) does not record "
                                           "its prior; give the prior it was drawn with, or re-run the plan")
        return requested
    kind, fit = str(plan["prior"].iloc[0]), str(plan["prior_fit"].iloc[0]) if "prior_fit" in plan.columns else ""
    if requested is not None and requested != kind:
        raise InputError(plan_path, 2, f"the plan was drawn with the {kind} prior, this estimate asks for "
                                       f"{requested}: estimate with the plan's prior (or re-run the plan)")
    own = u.prior_fit(kind)
    if fit and fit != own:
        raise InputError(plan_path, 2, f"prior_fit {fit}: the plan's {kind} prior was fitted on other labelled "
                                       f"items than these inputs give ({own}): the plan was made from other runs "
                                       "or judgments")
    return kind


#: the sidecar's record of the design (:func:`.plan.make_plan`), from which an estimate recomputes every π
DESIGN_COLUMNS = ("design", "floor_share", "budget", "mc_draws", "mc_seed", "judging")
PI_RTOL = 1e-6  # the sidecar writes π with 10 significant digits: a recomputed π agrees far closer than this


def _design_inputs(plan: pd.DataFrame, plan_path) -> dict:
    missing = [c for c in DESIGN_COLUMNS if c not in plan.columns]
    if missing:
        raise InputError(plan_path, 1, f"no column {', '.join(missing)}: a sidecar written before plans recorded "
                                       "their design (which recomputes each π), or edited; re-run the plan")
    out = {}
    for col, kind in zip(DESIGN_COLUMNS, (str, float, float, int, int, str)):
        values = plan[col].astype(str)
        other = values != values.iloc[0]
        if other.any():
            i = int(np.argmax(other.to_numpy()))
            raise InputError(plan_path, int(plan["line"].iloc[i]), f"{col} {values.iloc[i]!r} differs from the "
                                                                   f"first row's {values.iloc[0]!r}: one plan has "
                                                                   "one design")
        try:
            out[col] = kind(values.iloc[0]) if kind is not int else int(float(values.iloc[0]))
        except ValueError:
            raise InputError(plan_path, 2, f"{col} {values.iloc[0]!r} is not a {kind.__name__}") from None
    if not np.isfinite(out["budget"]) or out["budget"] <= 0 or out["mc_draws"] < 0:
        raise InputError(plan_path, 2, f"budget {out['budget']:g} / mc_draws {out['mc_draws']}: expected a positive "
                                       "budget and a count of draws")
    from . import design as dz
    from .problem import LEGACY_LABEL_CORRELATION

    out["p_clip"] = _optional_setting(plan, plan_path, "p_clip", dz.LEGACY_P_CLIP, 0.5, "clip")
    out["mc_rho"] = _optional_setting(plan, plan_path, "mc_rho", LEGACY_LABEL_CORRELATION, 1.0, "correlation")
    return out


def _optional_setting(plan: pd.DataFrame, plan_path, col: str, legacy: float, upper: float, what: str) -> float:
    """A setting sidecars record since some version (``p_clip``, the allocation's clip on p; ``mc_rho``, the
    Monte Carlo's correlation within a question): its one value in [0, ``upper``), or ``legacy``, what a plan
    written before sidecars recorded it used."""
    if col not in plan.columns:
        return legacy
    values = pd.to_numeric(plan[col], errors="coerce").to_numpy(float)
    bad = ~np.isfinite(values) | (values < 0) | (values >= upper) | (values != values[0])
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(plan_path, int(plan["line"].iloc[i]), f"{col} {plan[col].astype(str).iloc[i]}: expected the "
                                                               f"plan's one {what} in [0, {upper:g})")
    return float(values[0])


def plan_pi(plan: pd.DataFrame, plan_path, u: Universe, p: np.ndarray, metric: str, cols: np.ndarray,
            rbp_p: float = 0.8):
    """The plan's problem, its per-unit variances, the prior's expected per-question differences (None for
    an item metric) and π over every unit, recomputed from the design the sidecar records (``design``,
    ``floor_share``, ``budget``, ``p_clip`` and, for a question metric, the Monte Carlo's ``mc_draws``,
    ``mc_seed``, ``mc_rho`` and ``judging``; an extended plan: the union of the waves in ``sampling_waves.csv``) on the prior
    ``p`` refitted from the same inputs and the plan's pairs ``cols``. What an estimate checks π against
    (:func:`check_design`) and what ``sample-plan --extend`` builds the next wave on."""
    from . import design as dz
    from .problem import Problem

    d = _design_inputs(plan, plan_path)
    try:
        pb = Problem(u.cand, np.zeros(u.cand.state.size), metric, rbp_p, d["mc_draws"], d["mc_seed"], d["judging"],
                     d["p_clip"], d["mc_rho"])
        v, mu = pb.variances(p)
        if d["design"] == "waves":  # an extended plan: the union of its waves' designs (:mod:`.waves`)
            where = Path(plan_path).parent / WAVES_FILE
            if not where.is_file():
                raise InputError(plan_path, 2, f"an extended plan (design 'waves') without its {WAVES_FILE} beside "
                                               "it: keep the folder sample-plan --extend wrote whole")
            waves = read_waves(where, None, 0)
            pi = union_pi(*(wave_design(pb, v, p, wave_columns(u.systems, w.pairs, where), w.budget, w.design,
                                        w.floor_share).pi for w in waves.itertuples(index=False)))
        else:
            pi = dz.design(v[:, cols], pb.eligible(cols), d["budget"], d["design"], pb.cost_of(cols, p),
                           d["floor_share"]).pi
    except InputError as exc:
        if exc.path is not None and str(exc.path) != str(plan_path):
            raise
        raise InputError(plan_path, 2, exc.problem) from None
    return pb, v, mu, pi


def check_design(plan: pd.DataFrame, plan_path, u: Universe, p: np.ndarray, metric: str, cols: np.ndarray,
                 items: np.ndarray, rbp_p: float = 0.8):
    """Every row's π against :func:`plan_pi`'s, which it returns. The checksum catches an edit; this catches a π
    edited with its checksum recomputed (1e-300 moves Δ̂ by d/π, to 1e+295), and any π no design of these inputs
    gives. ``items``: each row's candidate (:func:`locate_items`)."""
    d = _design_inputs(plan, plan_path)
    pb, v, mu, pi = plan_pi(plan, plan_path, u, p, metric, cols, rbp_p)
    want = pi[np.searchsorted(pb.U, items)] if pb.linear else pi[u.cand.item_q[items]]
    got = plan["pi"].to_numpy(float)
    off = ~np.isclose(got, want, rtol=PI_RTOL, atol=0.0)
    if off.any():
        i = int(np.argmax(off))
        raise InputError(plan_path, int(plan["line"].iloc[i]),
                         f"pi {got[i]:.6g} is not the plan's: its {d['design']} design (budget {d['budget']:g}, "
                         f"floor share {d['floor_share']:g}) gives {want[i]:.6g} on the prior refitted from the "
                         "same inputs; π was changed after the plan was drawn (and its checksum recomputed): "
                         "re-run the plan rather than edit its sidecar")
    return pb, v, mu, pi


WAVES_FILE = "sampling_waves.csv"


def read_waves(path: Path, table: pd.DataFrame, seed: int, floor_share: float = 0.1, design: str = "optimal",
               budget: float | None = None) -> pd.DataFrame:
    """The plan's waves (``sampling_waves.csv``), or its first and only wave from its per-pair table (a plan
    `sample-plan` drew: its ``design`` at ``budget`` (default the table's ``plan_budget``) for the table's pairs,
    drawn with ``seed``)."""
    if not path.is_file():
        pairs = ";".join(f"{a},{b}" for a, b in zip(table["A"], table["B"]))
        budget = float(table["plan_budget"].iloc[0]) if budget is None else budget
        return pd.DataFrame([{"wave": 1, "pairs": pairs, "budget": budget,
                              "design": design, "floor_share": floor_share, "seed": seed, "new_units": np.nan,
                              "new_judgments": np.nan}])
    try:
        waves = pd.read_csv(path, dtype={"pairs": str, "design": str})
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(path, None, f"cannot read the plan's waves: {exc}") from None
    missing = [c for c in WAVE_COLUMNS if c not in waves.columns]
    if missing or waves.empty:
        raise InputError(path, 1, f"no column {', '.join(missing) or 'row'} (expected {', '.join(WAVE_COLUMNS)})")
    for line, row in enumerate(waves.itertuples(index=False), start=2):
        if not (np.isfinite(row.budget) and row.budget >= 0 and 0 <= row.floor_share <= 1
                and row.design in dz.DESIGNS and row.wave == line - 1):
            raise InputError(path, line, "expected wave 1, 2, … in order, a budget ≥ 0, a design of "
                                         f"{dz.DESIGNS} and a floor_share in [0, 1]")
    return waves


def wave_columns(systems: list[str], pairs: str, path) -> np.ndarray:
    a, b = zip(*(p.split(",") for p in pairs.split(";"))) if pairs else ((), ())
    return pair_columns(systems, pd.DataFrame({"A": list(a), "B": list(b)}), path)
