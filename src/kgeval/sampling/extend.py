"""``kgeval sample-plan --extend``: the next wave of a judged plan (:mod:`.waves` says why the estimates stay
valid), written as a whole plan in a new folder: the earlier waves' rows first, unchanged but for their union π
(so their sheet numbers stay and a campaign keeps its judgments), then the new wave's, and ``sampling_waves.csv``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..errors import InputError
from ..io import write_csv
from ..judgments.items import METRIC_NAMES
from ..judgments.prior import TRANSFER_CAVEAT
from ..judgments.universe import Universe
from ..pools.annotation import load_templates
from . import design as dz
from .estimates import judged_estimates, plan_labels, read_plan_items
from .more import more_judgments
from .plan import Plan, budget_needed, drawn_items, expected_delta, list_ranks
from .sheet import (
    WAVES_FILE,
    check_design,
    locate_items,
    pair_columns,
    plan_prior,
    read_plan_pairs,
    read_waves,
    write_plan_sheet,
)
from .waves import WAVE_COLUMNS, budget_for_new, draw_wave, union_pi, wave_design

log = logging.getLogger(__name__)

def extend_plan(u: Universe, kg: KnowledgeGraph, plan_dir: str | Path, labels: str | Path, out_dir: str | Path,
                templates: str | Path, cols_asked: np.ndarray | None = None, budget: float | None = None,
                seed: int = 0, level: float = 0.95, max_budget: int = 10_000, rbp_p: float = 0.8,
                testset: str = "") -> dict:
    """The next wave of the plan in ``plan_dir`` (its sidecar, per-pair table and waves, judged by ``labels``:
    every drawn item) for the pairs ``cols_asked`` (default: the plan's), written to ``out_dir`` as a whole plan.
    Its size: ``budget`` further judgments, or by default the most any asked undecided pair needs at the estimate
    in hand (:func:`.more.more_judgments`). Returns the wave's number, its nominal budget, the new items and
    judgments expected, and the estimate in hand (a frame per asked pair)."""
    from ..pools.annotation.qrels import _read_qrels_rows

    plan_dir, out = Path(plan_dir), Path(out_dir)
    side_path, pairs_path = plan_dir / "sampling_plan.csv", plan_dir / "sampling_budgets.csv"
    plan = read_plan_items(str(side_path))
    table = read_plan_pairs(pairs_path)
    short = table["Metric"].iloc[0]
    metric = METRIC_NAMES[short]
    x = plan_labels(plan, str(side_path), _read_qrels_rows(labels), str(labels), metric not in
                    ("P@k", "DCG@k", "RBP"))
    kind = plan_prior(plan, side_path, u, None)
    p, fit = u.prior(kind)
    items = locate_items(plan, side_path, u, kg, p)
    cols_plan = pair_columns(u.systems, table, pairs_path)
    # the earlier waves' π over every unit, recomputed from the design the sidecar and its waves record, as an
    # estimate does, and checked on the units they drew
    pb, v, mu, before = check_design(plan, side_path, u, p, metric, cols_plan, items, rbp_p)
    # a plan sample-plan drew has no waves file: its one wave is the design its sidecar records
    waves = read_waves(plan_dir / WAVES_FILE, table, seed, float(plan["floor_share"].iloc[0]),
                       str(plan["design"].iloc[0]), float(plan["budget"].iloc[0]))
    unit = np.searchsorted(pb.U, items) if pb.linear else u.cand.item_q[items]
    drawn = np.zeros(before.size, bool)
    drawn[unit] = True
    cols_asked = cols_plan if cols_asked is None else np.asarray(cols_asked)
    est = judged_estimates(u.cand, p, metric, cols_asked, u.systems, items, plan["pi"].to_numpy(), x,
                           plan["item"].to_numpy(int), rbp_p, level)
    est["more_judgments"] = more_judgments(u.cand, p, metric, cols_asked, items, x, est["delta"].to_numpy(),
                                           est["decided"].to_numpy(), rbp_p, level, max_budget=max_budget)
    if budget is None:
        open_ = ~est["decided"].to_numpy()
        if not open_.any():
            raise InputError(labels, None, f"every asked pair ({len(est)}) is decided by these labels: no wave to "
                                           "draw (ask other pairs with --pair/--against, or give --budget)")
        more = est["more_judgments"].to_numpy()[open_]
        if not np.isfinite(more).any():
            raise InputError(labels, None, f"no budget within {max_budget:,} judgments decides an asked undecided "
                                           "pair at the estimate in hand: give --budget to draw a wave anyway")
        budget = float(np.nanmax(more))
    nominal = budget_for_new(pb, v, p, cols_asked, drawn, budget)
    w = len(waves) + 1
    dsg = wave_design(pb, v, p, cols_asked, nominal)
    wave = draw_wave(dsg, drawn, np.random.default_rng([seed, w]))
    pi = union_pi(before, dsg.pi)
    # the plan's pairs, then the newly asked ones (a question plan's new questions bring every compared list)
    cols_all = np.array(cols_plan.tolist() + [c for c in cols_asked.tolist() if c not in set(cols_plan.tolist())],
                        np.int64)
    new_items, new_pi, new_flag, order, used = drawn_items(pb, cols_all, wave.new, pi, wave.audit,
                                                           np.random.default_rng([seed, w, 1]))
    new_items = new_items[order]
    all_items = np.concatenate([items, new_items])
    # the per-pair table: the plan's pairs and the newly asked ones, with the half-width the union design expects
    cost = pb.cost_of(cols_all, p)
    e_delta = expected_delta(pb, p, mu)
    rows = table.drop(columns=[c for c in ("testset", "caveat") if c in table.columns]).copy()
    fresh = [c for c in cols_all if c not in set(cols_plan.tolist())]
    if fresh:
        rows = pd.concat([rows, pd.DataFrame({
            "Metric": short, "A": np.asarray(u.systems)[pb.a[fresh]], "B": np.asarray(u.systems)[pb.b[fresh]],
            "expected_delta": e_delta[fresh],
            "budget_needed": [budget_needed(v[:, [j]], pb.eligible([j]), pb.cost_of([j], p), abs(e_delta[j]),
                                            level, 0.1, max_budget) for j in fresh]})], ignore_index=True)
    rows["plan_budget"] = float((pi * cost)[pb.eligible(cols_all)].sum())
    rows["expected_half_width"] = dz.expected_half_width(pi, v[:, cols_all], level)
    lists = None if pb.linear else list_ranks(pb, u.systems, used, all_items)
    old_wave = plan["wave"].to_numpy(int) if "wave" in plan.columns else np.ones(len(plan), int)
    # what recomputes π at an estimate (sheet.check_design): the waves in sampling_waves.csv beside the sidecar
    design = {"design": "waves", "floor_share": 0.1, "budget": float(rows["plan_budget"].iloc[0]), **pb.settings()}
    combined = Plan(all_items, np.concatenate([pi[unit], new_pi[order]]), p[all_items],
                    np.concatenate([plan["audit"].to_numpy(bool), new_flag[order]]), rows["plan_budget"].iloc[0],
                    rows, lists, design=design, wave=np.concatenate([old_wave, np.full(new_items.size, w)]))
    out.mkdir(parents=True, exist_ok=True)
    write_plan_sheet(u, kg, combined, load_templates(str(templates)), f"sample-{testset or 'pool'}",
                     str(out / "sampling_plan.tsv"), str(out / "sampling_plan.csv"), prior=kind, fit=fit)
    write_csv(rows.assign(testset=testset, caveat=TRANSFER_CAVEAT), str(out / "sampling_budgets.csv"))
    pairs = ";".join(f"{u.systems[pb.a[c]]},{u.systems[pb.b[c]]}" for c in cols_asked)
    new_units = int(wave.new.sum())
    record = {"wave": w, "pairs": pairs, "budget": nominal, "design": "optimal", "floor_share": 0.1, "seed": seed,
              "new_units": new_units, "new_judgments": float((dsg.pi * pb.cost_of(cols_asked, p))[~drawn].sum())}
    write_csv(pd.concat([waves, pd.DataFrame([record])], ignore_index=True)[list(WAVE_COLUMNS)],
              str(out / WAVES_FILE))
    log.info("%s: wave %d draws %d new units (%d items; about %.0f new judgments expected) for %d pairs", out, w,
             new_units, new_items.size, record["new_judgments"], cols_asked.size)
    return {"wave": w, "budget": nominal, "new_units": new_units, "new_items": int(new_items.size),
            "expected_new_judgments": record["new_judgments"], "estimate": est}
