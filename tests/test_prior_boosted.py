"""The boosted relevance prior (issue 50 §2): graph evidence counted by hand on a tiny graph, the AUC and ECE
helpers against scikit-learn and the textbook formula, calibration on held-out folds and determinism."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from kgeval.data.kg import HEAD, TAIL, KnowledgeGraph
from kgeval.judgments.graph_features import (
    FUSION_COLUMNS,
    GRAPH_COLUMNS,
    fusion_scores,
    graph_counts,
    item_graph_features,
    neighbourhood_scores,
    reciprocal_ranks,
    type_match,
)
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
    # by hand from TRAIN's undirected neighbours 0:{1,2} 1:{0,3,4} 2:{0} 3:{1} 4:{1}: only item 3 (known 0,
    # candidate 4) has a common neighbour, 1, of degree 3; the questions' own training answers are (0, r0, ·) 2,
    # (·, r0, 1) 2, (·, r1, 0) 1 and (0, r1, ·) 0; the (relation, side) slots: 0 {r0 head, r1 tail}, 1 and 2
    # {r0 tail, r1 head}, 3 {r0 head}, 4 {r1 tail}, so r0's tails (1, 2) sum to {r0 tail: 2, r1 head: 2} (item 1's
    # candidate 1: cosine 1) and r0's heads (0, 3) to {r0 head: 2, r1 tail: 1} (item 2's candidate 3: 2/√5); each
    # item is its question's only one
    fused = np.array([4 / 3, 0.5, 0.1, 0.25])
    want = np.column_stack([np.log1p(EXPECTED[:, 0]), EXPECTED[:, 1], np.log1p(EXPECTED[:, 2]),
                            np.log1p([0, 0, 1, 0]), [0, 0, 1 / np.log(3), 0], np.log1p([2, 2, 1, 0]),
                            [1, 2 / np.sqrt(5), 0, 0],
                            [1, 0, 0, 0.25], [1 / 3, 0.5, 0.1, 0], fused, np.ones(4), np.ones(4), np.ones(4)])
    assert got.shape[1] == len(GRAPH_COLUMNS) + ranks.shape[0] + len(FUSION_COLUMNS)
    np.testing.assert_allclose(got, want)


def test_neighbourhood_scores_agree_with_networkx():
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(11)
    train = np.column_stack([rng.integers(0, 40, 300), rng.integers(0, 3, 300), rng.integers(0, 40, 300)])
    g = nx.Graph()
    g.add_nodes_from(range(40))
    g.add_edges_from((h, t) for h, t in train[:, [0, 2]] if h != t)  # networkx skips the self-loops' pairs below
    pairs = [(a, b) for a, b in rng.integers(0, 40, (200, 2)) if a != b]
    k, c = map(np.array, zip(*pairs, strict=True))
    got = neighbourhood_scores(train[train[:, 0] != train[:, 2]], 40, k, c)
    np.testing.assert_array_equal(got[:, 0], [len(list(nx.common_neighbors(g, a, b))) for a, b in pairs])
    aa = {(a, b): v for a, b, v in nx.adamic_adar_index(g, pairs)}
    np.testing.assert_allclose(got[:, 1], [aa[p] for p in pairs], rtol=1e-12)


def test_type_match_agrees_with_a_dense_cosine():
    rng = np.random.default_rng(4)
    E, R = 30, 4
    train = np.column_stack([rng.integers(0, E, 120), rng.integers(0, R, 120), rng.integers(0, E, 120)])
    inc = np.zeros((E, 2 * R))
    inc[train[:, 0], 2 * train[:, 1] + HEAD] = 1
    inc[train[:, 2], 2 * train[:, 1] + TAIL] = 1
    r, s, c = rng.integers(0, R, 50), rng.integers(0, 2, 50), rng.integers(0, E + 5, 50) % E
    slot = 2 * r + np.where(s == HEAD, HEAD, TAIL)
    profile = inc.T @ inc  # row j: the slots of slot j's fillers, summed
    want = [inc[ci] @ profile[j] / (np.linalg.norm(inc[ci]) * np.linalg.norm(profile[j]))
            if inc[ci].any() and profile[j].any() else 0.0 for ci, j in zip(c, slot, strict=True)]
    np.testing.assert_allclose(type_match(train, E, R, r, s, c), want, rtol=1e-12)


def test_fusion_scores_within_each_question_by_hand():
    rr = np.array([[1, 0.5], [0.5, 0], [0, 0], [0.25, 0.25]])
    # question 7 holds items 0, 1, 3 (fused 1.5, 0.5, 0.5: top 1.5, total 2.5); question 3 item 2 alone (all 0)
    want = [[1.5, 1, 0.6, 3], [0.5, 1 / 3, 0.2, 3], [0, 0, 0, 1], [0.5, 1 / 3, 0.2, 3]]
    np.testing.assert_allclose(fusion_scores(rr, np.array([7, 7, 3, 7])), want)


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
