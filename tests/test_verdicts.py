"""Verdicts decided on intervals (kgeval.analysis.verdicts), the τ interval they use
(kgeval.analysis.resampling.order_interval) and the findings' claims decided on them."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from kgeval.analysis import findings as F
from kgeval.analysis.resampling import bootstrap_tau, order_interval, pair_signs
from kgeval.analysis.study import reweighted_weights
from kgeval.analysis.verdicts import Check, difference, interval_verdict, undecided_text
from kgeval.metrics.evaluate import answer_weights
from kgeval.metrics.kendall import tau_b, tau_jackknife

NAMES = {"original": "O", "sample": "S", "complete": "SC", "second": "W"}
SYSTEMS = ["a", "b", "c", "d", "e"]


def row(outputs, prefix):
    claim = next(c for c in F.CLAIMS if c.claim.startswith(prefix + ". "))
    return F.findings(outputs, [claim]).iloc[0]


# ---- checks and verdicts ------------------------------------------------------------------------------------
def test_a_check_is_decided_only_when_its_interval_lies_on_one_side():
    assert Check("τ", 0.7, 0.65, 0.80, ">=", 0.6).state() is True
    assert Check("τ", 0.7, 0.50, 0.80, ">=", 0.6).state() is None
    assert Check("τ", 0.3, 0.10, 0.50, ">=", 0.6).state() is False
    assert Check("τ", 0.3, 0.10, 0.60, ">=", 0.6).state() is None  # touching the threshold: open
    assert Check("τ", 0.3, 0.10, 0.60, "<", 0.6).state() is None
    assert Check("τ", 0.3, 0.10, 0.59, "<", 0.6).state() is True
    # no interval: the point decides
    assert Check("τ", 0.3, np.nan, np.nan, "<", 0.6).state() is True
    with pytest.raises(ValueError, match="unknown comparison"):
        Check("τ", 0.3, 0.1, 0.5, "=", 0.6)


def test_an_open_check_makes_a_claim_undecided_only_when_it_can_change_the_verdict():
    def rule(b):
        return ("yes" if b[1] else "partly") if b[0] else "no"  # claim 3's shape

    fails = Check("fall", 0.1, 0.05, 0.2, "<", 0.0)  # decided False
    open_ = Check("deepest", 0.1, -0.2, 0.3, "<=", 0.0)
    assert interval_verdict([fails, open_], rule) == ("no", [])  # the open check cannot matter
    passes = Check("fall", -0.1, -0.2, -0.05, "<", 0.0)
    verdict, opened = interval_verdict([passes, open_], rule)
    assert verdict == "undecided" and opened == [open_]
    assert undecided_text(opened) == "undecided (deepest: interval [-0.2000, 0.3000], threshold 0)"


def test_the_difference_interval_spans_both_intervals():
    c = difference("macro − micro", (0.5, 0.4, 0.6), (0.3, 0.25, 0.45), ">")
    assert (c.point, c.lo, c.hi) == pytest.approx((0.2, -0.05, 0.35))
    assert c.state() is None


# ---- the findings on intervals ------------------------------------------------------------------------------
def ev(mrr):
    return pd.DataFrame({"System": SYSTEMS, "micro_mrr": mrr, "micro_mr": [1.0] * 5})


def taus(rows):
    return pd.DataFrame(rows, columns=["Statistic", "Metric", "tau", "tau_low", "tau_high"])


def test_claim1_yes_above_the_threshold_and_undecided_across_it():
    evals = {"O": ev([.5, .4, .3, .2, .1]), "S": ev([.8, .9, .7, .6, .5])}  # τ 0.8
    above = F.Outputs(NAMES, evals, claim_taus=taus([("original-sample", "micro_mrr", 0.8, 0.65, 0.95)]))
    r = row(above, "1")
    assert (r["holds"], r["point"], r["undecided"]) == ("yes", "yes", "")
    assert r["interval"] == "τ(O, S) [0.6500, 0.9500] ≥ 0.6; τ(O, S) [0.6500, 0.9500] ≥ 0.3"
    assert r["threshold"] == "τ(O, S) ≥ 0.6; τ(O, S) ≥ 0.3"
    across = F.Outputs(NAMES, evals, claim_taus=taus([("original-sample", "micro_mrr", 0.8, 0.45, 0.95)]))
    r = row(across, "1")
    assert (r["holds"], r["point"]) == ("undecided", "yes")
    assert r["undecided"] == "undecided (τ(O, S): interval [0.4500, 0.9500], threshold 0.6)"
    both = F.Outputs(NAMES, evals, claim_taus=taus([("original-sample", "micro_mrr", 0.8, 0.2, 0.95)]))
    assert row(both, "1")["undecided"].count("undecided (") == 2


def depth_table(values, depths=(1, 2, 4)):
    return pd.DataFrame([{"Flavour": "published", "Depth": d, "Metric": m, "tau": v}
                         for m, vs in values.items() for d, v in zip(depths, vs)])


def test_claims3_and_4_read_the_depth_intervals():
    f4 = depth_table({"micro_mrr": [0.6, 0.36, -0.23]})
    ct = taus([("depth 2", "micro_mrr", 0.36, 0.2, 0.5), ("depth 4", "micro_mrr", -0.23, -0.4, -0.1)])
    r = row(F.Outputs(NAMES, figure4=f4, claim_taus=ct), "3")
    assert r["holds"] == "yes"  # falls: [-0.4 − 0.5, -0.1 − 0.2] < 0; deepest ≤ 0
    ct.loc[1, "tau_high"] = 0.1
    r = row(F.Outputs(NAMES, figure4=f4, claim_taus=ct), "3")
    assert (r["holds"], r["point"]) == ("undecided", "yes")
    assert r["undecided"] == "undecided (τ(deepest): interval [-0.4000, 0.1000], threshold 0)"
    f5 = depth_table({"micro_mrr": [0.5, 0.1], "macro_mrr": [0.6, 0.6], "micro_hits@10": [0.5, 0.5],
                      "macro_hits@10": [0.5, 0.3]}, depths=(1, 2))
    ct = taus([("depth 2", "micro_mrr", 0.1, 0.0, 0.2), ("depth 2", "macro_mrr", 0.6, 0.5, 0.7),
               ("depth 2", "micro_hits@10", 0.5, 0.4, 0.6), ("depth 2", "macro_hits@10", 0.3, 0.2, 0.45)])
    r = row(F.Outputs(NAMES, figure5=f5, claim_taus=ct), "4")
    # MRR: [0.5 − 0.2, 0.7 − 0.0] > 0 holds; Hits@10: [0.2 − 0.6, 0.45 − 0.4] open → partly or yes
    assert (r["holds"], r["point"]) == ("undecided", "partly")
    assert r["undecided"] == "undecided (macro − micro Hits@10 τ: interval [-0.4000, 0.0500], threshold 0)"


def test_claim5_on_table4_intervals():
    t4 = pd.DataFrame({"Distribution": ["Complete", "Sparse"], **{m: [0.9, 0.2] for m in F.SHORT}})
    low = taus([("table4 Sparse", m, 0.2, 0.1, 0.35) for m in F.SHORT])
    assert row(F.Outputs(NAMES, table4=t4, claim_taus=low), "5")["holds"] == "yes"
    straddle = low.copy()
    straddle.loc[straddle["Metric"] == "micro_hits@10", "tau_high"] = 0.45
    r = row(F.Outputs(NAMES, table4=t4, claim_taus=straddle), "5")
    assert (r["holds"], r["point"]) == ("undecided", "yes")
    assert r["undecided"] == "undecided (H@10 τ: interval [0.1000, 0.4500], threshold 0.4)"


# ---- the interval of the population-means τ ------------------------------------------------------------------
def test_pair_signs_by_hand():
    # systems 0 and 1 differ by 1 on every item (se 0): decided; 0 and 2 differ by ±1 alternately (mean 0):
    # open; 1 − 2 is 0 or −2 (mean −1, se √4 / 4 = 0.5): decided at z 1.5 (−1 + 0.75 < 0), open at z 2
    x = np.array([[2.0, 1.0, 1.0], [2.0, 1.0, 3.0], [2.0, 1.0, 1.0], [2.0, 1.0, 3.0]])
    assert pair_signs(x, 1.5).tolist() == [1, 0, -1]  # pairs (0,1), (0,2), (1,2)
    assert pair_signs(x, 2.0).tolist() == [1, 0, 0]


def test_order_interval_counts_open_pairs_both_ways():
    # side a orders all three systems (constant differences); side b decides only (0, 1) at the Bonferroni
    # z of 6 statements (2.87, see test_pair_signs_by_hand): one concordant pair, two open
    a = np.array([[3.0, 2.0, 1.0]] * 4)
    b = np.array([[2.0, 1.0, 1.0], [2.0, 1.0, 3.0], [2.0, 1.0, 1.0], [2.0, 1.0, 3.0]])
    tau, lo, hi = order_interval(a, b)
    assert tau == pytest.approx(tau_b(a.mean(0), b.mean(0)))
    assert (lo, hi) == pytest.approx(((1 - 2) / 3, (1 + 2) / 3))
    # b's own order, everything decided: the interval is the point
    assert order_interval(a, a) == (1.0, 1.0, 1.0)


def test_order_interval_covers_a_known_tau():
    # 6 systems with population means 0.02 apart, one adjacent pair swapped on side b: true τ = 13/15;
    # per-item values mean + question effect + noise, 400 independent items per side, 100 seeded draws
    mu_a = 0.3 + 0.02 * np.arange(6)
    mu_b = mu_a[[1, 0, 2, 3, 4, 5]]
    true = tau_b(mu_a, mu_b)
    assert true == pytest.approx(13 / 15)
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(100):
        a, b = (mu[None, :] + rng.normal(0, .25, (400, 1)) + rng.normal(0, .2, (400, 6)) for mu in (mu_a, mu_b))
        _, lo, hi = order_interval(a, b)
        assert lo <= tau_b(a.mean(0), b.mean(0)) <= hi  # the sample's own τ lies inside
        hits += lo <= true <= hi
    # at least the level (Bonferroni over the 30 pair statements): 100 of 100 in this draw
    assert hits >= 95


def test_weighted_sides_match_the_reweighted_metric_and_a_direct_jackknife():
    rng = np.random.default_rng(0)
    relation = rng.integers(0, 4, 30)
    reference = rng.integers(0, 3, 50)  # relation 3 absent from the reference: weight 0
    w = reweighted_weights(relation, reference)
    shares = {int(r): float(np.mean(reference == r)) for r in np.unique(reference)}
    assert np.allclose(w, answer_weights(relation, shares))
    a, b = rng.random((20, 4)), rng.random((30, 4))
    ours = tau_jackknife(a, b, weights_b=w)
    keep = np.ones(30, bool)
    direct = []
    for i in range(30):
        keep[:] = True
        keep[i] = False
        direct.append(tau_b(a.mean(0), np.average(b[keep], axis=0, weights=w[keep])) if w[keep].sum() else np.nan)
    assert np.allclose(ours[1], direct, equal_nan=True)
    assert np.allclose(ours[0], [tau_b(np.delete(a, i, 0).mean(0), np.average(b, axis=0, weights=w))
                                 for i in range(20)])
    tau, _, _ = bootstrap_tau(a, b, 50, 1, weights_b=w)
    assert tau == pytest.approx(tau_b(a.mean(0), np.average(b, axis=0, weights=w)))


def test_claim_taus_row_names_are_those_the_claims_read():
    from kgeval.analysis.study import claim_taus

    x = np.tile(np.arange(4.0), (10, 1))
    out = claim_taus({("original-sample", "micro_mrr"): (x, x, None), ("table4 Sparse", "micro_mr"): (x, x, None)})
    assert out.values.tolist() == [["original-sample", "micro_mrr", 1.0, 1.0, 1.0],
                                   ["table4 Sparse", "micro_mr", 1.0, 1.0, 1.0]]
    assert list(itertools.chain(out.columns)) == ["Statistic", "Metric", "tau", "tau_low", "tau_high"]
