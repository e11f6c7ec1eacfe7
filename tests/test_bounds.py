"""Exact bounds under unjudged triples (kgeval.bounds): hand-computed cases, brute force over every labelling."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgeval.bounds.kendall import exact_interval, outer_interval, reference_signs, tau_a
from kgeval.bounds.pairs import decisions, pair_bounds
from kgeval.judgments.labels import ABSENT, NONREL, REL, UNKNOWN, Instance, match_positions
from kgeval.judgments.metrics import METRICS, system_bounds
from kgeval.judgments.metrics import bounded_metric as metric

R, N, U = REL, NONREL, UNKNOWN


def hand_instance() -> Instance:
    # question 0: A = e1 R, e2 U, e3 N; B = e2 U, e4 N, e5 U
    # question 1: A = e6 U, e7 N, e8 R; B = e8 R, e6 U, e9 N
    # question 2: A = e10 N, e11 N, e12 N; B = e10 N, e13 U, e11 N
    ent = np.array([[[1, 2, 3], [6, 7, 8], [10, 11, 12]],
                    [[2, 4, 5], [8, 6, 9], [10, 13, 11]]])
    code = np.array([[[R, U, N], [U, N, R], [N, N, N]],
                     [[U, N, U], [R, U, N], [N, U, N]]], np.int8)
    return Instance(["A", "B"], ent, code)


@pytest.mark.parametrize("base, sys_lo, sys_hi, d_lo, d_hi", [
    ("P", [2 / 9, 1 / 9], [4 / 9, 5 / 9], -1 / 9, 1 / 9),
    ("RR", [4 / 9, 1 / 3], [2 / 3, 5 / 6], -7 / 18, 1 / 3),
    ("Success", [2 / 3, 1 / 3], [2 / 3, 1.0], -1 / 3, 1 / 3),
])
def test_hand_computed_two_systems_three_questions(base, sys_lo, sys_hi, d_lo, d_hi):
    inst = hand_instance()
    m = metric(base, 3)
    lo, hi = system_bounds(inst.code, m)
    assert lo.mean(1) == pytest.approx(sys_lo)
    assert hi.mean(1) == pytest.approx(sys_hi)
    plo, phi = pair_bounds(inst.code, match_positions(inst.entity), m)
    assert (plo[0, 1], phi[0, 1]) == pytest.approx((d_lo, d_hi))
    assert (plo[1, 0], phi[1, 0]) == pytest.approx((-d_hi, -d_lo))
    assert not decisions(plo, phi)[0][0, 1]


def test_unknown_set_is_the_distinct_unjudged_pairs():
    inst = hand_instance()
    assert inst.unknown_pairs().tolist() == [[0, 2], [0, 5], [1, 6], [2, 13]]
    ids, n = inst.unknown_ids()
    assert n == 4 and ids[0, 0, 1] == ids[1, 0, 0] == 0 and ids[1, 1, 1] == ids[0, 1, 0] == 2


# ---- brute force ---------------------------------------------------------------------------------------------
def direct_value(base: str, k: int, rel: list[int], p: float = 0.8) -> float:
    """Each metric from its textbook definition over a 0/1 list (no shared code with kgeval.bounds)."""
    rel = rel[:k]
    if base == "P":
        return sum(rel) / k
    if base == "Success":
        return float(any(rel))
    if base == "RR":
        return next((1.0 / (i + 1) for i, x in enumerate(rel) if x), 0.0)
    if base == "DCG":
        return sum(x / np.log2(i + 2) for i, x in enumerate(rel))
    return sum((1 - p) * p ** i * x for i, x in enumerate(rel))


@st.composite
def instances(draw, max_unknown=7):
    S = draw(st.integers(2, 3))
    Q = draw(st.integers(1, 2))
    k = draw(st.integers(1, 3))
    ent = np.full((S, Q, k), -1, np.int64)
    labels = {}
    for q in range(Q):
        n = draw(st.integers(1, 4))
        for e in range(n):
            labels[(q, e)] = draw(st.sampled_from([R, N, U]))
        for s in range(S):
            length = draw(st.integers(0, min(k, n)))
            ent[s, q, :length] = draw(st.permutations(range(n)))[:length]
    unknown = sorted(key for key, lab in labels.items() if lab == U)[:max_unknown]
    for key in labels:
        if labels[key] == U and key not in unknown:
            labels[key] = N
    code = np.full(ent.shape, ABSENT, np.int8)
    for s, q, i in zip(*np.nonzero(ent >= 0)):
        code[s, q, i] = labels[(q, int(ent[s, q, i]))]
    return Instance([f"s{i}" for i in range(S)], ent, code), labels, unknown


def all_means(inst: Instance, labels: dict, unknown: list, base: str) -> np.ndarray:
    """(labellings, S): each system's mean metric under every labelling of the unknowns."""
    S, Q, k = inst.entity.shape
    out = []
    for bits in itertools.product([0, 1], repeat=len(unknown)):
        lab = {key: (1 if v == R else 0) for key, v in labels.items()}
        lab.update(dict(zip(unknown, bits)))
        out.append([np.mean([direct_value(base, k, [lab[(q, int(e))] for e in inst.entity[s, q] if e >= 0])
                             for q in range(Q)]) for s in range(S)])
    return np.array(out)


@settings(max_examples=60, deadline=None)
@given(instances(), st.sampled_from(METRICS))
def test_bounds_equal_brute_force(case, base):
    inst, labels, unknown = case
    m = metric(base, inst.k)
    means = all_means(inst, labels, unknown, base)
    lo, hi = system_bounds(inst.code, m)
    np.testing.assert_allclose(lo.mean(1), means.min(0), atol=1e-12)
    np.testing.assert_allclose(hi.mean(1), means.max(0), atol=1e-12)
    diff = means[:, :, None] - means[:, None, :]
    plo, phi = pair_bounds(inst.code, match_positions(inst.entity), m)
    np.testing.assert_allclose(plo, diff.min(0), atol=1e-12)
    np.testing.assert_allclose(phi, diff.max(0), atol=1e-12)


@pytest.mark.parametrize("base", METRICS)
def test_decided_pairs_keep_their_sign_under_sampled_labellings(base):
    rng = np.random.default_rng(7)
    S, Q, k, n = 5, 40, 4, 8
    ent = np.stack([np.stack([rng.permutation(n)[:k] for _ in range(Q)]) for _ in range(S)])
    # system s finds relevant entities more often the smaller s is, so some pairs are decided
    truth = rng.choice([R, N, U], size=(Q, n), p=[0.3, 0.6, 0.1])
    for s in range(S):
        ent[s, :, 0] = np.where(rng.random(Q) < 0.95 - 0.22 * s, np.argmax(truth == R, 1), ent[s, :, 0])
        ent[s] = np.array([list(dict.fromkeys(row)) + [-1] * (k - len(set(row))) for row in ent[s].tolist()])
    code = np.where(ent >= 0, truth[np.arange(Q)[None, :, None], np.maximum(ent, 0)], ABSENT).astype(np.int8)
    inst = Instance([str(s) for s in range(S)], ent, code)
    m = metric(base, k)
    plo, phi = pair_bounds(code, match_positions(ent), m)
    decided, sign = decisions(plo, phi)
    assert (sign != 0).sum() >= 2, "the instance should decide some pairs"
    for _ in range(300):
        x = rng.random((Q, n)) < rng.random()
        lab = np.where(truth == U, x, truth == R)
        rel = np.where(ent >= 0, lab[np.arange(Q)[None, :, None], np.maximum(ent, 0)], False)
        vals = np.array([[direct_value(base, k, rel[s, q].astype(int).tolist()) for q in range(Q)]
                         for s in range(S)]).mean(1)
        d = vals[:, None] - vals[None, :]
        assert np.all(np.sign(d)[sign != 0] == sign[sign != 0])
        assert np.all((d >= plo - 1e-12) & (d <= phi + 1e-12))
    assert inst.unknown_pairs().shape[1] == 2


@settings(max_examples=15, deadline=None)
@given(instances(max_unknown=6), st.sampled_from(["P", "DCG", "RBP"]), st.integers(0, 10**6))
def test_milp_tau_interval_equals_brute_force(case, base, seed):
    inst, labels, unknown = case
    rng = np.random.default_rng(seed)
    S = len(inst.systems)
    # one more system makes three pairs possible even when hypothesis drew two
    reference = rng.permutation(S).astype(float)
    m = metric(base, inst.k)
    means = all_means(inst, labels, unknown, base)
    taus = [tau_a(reference, v) for v in means]
    pos = match_positions(inst.entity)
    plo, phi = pair_bounds(inst.code, pos, m)
    decided, sign = decisions(plo, phi)
    s_ref = reference_signs(reference)
    outer = outer_interval(s_ref, decided, sign, plo, phi)
    assert outer.outer_lo - 1e-12 <= min(taus) and max(taus) <= outer.outer_hi + 1e-12
    assert outer.outer_lo - 1e-12 <= outer.lo <= min(taus) + 1e-12
    assert max(taus) - 1e-12 <= outer.hi <= outer.outer_hi + 1e-12
    lo0, _ = system_bounds(inst.code, m)
    today = lo0.mean(1)[:, None] - lo0.mean(1)[None, :]
    ids, n = inst.unknown_ids()
    exact = exact_interval(outer, s_ref, decided, plo, phi, today, inst.code, pos, ids, n, m, 10.0)
    assert exact.lo == pytest.approx(min(taus), abs=1e-9)
    assert exact.hi == pytest.approx(max(taus), abs=1e-9)
    if outer.undecided:
        assert exact.status_lo == exact.status_hi == "optimal"


def test_milp_depths_solve_only_the_listed_depths():
    """bounds.milp_depths: a listed depth's τ row is the one every depth gets by default (0-1 programs, optimal);
    an unlisted depth's row is the one without 0-1 programs (outer bound only)."""
    from kgeval.bounds.tables import states_tables

    inst = hand_instance()
    mask = np.ones(inst.code.shape[1], bool)
    states = [("published", d, inst.code, mask) for d in (0, 1, 2)]
    ms = [metric("P", 3)]

    def tau(milp_metrics, milp_depths=None):
        t = states_tables(inst.systems, inst.entity, states, ms, milp_metrics, 10.0, 100, milp_depths)[2]
        return t.set_index("Depth")

    every, none, only2 = tau({"P"}), tau(set()), tau({"P"}, {2})
    assert list(every["milp_status_lo"]) == ["optimal", "optimal"]
    assert list(none["milp_status_lo"]) == ["outer bound only", "outer bound only"]
    cols = ["tau_lo", "tau_hi", "milp_status_lo", "milp_status_hi"]
    assert only2.loc[2, cols].tolist() == every.loc[2, cols].tolist()
    assert only2.loc[1, cols].tolist() == none.loc[1, cols].tolist()
    assert only2.loc[1, "tau_outer_lo"] == every.loc[1, "tau_outer_lo"]

    from kgeval.bounds.steps import bounds_step
    from kgeval.errors import ConfigError

    with pytest.raises(ConfigError, match="config bounds.milp_depths: depth 11 is deeper than the pool's deepest "
                                          "depth 10"):
        bounds_step({}, *[""] * 9, max_depth=10, milp_depths=[1, 11])


# ---- findings: claims compared on the judged set become undecided ----------------------------------------------
def bounds_tau(rr: tuple[float, float, float], s10: tuple[float, float, float]):
    import pandas as pd

    rows = [{"Flavour": fl, "Depth": d, "Metric": name, "pairs": 78, "undecided": 5, "tau_a_today": today,
             "tau_lo": lo, "tau_hi": hi}
            for fl in ("published", "rebuilt") for d in (1, 4)
            for name, (today, lo, hi) in (("RR@10", rr), ("Success@10", s10))]
    return pd.DataFrame(rows)


def test_findings_undecided_when_an_interval_holds_the_threshold_or_the_papers_value():
    import pandas as pd

    from kgeval.analysis import findings as F

    names = {"original": "O", "sample": "S", "complete": "SC", "second": "W"}
    f5 = pd.DataFrame([{"Flavour": "published", "Depth": 4, "Metric": m, "tau": t} for m, t in
                       (("micro_mrr", -0.23), ("macro_mrr", 0.6), ("micro_hits@10", 0.3), ("macro_hits@10", 0.7))])

    def verdict(prefix, tau):
        c = next(c for c in F.CLAIMS if c.claim.startswith(prefix + ". "))
        return F.findings(F.Outputs(names, figure5=f5, bounds_tau=tau), [c]).iloc[0]

    # claim 4: the paper's macro MRR τ (0.1795) lies inside the RR@10 interval
    r = verdict("4", bounds_tau((0.6, 0.1, 0.9), (0.7, 0.5, 0.8)))
    assert r["holds"] == "undecided" and "macro RR@10 τ ∈ [0.1000, 0.9000]" in r["ours"]
    # the Success@10 interval reaches the micro Hits@10 τ (0.3), the claim's threshold
    assert verdict("4", bounds_tau((0.6, 0.5, 0.7), (0.7, 0.3, 0.8)))["holds"] == "undecided"
    r = verdict("4", bounds_tau((0.6, 0.5, 0.7), (0.7, 0.6, 0.8)))
    assert r["holds"] == "yes" and r["ours"].endswith("macro Success@10 τ ∈ [0.6000, 0.8000]")
    assert verdict("4", None)["holds"] == "yes"  # no bounds stage: the verdict as measured
    # claim 4b: reordered (below 0.6) under every labelling, or undecided when an interval holds 0.6
    r = verdict("4b", bounds_tau((0.5, 0.3, 0.55), (0.4, 0.2, 0.5)))
    assert r["holds"] == "yes" and r["ours"].startswith("RR 0.5000, Success 0.4000 (depth 4; undecided pairs 5 and 5")
    assert verdict("4b", bounds_tau((0.5, 0.3, 0.7), (0.4, 0.2, 0.5)))["holds"] == "undecided"
    assert verdict("4b", bounds_tau((0.8, 0.7, 0.9), (0.9, 0.65, 0.95)))["holds"] == "no"
    assert verdict("4b", None)["holds"] == "not measured"


def test_codes_and_question_mask_from_qrels():
    from kgeval.judgments.labels import state
    from kgeval.metrics.evaluate import Qrels

    # question 0 judges entity 3 relevant, 4 non-relevant, 5 pooled but unjudged; question 1 has no relevant one
    qrels = Qrels(np.array([0, 0, 0, 1]), np.array([3, 4, 5, 7]), np.array([1, 0, -1, 0], np.int8))
    entity = np.array([[[5, 3, 9], [7, 8, -1]], [[4, 6, 3], [8, 7, 2]]])
    code, qmask = state(entity, qrels, num_entities=10)
    assert code.tolist() == [[[U, R, U], [N, U, ABSENT]], [[N, U, R], [U, N, U]]]
    assert qmask.tolist() == [True, False]


def test_outer_tau_interval_counts_and_pairwise_tightening():
    # reference: s0 > s1 > s2; pair (0, 1) decided concordant, (0, 2) Δ ∈ [0, 0.5] (tie or concordant),
    # (1, 2) Δ ∈ [−0.2, 0.3] (either way)
    ref = np.array([3.0, 2.0, 1.0])
    lo = np.array([[0, 0.1, 0.0], [-0.4, 0, -0.2], [-0.5, -0.3, 0]])
    hi = -lo.T
    decided, sign = decisions(lo, hi)
    iv = outer_interval(reference_signs(ref), decided, sign, lo, hi)
    assert (iv.concordant, iv.discordant, iv.undecided) == (1, 0, 2)
    assert (iv.outer_lo, iv.outer_hi) == pytest.approx((-1 / 3, 1.0))
    assert (iv.lo, iv.hi) == pytest.approx((0.0, 1.0))


def test_milp_limits_give_a_valid_bound_the_same_on_every_run():
    """A node-limited 0-1 program proves an upper bound on the best concordance (never below the optimum) and the
    same one on every run; a solve stopped by the time limit falls back to the trivial bound (all pairs), so the
    τ interval keeps its outer ends instead of a bound that depends on the machine's speed."""
    from scipy import sparse

    from kgeval.bounds.kendall import _max_concordance

    rng = np.random.default_rng(3)
    m, n = 30, 40
    C = sparse.random(m, n, density=0.15, random_state=3, data_rvs=lambda k: rng.choice([-1.0, 1.0], k)).tocsr()
    base, s = rng.normal(0, 1.0, m), rng.choice([-1.0, 1.0], m)
    t_min = s * base - np.abs(C).sum(1).A1
    best, status = _max_concordance(C, base, s, t_min, 1e-6, 60.0)
    assert status == "optimal"
    limited = [_max_concordance(C, base, s, t_min, 1e-6, 60.0, node_limit=1) for _ in range(3)]
    assert limited[0] == limited[1] == limited[2]
    assert limited[0][1] in {"node limit", "optimal"} and limited[0][0] >= best - 1e-9
    assert _max_concordance(C, base, s, t_min, 1e-6, 1e-9) == (float(m), "time limit")
