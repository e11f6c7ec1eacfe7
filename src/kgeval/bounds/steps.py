"""Steps of the bounds stage: what the existing judgments decide about every system comparison on a pooled test
set, at every pooling depth, with the published and with the rebuilt judgments.

Per (flavour, depth) state: the questions are those of the macro filter (at least one relevant entity at that
depth, as ``pooling_depth.csv`` counts them); the unknowns are the unjudged (question, entity) pairs in any
system's top k (pooled-but-unjudged ones included); every judged pair keeps its label. Outputs: per-system
bounds, per-pair decisions and the τ interval against depth 0 (the seed set evaluated as the paper does).

Micro (per answer) metrics are not bounded: an unjudged entity that is relevant adds an answer (a new term of
the mean) and moves every other answer's filtered rank, so no per-label monotone form exists. Their condensed
values and ``unjudged_10`` stay in ``pooling_depth.csv`` as before.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..data.testsets import TestSet
from ..errors import ConfigError
from ..io import write_csv
from ..judgments.items import METRIC_NAMES, out_of_fold_prior
from ..judgments.labels import state
from ..judgments.lists import load_runs
from ..judgments.metrics import bounded_metric
from ..judgments.prior import TRANSFER_CAVEAT, cross_validate, fit_prior, online_prior
from ..judgments.prior_models import expected_calibration_error
from ..judgments.universe import from_dumps
from ..metrics.evaluate import qrels_at_depth
from ..pools.annotation import load_templates
from ..pools.pooling import Pool, prefilter
from ..pools.qrels import labels_of, qrels_for_dump, rebuilt_judgments
from .counts import judgments_to_decide, tau_distribution
from .decide import pair_table, write_next_judgments
from .figure import simulation_figure, tau_band_figure
from .greedy import make_engine, plan
from .simulation import MTC, DepthOrder, MoveToFront, RandomOrder, compare_strategies
from .tables import states_tables

log = logging.getLogger(__name__)


def bounds_step(dumps: dict[str, str], kg_path: str, seed_testset: str, pool: str,
                annotations: str, out_systems: str, out_pairs: str, out_tau: str, out_figure: str,
                out_figure_pdf: str, k: int = 10, rbp_p: float = 0.8,
                metrics: tuple[str, ...] = ("P", "Success", "RR", "DCG", "RBP"),
                milp_metrics: tuple[str, ...] = ("P",), milp_time_limit: float = 10.0,
                milp_node_limit: int | None = 100, max_depth: int = 10,
                use_prefilter: bool = False, testset: str = "", milp_depths: list[int] | None = None) -> None:
    if milp_depths is not None and max(milp_depths) > max_depth:
        raise ConfigError(f"config bounds.milp_depths: depth {max(milp_depths)} is deeper than the pool's "
                          f"deepest depth {max_depth}")
    kg = KnowledgeGraph.load(kg_path)
    systems, first, entity = load_runs(dumps, k)
    E = first.questions.num_entities
    seed = TestSet.load(seed_testset, kg)
    p = Pool.load(pool, kg)
    removed = prefilter(p, kg)[0] if use_prefilter else None
    reb = rebuilt_judgments(seed, p, labels_of(annotations, kg), kg, removed)

    def states():  # depth 0 first: it is each flavour's reference ranking; published = the dumps' judged rows
        for d in range(max_depth + 1):
            yield ("published", d, *state(entity, qrels_at_depth(first, d), E))
        for d in range(max_depth + 1):
            yield ("rebuilt", d, *state(entity, qrels_for_dump(first, reb, d), E))

    ms = [bounded_metric(b, k, rbp_p) for b in metrics]
    sys_t, pair_t, tau_t = states_tables(systems, entity, states(), ms, set(milp_metrics), milp_time_limit,
                                           milp_node_limit, None if milp_depths is None else set(milp_depths))
    write_csv(sys_t, out_systems)
    write_csv(pair_t, out_pairs)
    write_csv(tau_t, out_tau)
    tau_band_figure(tau_t, out_figure, out_figure_pdf,
                    f"{testset or 'pooled test set'}: τ(depth 0, depth d), today (line) and under every labelling of "
                    "the unjudged triples (band)")
    deepest = pair_t[pair_t["Depth"] == max_depth]
    for (flavour, name), g in deepest.groupby(["Flavour", "Metric"], sort=False):
        log.info("%s depth %d %s: %d of %d pairs decided", flavour, max_depth, name, int(g["decided"].sum()), len(g))


def _prior(feats, y, groups, kind: str, folds: int, seed: int):
    """Cross-validation by question (None when the prior is uniform or the labels cannot be split) and the
    prior fitted on all the pool's labels."""
    cv = None
    if kind != "uniform" and np.unique(groups).size >= folds and 0 < y.sum() < y.size:
        cv = cross_validate(feats, y, groups, folds, seed, kind)
    return cv, fit_prior(feats, y, kind)


def selection_step(dumps: dict[str, str], kg_path: str, templates: str, out_prior: str, out_reliability: str,
                   out_pairs: str, out_tau: str, out_next: str, out_next_items: str, out_counts: str, k: int = 10,
                   rbp_p: float = 0.8, metrics: tuple[str, ...] = ("P",), prior: str = "logistic", folds: int = 5,
                   draws: int = 16, tau_draws: int = 1000, count_draws: int = 5, batch: int = 200,
                   stop: str = "hard", seed: int = 0, max_depth: int = 10, testset: str = "") -> None:
    """Issue 30 §1–2 on the published judgments at the deepest depth: the prior's fit, P(A > B) per pair, τ
    against depth 0 under the prior, the next judgments (first metric's plan) and the judgments to decide."""
    kg = KnowledgeGraph.load(kg_path)
    u = from_dumps(dumps, kg, k, max_depth)  # the published items: the sampling stage's universe
    systems, cand, feats = u.systems, u.cand, u.features
    train = np.flatnonzero(u.pooled)  # judged at a depth 1..max_depth
    y = cand.state[train].astype(np.int64)
    cv, model = _prior(feats.take(train), y, cand.item_q[train], prior, folds, seed)
    p = model.predict(feats)
    fit_row = {"testset": testset, "prior": prior, "folds": folds, "judgments": int(train.size),
               "relevant": int(y.sum()), "cv_auc": cv.auc if cv else np.nan,
               "fold_auc_min": float(np.nanmin(cv.fold_auc)) if cv else np.nan,
               "fold_auc_max": float(np.nanmax(cv.fold_auc)) if cv else np.nan,
               "cv_ece": expected_calibration_error(cv.predictions, y) if cv else np.nan,
               "mean_p_unknown": float(p[cand.state == -1].mean()) if (cand.state == -1).any() else np.nan,
               "caveat": TRANSFER_CAVEAT}
    write_csv(pd.DataFrame([fit_row]), out_prior)
    rel = cv.reliability if cv else pd.DataFrame(columns=["bin_lo", "bin_hi", "mean_predicted", "observed_rate",
                                                          "count"])
    write_csv(rel, out_reliability)
    pair_rows, tau_rows, count_rows, first_plan = [], [], [], None
    reference_state = np.where(u.zero == -1, 0, u.zero)
    for name in metrics:
        m = METRIC_NAMES[name]
        eng = make_engine(cand, p, m, rbp_p, draws=draws, seed=seed)
        lo, hi = eng.bounds()
        expected = eng.expectation()[0] if hasattr(eng, "expectation") else np.full(eng.n_pairs, np.nan)
        counts = judgments_to_decide(eng, count_draws, seed, batch, stop)
        pair_rows.append(pair_table(systems, name, lo, hi, expected, eng.prob_a_beats_b()).assign(
            expected_judgments=counts.per_pair_expected, worst_case_judgments_upper=counts.per_pair_worst_upper))
        ref = make_engine(cand.with_state(reference_state), 0.5, m, rbp_p).sample_means(np.zeros((1, 0)))[0]
        td = tau_distribution(eng, ref, tau_draws, seed)
        tau_rows.append((testset, name, max_depth, "depth 0", tau_draws, td.mean, td.lo, td.hi, TRANSFER_CAVEAT))
        und = eng.undecided(stop)
        count_rows.append((testset, name, stop, eng.n_pairs, int(und.sum()), int(eng.unknown.size), count_draws,
                           counts.expected, int(counts.per_draw.max(initial=0)), counts.worst_case_adversary,
                           counts.worst_case_upper))
        if first_plan is None:
            first_plan = plan(eng, stop, seed)
        log.info("%s: %d of %d pairs undecided; %.0f judgments expected to decide them (worst case ≤ %d)", name,
                 int(und.sum()), eng.n_pairs, counts.expected, counts.worst_case_upper)
    write_csv(pd.concat(pair_rows, ignore_index=True), out_pairs)
    write_csv(pd.DataFrame(tau_rows, columns=["testset", "Metric", "Depth", "reference", "draws", "tau_mean",
                                              "tau_lo_95", "tau_hi_95", "caveat"]), out_tau)
    write_csv(pd.DataFrame(count_rows, columns=["testset", "Metric", "stop", "pairs", "undecided", "unknown_items",
                                                "draws", "expected_judgments", "max_judgments_over_draws",
                                                "worst_case_adversary", "worst_case_upper"]), out_counts)
    triples = u.triples[first_plan.items]
    write_next_judgments(kg, load_templates(templates), triples, first_plan, first_plan.bears_on_labels(systems),
                         f"next-{testset or 'pool'}", out_next, out_next_items)
    log.info("%s: %d triples to judge next, prior AUC %.3f", out_next, first_plan.items.size, fit_row["cv_auc"])


def simulation_step(dumps: dict[str, str], kg_path: str, out_table: str, out_summary: str, out_figure: str,
                    out_figure_pdf: str, k: int = 10, rbp_p: float = 0.8, metrics: tuple[str, ...] = ("P",), prior: str = "logistic",
                    folds: int = 5, batch: int = 200, draws: int = 16, random_seeds: int = 5, seed: int = 0,
                    max_depth: int = 10, testset: str = "") -> None:
    """Issue 30 §3: hide the pool's published labels (depth 0 kept), reveal them in each strategy's order and
    record after every batch the pairs decided, τ and the largest |Δ| error; per strategy the judgments needed to
    decide what the full published pool decides."""
    kg = KnowledgeGraph.load(kg_path)
    u = from_dumps(dumps, kg, k, max_depth)
    systems, s_deep, s_zero, hidden, depth, feats = u.systems, u.cand.state, u.zero, u.hidden, u.depth, u.features
    labels = np.where(hidden, s_deep, 0).astype(np.int8)
    # never judged: not relevant, as in the official evaluation
    cand = u.cand.with_state(np.where(hidden, -1, np.where(s_zero == -1, 0, s_zero)))
    p_oof = out_of_fold_prior(feats, labels, hidden, cand.item_q, prior, folds, seed)
    tables, summaries = [], []
    for name in metrics:
        m = METRIC_NAMES[name]
        strategies = {"mtc_uniform": MTC(0.5, m, rbp_p, seed, draws)}
        if prior != "uniform":
            strategies["mtc_prior_oof"] = MTC(p_oof, m, rbp_p, seed, draws)
            strategies["mtc_prior_online"] = MTC(0.5, m, rbp_p, seed, draws, refit=online_prior(feats, prior),
                                                 refit_every=1)
        strategies["depth_order"] = DepthOrder(depth, seed)
        strategies.update({f"random_{seed + i}": RandomOrder(seed + i) for i in range(random_seeds)})
        strategies["move_to_front"] = MoveToFront(seed)
        table, summary = compare_strategies(cand, labels, strategies, m, batch, rbp_p=rbp_p)
        tables.append(table.assign(Metric=name))
        summaries.append(summary.assign(Metric=name, pairs=len(systems) * (len(systems) - 1) // 2))
        for row in summary.itertuples():
            log.info("%s %s: %s judgments of %d to decide the %d pairs the full pool decides", name, row.strategy,
                     row.judgments_needed, row.hidden, row.target_decided)
    table = pd.concat(tables, ignore_index=True)
    table = table[["Metric"] + [c for c in table.columns if c != "Metric"]]
    summary = pd.concat(summaries, ignore_index=True)
    summary = summary[["Metric"] + [c for c in summary.columns if c != "Metric"]]
    write_csv(table, out_table)
    write_csv(summary, out_summary)
    simulation_figure(table, out_figure, out_figure_pdf, f"{testset or 'pooled test set'}: pairs decided\n"
                                                         f"(batches of {batch})")
