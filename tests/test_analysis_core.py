"""Kendall's τ-b, bootstrap intervals, subsampling stability and significance tests."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from kgeval.analysis.resampling import bootstrap_tau, bootstrap_taus, stability_taus, subsample_masks
from kgeval.analysis.significance import discriminative_power, paired_t_pvalues, tukey_hsd_pvalues
from kgeval.metrics.kendall import bca_interval, system_codes, tau_b, tau_b_many, tau_b_rows, tau_jackknife


@pytest.mark.parametrize("seed", range(5))
def test_tau_b_equals_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(20, 13)).astype(float)  # many ties
    y = rng.integers(0, 5, size=13).astype(float)
    ours = tau_b_many(X, y)
    ref = [stats.kendalltau(x, y).statistic for x in X]
    np.testing.assert_allclose(ours, ref, atol=1e-12)


def test_tau_b_directions_and_degenerate():
    x, y = np.array([1.0, 2, 3, 4]), np.array([10.0, 20, 30, 40])
    assert tau_b(x, y) == 1.0 and tau_b(x, -y) == -1.0
    assert tau_b(x, -y, increasing_y=False) == 1.0  # an MR-like metric: lower is better
    assert np.isnan(tau_b(x, np.ones(4)))


def test_system_codes_by_reference():
    assert system_codes(["x", "y", "z"], np.array([0.2, 0.5, 0.3])) == {"y": "A", "z": "B", "x": "C"}
    assert system_codes(["x", "y", "z"], np.array([300.0, 100, 200]), increasing=False) == {"y": "A", "z": "B",
                                                                                             "x": "C"}


def test_bootstrap_interval_contains_tau_and_shrinks_with_more_items():
    rng = np.random.default_rng(0)
    true = np.linspace(0.2, 0.4, 8)

    def items(n):
        return true[None, :] + rng.normal(0, 0.5, size=(n, 8))

    t_small, lo_s, hi_s = bootstrap_tau(items(100), items(100), repeats=400, seed=1)
    t_big, lo_b, hi_b = bootstrap_tau(items(5000), items(5000), repeats=400, seed=1)
    assert lo_s <= t_small <= hi_s and lo_b <= t_big <= hi_b
    assert hi_b - lo_b < hi_s - lo_s


def test_bootstrap_is_seeded():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(200, 6)), rng.normal(size=(150, 6))
    assert bootstrap_tau(a, b, repeats=100, seed=5) == bootstrap_tau(a, b, repeats=100, seed=5)


def test_subsampling_is_seeded_and_full_size_gives_tau_one():
    m1, s1 = subsample_masks(500, sizes=(0.1, 0.5), repeats=7, seed=3)
    m2, _ = subsample_masks(500, sizes=(0.1, 0.5), repeats=7, seed=3)
    assert np.array_equal(m1, m2) and m1.shape == (14, 500)
    assert (m1[:7].sum(1) == 50).all() and (m1[7:].sum(1) == 250).all()
    rng = np.random.default_rng(1)
    items = np.linspace(0, 1, 6)[None, :] + rng.normal(0, 1, size=(1000, 6))
    units = np.arange(1000) // 2  # two answers per triple
    full, _ = subsample_masks(500, sizes=(1.0,), repeats=1)
    assert stability_taus(items, units, full)[0] == 1.0
    masks, sizes = subsample_masks(500, sizes=(0.05, 0.9), repeats=30, seed=0)
    taus = stability_taus(items, units, masks)
    assert taus[sizes == 0.9].mean() > taus[sizes == 0.05].mean()


def test_macro_units_keep_a_question_when_any_triple_is_sampled():
    items = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    units = [np.array([0]), np.array([1, 2]), np.array([3])]
    masks = np.array([[True, False, False, False], [False, False, True, False], [False, True, True, True]])
    taus = stability_taus(items, units, masks)
    # full means: (0.5, 0.5) tie -> tau undefined (nan); check the selection through a non-tied case instead
    items2 = np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]])
    taus2 = stability_taus(items2, units, masks)
    assert taus2.tolist() == [-1.0, 1.0, 1.0]
    assert np.isnan(taus).all()


def test_paired_t_equals_scipy():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 5)) + np.arange(5) * 0.05
    i, j, p = paired_t_pvalues(X)
    for a, b, pv in zip(i, j, p):
        assert pv == pytest.approx(stats.ttest_rel(X[:, a], X[:, b]).pvalue, rel=1e-10)
    assert len(p) == 10


def test_clearly_better_system_is_detected_by_every_test():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 4))
    X[:, 0] += 1.0  # system 0 is clearly better than the others, which are equal
    for test in (paired_t_pvalues, lambda m: tukey_hsd_pvalues(m, trials=300, seed=1)):
        i, j, p = test(X)
        better = (i == 0) | (j == 0)
        assert (p[better] < 0.01).all()
        assert np.median(p[~better]) > 0.05
    assert discriminative_power(np.array([0.01, 0.2, 0.04, 0.5])) == 0.5


def test_tukey_hsd_is_more_conservative_than_t_test():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 8)) + np.linspace(0, 0.25, 8)
    _, _, pt = paired_t_pvalues(X)
    _, _, ph = tukey_hsd_pvalues(X, trials=500, seed=2)
    assert (ph >= pt - 0.02).mean() > 0.9


def test_kl_divergence_add_one_by_hand():
    from kgeval.analysis.study import kl_divergence

    # (2, 0) and (0, 2) plus one each: P = (3/4, 1/4), Q = (1/4, 3/4); KL = 3/4 ln 3 + 1/4 ln(1/3) = ln(3)/2
    assert kl_divergence([2, 0], [0, 2]) == pytest.approx(np.log(3) / 2, abs=1e-15)
    assert kl_divergence([2, 0], [0, 2], pseudocount=0) == np.inf
    assert kl_divergence([5, 1, 0], [5, 1, 0]) == 0.0
    # asymmetric: (1, 0, 0) → P = (1/2, 1/4, 1/4); (0, 0, 5) → Q = (1/8, 1/8, 3/4)
    want = 0.5 * np.log(4) + 0.25 * np.log(2) + 0.25 * np.log(1 / 3)
    assert kl_divergence([1, 0, 0], [0, 0, 5]) == pytest.approx(want, abs=1e-15)


def test_relation_distributions_compare_all_relations_reference_first():
    from kgeval.analysis.study import relation_distributions
    from kgeval.data.kg import KnowledgeGraph

    def triples(rels):
        return np.array([[0, r, 1] for r in rels], dtype=np.int64)

    # 4 relations; reference O uses r0 ×3, r1 ×1; sample S only r0 ×2; the graph r0..r3 once each
    kg = KnowledgeGraph("toy", ["a", "b"], ["r0", "r1", "r2", "r3"],
                        {"train": triples([0, 1, 2, 3]), "valid": triples([]).reshape(0, 3),
                         "test": triples([]).reshape(0, 3)})
    sets = {"O": triples([0, 0, 0, 1]), "S": triples([0, 0])}
    table, kl = relation_distributions(sets, kg.known(), kg, classes=2, reference="O")
    # display: the most frequent relation of O plus "other"
    assert table["relation"].tolist() == ["r0", "other"]
    np.testing.assert_allclose(table["O"], [0.75, 0.25])
    np.testing.assert_allclose(table["full"], [0.25, 0.75])
    assert kl[["P", "Q"]].values.tolist() == [["O", "S"], ["full", "O"]]
    assert (kl["classes"] == 4).all()
    # KL(O‖S) over 4 relations add-one: O → (4,2,1,1)/8, S → (3,1,1,1)/6
    p, q = np.array([4, 2, 1, 1]) / 8, np.array([3, 1, 1, 1]) / 6
    assert kl["KL"].iloc[0] == pytest.approx(np.sum(p * np.log(p / q)), abs=1e-14)
    # KL(full‖O): full → (2,2,2,2)/8, O → (4,2,1,1)/8
    p, q = np.full(4, 0.25), np.array([4, 2, 1, 1]) / 8
    assert kl["KL"].iloc[1] == pytest.approx(np.sum(p * np.log(p / q)), abs=1e-14)


def _scipy_bca(data, statistic, boot, level=0.95):
    """scipy's BCa interval on the given bootstrap distribution (scipy adds no resamples of its own)."""
    res = stats.bootstrap(data, statistic, n_resamples=0, method="BCa", confidence_level=level,
                          bootstrap_result=SimpleNamespace(bootstrap_distribution=boot))
    return res.confidence_interval.low, res.confidence_interval.high


def test_bca_interval_equals_scipy_on_a_skewed_two_sample_mean():
    rng = np.random.default_rng(3)
    x, y = rng.lognormal(size=25), rng.lognormal(size=18)
    boot = rng.choice(x, (2000, len(x))).mean(1) - rng.choice(y, (2000, len(y))).mean(1)
    jack = [(x.sum() - x) / (len(x) - 1) - y.mean(), x.mean() - (y.sum() - y) / (len(y) - 1)]
    ours = bca_interval(x.mean() - y.mean(), boot, jack, level=0.9)
    ref = _scipy_bca((x, y), lambda a, b, axis: a.mean(axis) - b.mean(axis), boot, level=0.9)
    np.testing.assert_allclose(ours, ref, rtol=1e-12)
    # right-skewed data: BCa moves both ends up against the percentile interval
    perc = np.quantile(boot, [0.05, 0.95])
    assert ours[0] > perc[0] and ours[1] > perc[1]


@pytest.mark.parametrize("paired", [False, True])
def test_bca_of_tau_equals_scipy(paired):
    rng = np.random.default_rng(11)
    S = 9
    A = rng.normal(np.linspace(0, 0.6, S), 1.0, size=(60, S))
    B = A[:45] + rng.normal(0, 0.6, size=(45, S))  # the first 45 items of A again, measured differently
    est = tau_b(A.mean(0), B.mean(0))
    if paired:  # units 0..59; B holds units 0..44
        keys_a, keys_b = np.arange(60), np.arange(45)
        boot = bootstrap_taus(A, B, 1000, 7, keys_a, keys_b)

        def statistic(units, axis=-1):
            u = np.atleast_2d(units)
            wa = np.stack([np.bincount(r, minlength=60) for r in u]).astype(float)
            wb = wa[:, :45]
            out = tau_b_rows(wa @ A / wa.sum(1, keepdims=True), wb @ B / wb.sum(1, keepdims=True))
            return out if np.ndim(units) > 1 else out[0]

        ref = _scipy_bca((np.arange(60),), statistic, boot)
        ours = bca_interval(est, boot, tau_jackknife(A, B, keys_a, keys_b))
    else:
        boot = bootstrap_taus(A, B, 1000, 7)

        def statistic(ia, ib, axis=-1):
            ma, mb = A[ia].mean(-2), B[ib].mean(-2)
            return tau_b_rows(ma.reshape(-1, S), mb.reshape(-1, S)).reshape(ma.shape[:-1])

        ref = _scipy_bca((np.arange(60), np.arange(45)), statistic, boot)
        ours = bca_interval(est, boot, tau_jackknife(A, B))
    assert np.isfinite(boot).all() and 0 < np.mean(boot < est) < 1
    np.testing.assert_allclose(ours, ref, rtol=1e-12)
    assert ours == bootstrap_tau(A, B, 1000, 7, keys_a=keys_a if paired else None,
                                 keys_b=keys_b if paired else None)[1:]


def test_bca_handles_degenerate_distributions():
    assert np.isnan(bca_interval(0.5, np.full(10, np.nan), [np.arange(5.0)])).all()
    assert np.isnan(bca_interval(np.nan, np.arange(10.0), [np.arange(5.0)])).all()
    # every resample below the estimate: z0 is clipped, not infinite, and the interval is the top of the sample
    lo, hi = bca_interval(20.0, np.arange(10.0), [np.zeros(5)])
    assert 8.0 < lo <= hi <= 9.0


def test_shared_items_need_a_paired_bootstrap():
    # FB-Test-S against FB-Test-S-C(1): the same answers (a few gain rank as new positives leave the filter)
    # plus new ones. Resampled independently, nearly every resampled τ falls below the estimate and no interval
    # built from them — percentile or BCa — holds it; resampled paired, both intervals do.
    rng = np.random.default_rng(0)
    S, n = 13, 1023
    A = (rng.random((n, S)) < np.linspace(0.20, 0.23, S)).astype(float)
    B = np.maximum(A, rng.random(A.shape) < 0.02)
    B = np.vstack([B, (rng.random((118, S)) < 0.1).astype(float)])
    keys_a, keys_b = np.arange(n), np.arange(n + 118)
    for method in ("percentile", "bca"):
        tau, lo, hi = bootstrap_tau(A, B, 500, 1, method=method)
        assert tau > hi  # the Figure 4 case: τ 0.888, interval 0.467–0.846
        tau_p, lo_p, hi_p = bootstrap_tau(A, B, 500, 1, method=method, keys_a=keys_a, keys_b=keys_b)
        assert tau_p == tau and lo_p <= tau <= hi_p
    assert np.mean(bootstrap_taus(A, B, 500, 1) < tau) > 0.99


def test_item_keys_pair_the_answers_and_questions_two_test_sets_share():
    import pandas as pd

    from kgeval.analysis.items import macro_items, micro_items
    from kgeval.data.kg import HEAD, KnowledgeGraph
    from kgeval.data.testsets import TestSet

    empty = np.zeros((0, 3), np.int64)
    kg = KnowledgeGraph("toy", ["e0", "e1", "e2", "e3"], ["r0", "r1"],
                        {"train": np.array([[0, 0, 3]]), "valid": empty, "test": empty})
    seed = np.array([[0, 0, 1], [2, 1, 3]])
    completed = TestSet("C", np.vstack([seed, [[0, 0, 2]]]), np.ones(3, np.int8), np.array([0, 0, 1], np.int16))

    def tables(ts):
        qs = ts.questions(kg)
        qindex = {(int(s), int(e), int(r)): q for s, e, r, q in zip(qs.side, qs.entity, qs.relation, qs.qid)}
        answers, questions = [], []
        for h, r, t in ts.positives.tolist():
            answers.append({"qid": qindex[(HEAD, t, r)], "entity": h})
            answers.append({"qid": qindex[(1 - HEAD, h, r)], "entity": t})
        for q in qs.qid:
            questions.append({"qid": q})
        pa = pd.DataFrame(answers).assign(System="A", m=np.arange(len(answers), dtype=float))
        pq = pd.DataFrame(questions).assign(System="A", m=np.arange(len(questions), dtype=float))
        return (micro_items(pa, qs, ts, kg, ["m"], ["A"]), macro_items(pq, qs, ts, kg, ["m"], ["A"]))

    mi_s, ma_s = tables(completed.at_depth(0))
    mi_c, ma_c = tables(completed)
    # micro: the 4 answers of the 2 seed triples are shared, the new triple adds its head and tail answer
    assert len(mi_s.keys["m"]) == 4 and len(mi_c.keys["m"]) == 6
    assert set(mi_s.keys["m"]) < set(mi_c.keys["m"])
    # macro: (0, r0, ?) is asked by both (0, r0, 1) and (0, r0, 2); only (?, r0, 2) is new
    assert len(ma_s.keys["m"]) == 4 and len(ma_c.keys["m"]) == 5
    assert set(ma_s.keys["m"]) < set(ma_c.keys["m"])
    assert len(np.unique(mi_c.keys["m"])) == 6 and len(np.unique(ma_c.keys["m"])) == 5


def test_bounds_overlay_takes_figure5_rows_from_the_bounds_tables(tmp_path):
    """Figure 5's overlay: per flavour and depth the every-labelling τ-a interval of Success@k and RR@k (today's τ-a
    as its value), and the prior's expected τ at its depth on the published judgments; other bounded metrics and
    other prior metrics are left out."""
    import pandas as pd

    from kgeval.analysis import figures, study

    tau = pd.DataFrame({
        "Flavour": ["published", "published", "rebuilt", "published"],
        "Depth": [1, 2, 1, 2],
        "Metric": ["Success@10", "Success@10", "Success@10", "P@10"],
        "tau_a_today": [0.8, 0.6, 0.7, 0.5],
        "tau_lo": [-0.2, -0.4, 0.1, -1.0],
        "tau_hi": [0.9, 0.8, 0.9, 1.0],
    })
    prior = pd.DataFrame({"Metric": ["Success", "P"], "Depth": [2, 2], "tau_mean": [0.55, 0.4],
                          "tau_lo_95": [0.3, 0.1], "tau_hi_95": [0.7, 0.6]})
    rows = study.bounds_overlay(tau, prior)
    assert list(rows["Metric"].unique()) == ["macro Success@10"]
    band = rows[rows["Kind"] == study.EVERY_LABELLING]
    assert band[["Flavour", "Depth", "tau", "tau_low", "tau_high"]].values.tolist() == [
        ["published", 1, 0.8, -0.2, 0.9], ["published", 2, 0.6, -0.4, 0.8], ["rebuilt", 1, 0.7, 0.1, 0.9]]
    assert rows[rows["Kind"] == study.UNDER_PRIOR][["Flavour", "Depth", "tau", "tau_low", "tau_high"]].values.tolist() \
        == [["published", 2, 0.55, 0.3, 0.7]]
    assert study.bounds_overlay(tau.iloc[:0], prior).empty  # no bounded metric, no rows (and no prior point)

    measured = pd.DataFrame({"Flavour": ["published"] * 2 + ["rebuilt"] * 2, "Depth": [1, 2, 1, 2],
                             "Metric": ["macro_hits@10"] * 4, "tau": [0.9, 0.7, 0.8, 0.8],
                             "tau_low": [np.nan] * 4, "tau_high": [np.nan] * 4, "Kind": study.MEASURED})
    png, pdf = tmp_path / "f5.png", tmp_path / "f5.pdf"
    figures.depth_taus(pd.concat([measured, rows], ignore_index=True), ["macro_hits@10"], png, pdf, "t")
    assert png.stat().st_size > 0 and pdf.stat().st_size > 0
