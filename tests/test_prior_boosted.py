"""The boosted relevance prior (issue 50 §2): graph evidence counted by hand on a tiny graph, the AUC and ECE
helpers against scikit-learn and the textbook formula, calibration on held-out folds and determinism."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from kgeval.data.kg import HEAD, TAIL, KnowledgeGraph
from kgeval.judgments.graph_features import graph_counts, item_graph_features, reciprocal_ranks
from kgeval.judgments.prior import Features, auc, cross_validate, fit_prior
from kgeval.judgments.prior_models import BoostedPrior, expected_calibration_error

# entities 0..4, relations 0..1
TRAIN = np.array([[0, 0, 1], [0, 0, 2], [3, 0, 1], [1, 1, 4], [2, 1, 0]])
# (relation, asked side, known entity, candidate) and the counts read off TRAIN by hand
ITEMS = [
    (0, TAIL, 0, 1),  # (0, r0, ?) → 1: r0 tails = 1 twice; 0–1 linked by (0,0,1); 1 in 3 triples
    (0, HEAD, 1, 3),  # (?, r0, 1) → 3: r0 heads = 3 once; 3–1 linked; 3 in 1 triple
    (1, HEAD, 0, 4),  # (?, r1, 0) → 4: r1 heads = 4 never; no 4–0 triple; 4 in 1 triple
    (1, TAIL, 0, 2),  # (0, r1, ?) → 2: r1 tails = 2 never; 0–2 linked both ways; 2 in 2 triples
]
EXPECTED = np.array([[2, 1, 3], [1, 1, 1], [0, 0, 1], [0, 1, 2]])


def test_graph_counts_by_hand():
    r, s, k, c = map(np.array, zip(*ITEMS, strict=True))
    np.testing.assert_array_equal(graph_counts(TRAIN, 5, r, s, k, c), EXPECTED)


def test_graph_counts_link_is_either_direction():
    # (2, r1, 0) alone: the item asks 0 → 2, so only the reversed direction links them
    got = graph_counts(TRAIN[[4]], 5, [0], [TAIL], [0], [2])
    np.testing.assert_array_equal(got, [[0, 1, 1]])


def test_graph_counts_empty_training_split():
    np.testing.assert_array_equal(graph_counts(np.empty((0, 3)), 5, [0], [TAIL], [0], [1]), [[0, 0, 0]])


def test_item_graph_features_read_only_the_training_split():
    # a test triple (0, r1, 2) would make item 4's side frequency 1: the test split holds the judged answers
    kg = KnowledgeGraph("tiny", [f"e{i}" for i in range(5)], ["r0", "r1"],
                        {"train": TRAIN, "valid": np.empty((0, 3), np.int64), "test": np.array([[0, 1, 2]])})
    r, s, k, c = map(np.array, zip(*ITEMS, strict=True))
    ranks = np.array([[1, 0, 11, 4], [3, 2, 10, 0]])
    got = item_graph_features(kg, r, s, k, c, ranks, 10)
    want = np.column_stack([np.log1p(EXPECTED[:, 0]), EXPECTED[:, 1], np.log1p(EXPECTED[:, 2]),
                            [1, 0, 0, 0.25], [1 / 3, 0.5, 0.1, 0]])
    np.testing.assert_allclose(got, want)


def test_reciprocal_ranks_outside_top_k_is_zero():
    np.testing.assert_allclose(reciprocal_ranks(np.array([[1, 0, 11], [3, 2, 10]]), 10),
                               [[1, 1 / 3], [0, 0.5], [0, 0.1]])


def test_auc_agrees_with_scikit_learn_with_ties():
    rng = np.random.default_rng(3)
    s = rng.integers(0, 5, 300) / 4  # many ties
    y = (rng.random(300) < 0.2 + 0.5 * s).astype(int)
    assert auc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def _textbook_ece(p, y, bins):
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = (p >= lo) & ((p < hi) if b < bins - 1 else (p <= hi))
        if inside.any():
            total += inside.sum() / p.size * abs(p[inside].mean() - y[inside].mean())
    return total


def test_ece_by_hand_and_against_the_textbook_loop():
    assert expected_calibration_error([0.1, 0.1, 0.9, 0.9], [0, 1, 1, 1]) == pytest.approx(0.25)
    assert expected_calibration_error([1.0, 0.0], [1, 0]) == 0.0
    rng = np.random.default_rng(5)
    p, y = rng.random(1000), (rng.random(1000) < 0.3).astype(float)
    for bins in (5, 10, 15):
        assert expected_calibration_error(p, y, bins) == pytest.approx(_textbook_ece(p, y, bins), abs=1e-12)


def _synthetic(n=4000, seed=0):
    """Items whose relevance needs an interaction (linked × many answers) no logistic on the columns can fit;
    groups of 8 items per question."""
    rng = np.random.default_rng(seed)
    best = rng.integers(1, 12, n)
    linked = rng.random(n) < 0.3
    many = rng.random(n) < 0.5
    logit = -1.5 - 0.4 * np.log(best) + 3.0 * (linked & many) - 1.0 * (linked & ~many)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    extra = np.column_stack([linked.astype(float), rng.random(n)])
    f = Features(best, rng.integers(1, 5, n), rng.integers(0, 8, n), np.where(many, 500.0, 3.0), 10, extra)
    return f, y, np.arange(n) // 8


def test_boosted_prior_beats_the_logistic_and_is_calibrated_out_of_fold():
    f, y, groups = _synthetic()
    boosted = cross_validate(f, y, groups, 5, 0, "boosted")
    logistic = cross_validate(f, y, groups, 5, 0, "logistic")
    assert boosted.auc > logistic.auc + 0.05
    assert expected_calibration_error(boosted.predictions, y) < 0.03
    assert abs(boosted.predictions.mean() - y.mean()) < 0.01


def test_boosted_prior_is_deterministic_for_a_seed():
    f, y, _ = _synthetic(1500, seed=1)
    a = fit_prior(f, y, "boosted").predict(f)
    b = fit_prior(f, y, "boosted").predict(f)
    assert a.tobytes() == b.tobytes()
    assert ((a >= 0) & (a <= 1)).all()


def test_boosted_prior_without_both_classes_or_extra_columns():
    f, y, _ = _synthetic(200, seed=2)
    np.testing.assert_array_equal(BoostedPrior().fit(f, np.zeros(200, int)).predict(f), 0.0)
    plain = Features(f.best_rank, f.n_top, f.cat_side, f.answer_count, 10)  # the logistic's columns only
    p = BoostedPrior(max_iter=20).fit(plain, y).predict(plain)
    assert p.shape == (200,) and 0 < p.mean() < 1


def test_boosted_plan_is_the_same_bytes_and_its_estimate_refits_the_same_prior(pooled, synth_kg, tmp_path):
    """The sampling stage with the boosted prior: the same seed gives the same plan files, and the estimate step,
    which refits the prior and refuses a plan whose p differs, accepts it."""
    from pathlib import Path

    from helpers import random_scorer, run_engine

    from kgeval.sampling.steps import estimate_step, plan_step
    from kgeval.scores.dumps import save_ranking

    synth_kg.save(tmp_path / "kg.npz")
    dumps = {}
    for i, name in enumerate(["A", "B", "C"]):
        dumps[name] = str(tmp_path / "scores" / name)
        save_ranking(run_engine(synth_kg, pooled[1], random_scorer(synth_kg, seed=10 + i), k=10), dumps[name], {})
    templates = str(Path(__file__).parents[1] / "annotations/templates.tsv")
    files = []
    for run in ("a", "b"):
        out = [str(tmp_path / f"{run}_{f}") for f in ("plan.tsv", "plan.csv", "budgets.csv")]
        plan_step(dumps, str(tmp_path / "kg.npz"), templates, *out, k=5, budget=40, mc_draws=16, seed=4,
                  max_depth=30, prior="boosted")
        files.append([Path(f).read_bytes() for f in out])
    assert files[0] == files[1]
    side = pd.read_csv(tmp_path / "a_plan.csv")
    assert side["p"].between(0, 1).all() and side["p"].nunique() > 1
    with open(tmp_path / "labels.txt", "w") as fh:
        for h, r, t in side.drop_duplicates("item")[["head_id", "relation", "tail_id"]].itertuples(index=False):
            fh.write(f"{h}\t{r}\t{t}\tN\n")
    est = estimate_step(dumps, str(tmp_path / "kg.npz"), str(tmp_path / "a_plan.csv"),
                        str(tmp_path / "a_budgets.csv"), str(tmp_path / "labels.txt"), str(tmp_path / "est.csv"),
                        str(tmp_path / "audit.csv"), k=5, max_depth=30, prior="boosted")
    assert len(est) == 3 and np.isfinite(est["delta"]).all()
