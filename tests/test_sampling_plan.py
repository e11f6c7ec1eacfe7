"""Sampling stage (issue 42): the confidence sequence's validity under continuous monitoring, the plan's budget
search and draw, and a reduced simulation whose coverage must hold with a right and a wrong prior."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student
from test_sampling import instance

from kgeval.judgments.items import Items
from kgeval.judgments.universe import Universe
from kgeval.sampling import design as dz
from kgeval.sampling.plan import budget_needed, make_plan
from kgeval.sampling.problem import Problem
from kgeval.sampling.sequence import draws_range, eb_sequence
from kgeval.sampling.simulation import simulate


def test_confidence_sequence_first_look_by_hand():
    lo, hi = eb_sequence(np.array([[1.0]]), 0.0, 1.0, 0.05)
    margin = (np.log(40) + 4 * 0.25 * (np.log(2) - 0.5) / 4) / 0.5  # λ1 = 1/2, v1 = 4 (1 − 1/2)²
    assert margin > 1 and lo[0, 0] == 0.0 and hi[0, 0] == 1.0
    lo, hi = eb_sequence(np.full((1, 4000), 0.25), 0.0, 1.0)
    assert lo[0, -1] < 0.25 < hi[0, -1] and hi[0, -1] - lo[0, -1] < 0.1  # a constant stream closes in on it
    assert np.all(np.diff(lo[0]) >= 0) and np.all(np.diff(hi[0]) <= 0)


def test_confidence_sequence_keeps_its_error_rate_at_every_look():
    rng = np.random.default_rng(0)
    y = (rng.random((400, 2000)) < 0.3) * 4.0 - 1.0  # values −1 or 3, mean 0.2
    lo, hi = eb_sequence(y, -1.0, 3.0, 0.05)
    miss = ((lo > 0.2) | (hi < 0.2)).any(1).mean()
    assert miss <= 0.05
    naive = y.cumsum(1) / np.arange(1, 2001)  # a fixed-n interval looked at after every draw loses its rate
    half = 1.96 * 4 * np.sqrt(0.3 * 0.7) / np.sqrt(np.arange(1, 2001))
    assert (np.abs(naive - 0.2) > half)[:, 9:].any(1).mean() > 0.1


def test_draws_range_bounds_every_draw():
    d, p, q = np.array([0.5, -0.2, 0.0]), np.array([0.2, 0.9, 0.5]), np.array([0.5, 0.25, 0.25])
    lo, hi = draws_range(1.0, d, p, q)
    ys = [1.0 + d[e] * (x - p[e]) / q[e] for e in range(3) for x in (0, 1)]
    assert lo == pytest.approx(min(ys)) and hi == pytest.approx(max(ys))


def test_expected_half_width_by_hand():
    """Student's t on the expected units bearing on each pair, less one (at least 1 df), times the expected
    standard error: pair 0's units are π 0.5 + 0.5 + 1 (the π = 0 unit bears on nothing), 2 units, 1 df, t 12.706,
    √(0.01 + 0.04) = 0.22361, 2.8412; pair 1 has v > 0 on units 1 and 4 only: 0.5 + 0.9 = 1.4 units (1 df) and
    √(0.04 + 0.02 · (1/0.9 − 1)) = 0.20548, 2.6108. A census (every π = 1) is exact: width 0."""
    pi = np.array([0.5, 0.5, 1.0, 0.0, 0.9])
    v = np.array([[0.01, 0.0], [0.04, 0.04], [0.02, 0.0], [0.03, 0.0], [0.0, 0.02]])
    assert dz.expected_half_width(pi, v) == pytest.approx([12.7062 * 0.223607, 12.7062 * 0.205480], rel=1e-4)
    assert dz.expected_half_width(np.ones(5), v) == pytest.approx([0.0, 0.0])
    many = np.full(41, 0.5)  # 20.5 units, 19.5 df: t 2.0894 against the normal's 1.96
    assert dz.expected_half_width(many, np.full((41, 1), 0.01))[0] == pytest.approx(2.0894 * np.sqrt(0.41), rel=1e-4)


def test_budget_needed_is_the_smallest_budget_reaching_the_target():
    rng = np.random.default_rng(1)
    d = rng.normal(size=(200, 1)) * 0.01
    v = dz.item_variances(d, rng.uniform(0.1, 0.9, 200))
    elig, cost = np.ones(200, bool), np.ones(200)
    n = budget_needed(v, elig, cost, 0.05, floor_share=0.1)

    def width(m):  # Student's t on the expected units bearing on the pair, less one (the estimate's interval)
        pi = dz.design(v, elig, m, "optimal", cost).pi
        return student.ppf(0.975, pi.sum() - 1) * np.sqrt(((1 / pi - 1) * v[:, 0]).sum())

    assert width(n) < 0.05 <= width(n - 1)
    # the floor grows to the whole budget at a census (n = 200 units): its width is 0, below any target > 0
    assert budget_needed(v, elig, cost, 1e-9) == 200
    assert np.isnan(budget_needed(v, elig, cost, 0.0))


@pytest.mark.parametrize("metric", ["P@k", "RR@k"])
def test_plan_draws_only_eligible_unknowns_and_is_seeded(metric):
    cand, *_ = instance(seed=7, S=4, Q=30, k=3, n_ent=8)
    p = np.random.default_rng(2).uniform(0.1, 0.9, cand.n_items)
    pb = Problem(cand, np.zeros(cand.n_items), metric, mc_draws=16)
    systems = ["a", "b", "c", "d"]
    one = make_plan(pb, p, systems, np.array([0]), budget=15, seed=3, metric=metric)  # a against b
    two = make_plan(pb, p, systems, np.array([0]), budget=15, seed=3, metric=metric)
    np.testing.assert_array_equal(one.items, two.items)
    assert np.unique(one.items).size == one.items.size and (one.pi > 0).all() and (one.pi <= 1).all()
    assert one.items.size and (cand.ranks[:, one.items][[0, 1]] > 0).any(0).all()  # in a compared list
    assert list(one.pairs["A"]) == ["a"] and list(one.pairs["B"]) == ["b"] and one.pairs["plan_budget"][0] == 15
    three = make_plan(pb, p, systems, np.array([0]), budget=None, seed=3, metric=metric, max_budget=50)
    assert three.budget == (three.pairs["budget_needed"][0] if np.isfinite(three.pairs["budget_needed"][0]) else 50)


def test_reduced_simulation_covers_with_a_right_and_a_wrong_prior():
    cand, *_ = instance(seed=8, S=4, Q=60, k=5, n_ent=12)
    rng = np.random.default_rng(9)
    p = rng.uniform(0.05, 0.6, cand.n_items)
    truth = (rng.random(cand.n_items) < p).astype(np.int8)
    hidden = rng.random(cand.n_items) < 0.8
    u = Universe(["a", "b", "c", "d"], Items(cand, cand.item_q, np.zeros(cand.n_items)), truth, hidden, hidden,
                 None, None)
    priors = {"right": p, "shifted": np.clip(p + 0.2, 0, 1)}
    # a question judged in rank order costs about 7 judgments here (up to 20): RR@k's budgets sample about as
    # many units as P@k's, and stay short of a census (400 judges nearly every question, whose interval is 0)
    runs = [simulate(u, priors, (m,), budgets, reps=2000, min_delta=0.05, mc_draws=16, seed=1)
            for m, budgets in (("P@k", (40, 80)), ("RR@k", (100, 200)))]
    again = simulate(u, priors, ("P@k",), (40, 80), reps=2000, min_delta=0.05, mc_draws=16, seed=1)
    assert runs[0].equals(again)
    # a metric's random stream is its own, wherever it stands among the metrics asked
    both = simulate(u, priors, ("P@k", "RR@k"), (100, 200), reps=2000, min_delta=0.05, mc_draws=16, seed=1)
    assert both[both["Metric"] == "RR@k"].reset_index(drop=True).equals(runs[1].reset_index(drop=True))
    tab = pd.concat(runs)
    overall = tab[tab["A"] == "all"]
    # 2000 repetitions × 6 pairs: the coverage's standard error is about 0.002; the normal approximation's own
    # error with a few dozen sampled units is larger, hence 0.93
    assert overall["coverage"].between(0.93, 0.97).all()
    assert (tab["wrong_sign"] <= 0.05).all()
    assert set(tab["design"]) == {"optimal", "uniform", "pair_optimal"}


def test_plan_pairs_of_one_system_against_the_others():
    from kgeval.errors import InputError
    from kgeval.sampling.steps import _pair_columns

    systems = ["a", "b", "c", "d"]
    np.testing.assert_array_equal(_pair_columns(systems, None), np.arange(6))
    np.testing.assert_array_equal(_pair_columns(systems, "c"), [1, 3, 5])  # (a, c), (b, c), (c, d)
    with pytest.raises(InputError, match="sampling.against 'x'"):
        _pair_columns(systems, "x")


def test_plan_asks_one_question():
    """--pair A,B is that one pair in the study's order; --against A,B,C is A against B and C only; an unknown
    name is one line listing the known systems."""
    from kgeval.errors import InputError
    from kgeval.sampling.steps import _pair_columns

    systems = ["a", "b", "c", "d"]  # pairs: (a,b) (a,c) (a,d) (b,c) (b,d) (c,d)
    np.testing.assert_array_equal(_pair_columns(systems, pair=["b", "d"]), [4])
    np.testing.assert_array_equal(_pair_columns(systems, pair=["d", "b"]), [4])
    np.testing.assert_array_equal(_pair_columns(systems, ["c"]), [1, 3, 5])
    np.testing.assert_array_equal(_pair_columns(systems, ["c", "a", "d"]), [1, 5])
    np.testing.assert_array_equal(_pair_columns(systems, ["d", "a"]), _pair_columns(systems, pair=["a", "d"]))
    with pytest.raises(InputError, match=r"sampling.pair 'x': not a system of the study \(known: a, b, c, d\)"):
        _pair_columns(systems, pair=["a", "x"])
    with pytest.raises(InputError, match="two different systems"):
        _pair_columns(systems, pair=["a", "a"])
    with pytest.raises(InputError, match="not both"):
        _pair_columns(systems, "a", ["a", "b"])


@pytest.mark.parametrize("rho", [0.0, 0.5])
def test_rank_order_costs_reuse_the_priors_draws_exactly(rho):
    """The labellings behind a question's rank-order cost are kept for the last prior: per pair, after another
    prior and back, the costs are those of a fresh problem, and the mean over the 16 drawn labellings of the
    judgments by hand (each list down to its first relevant item) of the first question is what cost_of says;
    the labellings by hand: uniforms below p (ρ = 0, the plans before ``mc_rho``) or the Gaussian copula's
    √ρ z_q + √(1 − ρ) ε_e below Φ⁻¹(p) (ρ = 0.5, the default)."""
    from scipy.stats import norm
    from test_sampling import instance

    from kgeval.sampling import problem
    from kgeval.sampling import weights as wt

    assert problem.LABEL_CORRELATION == 0.5
    cand, *_ = instance(seed=3, S=4, Q=12, k=4, n_ent=9)
    p1, p2 = np.linspace(0.1, 0.9, cand.n_items), np.full(cand.n_items, 0.3)
    pb = Problem(cand, np.zeros(cand.n_items), "RR@k", mc_draws=16, seed=5, mc_rho=rho)
    first = [pb.cost_of([j], p1) for j in range(6)]
    pb.cost_of([0], p2)
    again = [pb.cost_of([j], p1) for j in range(6)]
    fresh = Problem(cand, np.zeros(cand.n_items), "RR@k", mc_draws=16, seed=5, mc_rho=rho)
    for j in range(6):
        np.testing.assert_array_equal(first[j], again[j])
        np.testing.assert_array_equal(first[j], fresh.cost_of([j], p1))
    # by hand: the same 16 labellings (seed 5, stream 13), judged down each compared list of question 0
    rng = np.random.default_rng([5, 13])
    draws = []
    for _ in range(2):
        if rho:
            z = rng.standard_normal((8, cand.n_questions))[:, cand.item_q]
            draws.append(np.sqrt(rho) * z + np.sqrt(1 - rho) * rng.standard_normal((8, cand.n_items)) < norm.ppf(p1))
        else:
            draws.append(rng.random((8, cand.n_items)) < p1)
    draws = np.concatenate(draws)
    pos = wt.position_items(cand)
    systems = pb.systems_of([2])
    judged = []
    for x in draws:
        seen = set()
        for s in systems:
            for e in pos[s, 0]:
                if e < 0:
                    continue
                seen.add(int(e))
                if x[e]:
                    break
        judged.append(len(seen))
    assert first[2][0] == pytest.approx(np.mean(judged))


def test_near_a_census_the_floor_grows_and_the_budget_holds():
    """Four units of cost 1, a = (1, 1, 0.1, 0.1): at budget 1 (a quarter of a census) the floor is the 10 %
    share, at budget 3 its share is (3/4)² = 0.5625 while the optimal part keeps its peak (2/3)(4/√3) from budget
    4/√3 on (dz.split); π sums to what the components give and every π > 0, so the estimator stays unbiased (exact
    enumeration of the 16 samples)."""
    import itertools

    from kgeval.sampling import design as dz

    v = np.array([[1.0], [1.0], [0.01], [0.01]])
    elig = np.ones(4, bool)
    low = dz.design(v, elig, 1, "optimal", None, 0.1)
    np.testing.assert_allclose(low.pi_uniform, 0.1 * 1 / 4)
    high = dz.design(v, elig, 3, "optimal", None, 0.1)
    f = 0.5625 * 3 / 4
    np.testing.assert_allclose(high.pi_uniform, f)
    # the optimal part spends (2/3)(4/√3) ≈ 1.5396 (not (1 − 0.5625) × 3 = 1.3125, less than at budget 4/√3) on
    # a ∝ (1, 1, 0.1, 0.1): λ = 1.5396 / 2.2
    np.testing.assert_allclose(high.pi_opt, np.array([1, 1, 0.1, 0.1]) * (2 / 3) * (4 / np.sqrt(3)) / 2.2)
    np.testing.assert_allclose(high.pi, 1 - (1 - high.pi_opt) * (1 - f))
    assert (high.pi > 0.4).all()  # without the growth the two sure units had π ≈ 0.2
    # unbiasedness by enumeration: Σ_S P(S) Σ_{u∈S} y_u / π_u = Σ_u y_u
    y = np.array([0.3, -0.2, 1.0, 0.5])
    mean = 0.0
    for s in itertools.product([0, 1], repeat=4):
        s = np.array(s, bool)
        prob = np.prod(np.where(s, high.pi, 1 - high.pi))
        mean += prob * (y[s] / high.pi[s]).sum()
    assert mean == pytest.approx(y.sum(), abs=1e-12)


def test_monte_carlo_draws_are_declared_once():
    """The schema's sampling.mc_draws default is the code's (problem.MC_DRAWS): the workflow, the command line
    and the API draw the same labellings."""
    import yaml
    from conftest import ROOT

    from kgeval.sampling.outside import SamplingOptions
    from kgeval.sampling.problem import MC_DRAWS

    schema = yaml.safe_load((ROOT / "config/schema.yaml").read_text(encoding="utf-8"))
    default = schema["properties"]["sampling"]["properties"]["mc_draws"]["default"]
    assert default == MC_DRAWS == SamplingOptions.mc_draws == 256
    cand = instance(seed=7, S=4, Q=30, k=3, n_ent=8)[0]
    pb = Problem(cand, np.zeros(cand.n_items), "RR@k")
    assert pb.settings()["mc_draws"] == 256
