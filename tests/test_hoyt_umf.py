"""Hoyt et al.'s case study, the null-moment table, Table 3's aggregations and the unified metric framework's
properties (FOTR, size invariance, long-tail districts, the heat maps' colours): hand-computed cases,
Monte-Carlo and PyKEEN agreement, invariants."""

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from kgeval.analysis.case_study import (
    case_study_rows,
    filtered_candidates,
    holder_aggregations,
    null_moments,
    power_mean,
    size_trend,
)
from kgeval.analysis.long_tail import districts, training_frequency
from kgeval.data.kg import KnowledgeGraph
from kgeval.metrics.adjusted import AdjustedMeanRankIndex
from kgeval.metrics.umf_properties import (
    expected_transform,
    fotr,
    limit_expectation,
    power_transform,
    size_invariant_alpha,
)
from kgeval.scores.split_ranks import split_ranks

ROOT = Path(__file__).resolve().parents[1]


def tiny_kg() -> KnowledgeGraph:
    """5 entities, 2 relations; test triple (0, 0, 1) has another known tail (0, 0, 2) in train."""
    splits = {"train": np.array([[0, 0, 2], [1, 1, 3], [3, 0, 4], [2, 1, 0]]),
              "valid": np.array([[4, 1, 0]]),
              "test": np.array([[0, 0, 1], [3, 0, 2], [1, 1, 4]])}
    return KnowledgeGraph("tiny", [f"e{i}" for i in range(5)], ["r0", "r1"], splits)


# ---- size invariance and FOTR -------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0])
def test_expected_transform_is_the_exact_mean_of_f(alpha):
    for n in (1, 2, 3, 7, 50):
        j = np.arange(1, n + 1)
        exact = 1.0 if n == 1 else power_transform(j, alpha, n).mean()
        assert expected_transform(alpha, [n])[0] == pytest.approx(exact, rel=1e-12, abs=1e-14)


def test_expected_transform_agrees_with_monte_carlo_of_uniform_ranks():
    rng = np.random.default_rng(0)
    n = 1000
    r = rng.integers(1, n + 1, 200_000)
    for alpha in (-1.0, 0.0, 0.5):
        mc = power_transform(r, alpha, n)
        assert abs(mc.mean() - expected_transform(alpha, [n])[0]) < 4 * mc.std() / np.sqrt(r.size)


def test_only_alpha_one_is_size_invariant():
    # closed form: E[f_1] = 1 − ((N+1)/2 − 1)/(N − 1) = 1/2 for every N ≥ 2
    assert np.allclose(expected_transform(1.0, [2, 3, 14, 104, 14541, 40943]), 0.5, atol=1e-12)
    for small, large in ((14, 14541), (104, 40943), (5, 1000)):
        assert size_invariant_alpha(small, large) == pytest.approx(1.0, abs=1e-8)
    # every other α moves with N: towards α/(α+1) for α > 0, 0 for α ≤ 0 (the MRR's dependence on N)
    for alpha in (-1.0, 0.0, 0.5, 2.0):
        e = expected_transform(alpha, [14, 14541])
        assert abs(e[0] - e[1]) > 0.02
        assert abs(expected_transform(alpha, [10**6])[0] - limit_expectation(alpha)) < 0.08


def test_fotr_hand_computed_and_affine_invariant():
    # x^−1, k = 10, N = 100: (0.1 − 0.01)/(1 − 0.01)
    assert fotr(-1.0, 10, 100) == pytest.approx(0.09 / 0.99, rel=1e-12)
    # linear f (MR): (100 − 10)/(100 − 1)
    assert fotr(1.0, 10, 100) == pytest.approx(90 / 99, rel=1e-12)
    # the rescaling (x^α − 1)/(1 − N^α) + 1 leaves it unchanged (slides), as does any affine map
    for a in (-2.0, -0.5, 0.7):
        f = np.array([1.0, 10.0, 100.0]) ** a
        direct = (f[1] - f[2]) / (f[0] - f[2])
        assert fotr(a, 10, 100) == pytest.approx(direct, rel=1e-10)
    # bigger α: less focus on top (FOTR increases), step transform: none left below the top
    values = [float(fotr(a, 10, 14541)) for a in (-2, -1, -0.5, 0, 0.5, 1, 2)]
    assert values == sorted(values)
    assert fotr(-np.inf, 10, 100) == 0.0
    with pytest.raises(ValueError):
        fotr(-1.0, 200, 100)


# ---- null moments --------------------------------------------------------------------------------------------
def test_filtered_candidates_hand_computed():
    kg = tiny_kg()
    c = filtered_candidates(kg, "test")
    # tail side: (0,0,?) has answers {2, 1} → N = 5 − 2 + 1 = 4; (3,0,?) {4, 2} → 4; (1,1,?) {3, 4} → 4
    # head side: (?,0,1) {0} → 5; (?,0,2) {0, 3} → 4; (?,1,4) {1} → 5
    assert c[c["side"] == "tail"]["num_candidates"].tolist() == [4, 4, 4]
    assert c[c["side"] == "head"]["num_candidates"].tolist() == [5, 4, 5]


def test_null_moments_closed_forms_monte_carlo_and_pykeen():
    from pykeen.metrics.ranking import ArithmeticMeanRank, HitsAtK, InverseHarmonicMeanRank

    kg = tiny_kg()
    t = null_moments(kg).set_index(["split", "side", "metric"])
    N = np.array([5, 4, 5, 4, 4, 4], dtype=float)  # head then tail of the test split
    # hand: E[MR] = mean (N+1)/2, Var = Σ (N²−1)/12 / n²
    assert t.loc[("test", "both", "mr"), "expectation"] == pytest.approx(np.mean((N + 1) / 2))
    assert t.loc[("test", "both", "mr"), "variance"] == pytest.approx(np.sum((N ** 2 - 1) / 12) / N.size ** 2)
    # PyKEEN's expected-metric functions
    for key, ref in (("mr", ArithmeticMeanRank()), ("mrr", InverseHarmonicMeanRank()), ("hits@3", HitsAtK(3))):
        assert t.loc[("test", "both", key), "expectation"] == pytest.approx(ref.expected_value(N.astype(int)), rel=1e-10)
        assert t.loc[("test", "both", key), "variance"] == pytest.approx(ref.variance(N.astype(int)), rel=1e-10)
    # Monte-Carlo of uniformly random ranks
    rng = np.random.default_rng(1)
    draws = np.ceil(rng.random((100_000, N.size)) * N)
    mrr = (1.0 / draws).mean(1)
    assert abs(mrr.mean() - t.loc[("test", "both", "mrr"), "expectation"]) < 4 * mrr.std() / np.sqrt(len(mrr))
    assert mrr.var() == pytest.approx(t.loc[("test", "both", "mrr"), "variance"], rel=0.02)
    gmr = np.exp(np.log(draws).mean(1))
    assert abs(gmr.mean() - t.loc[("test", "both", "gmr"), "expectation"]) < 4 * gmr.std() / np.sqrt(len(gmr))
    assert gmr.var() == pytest.approx(t.loc[("test", "both", "gmr"), "variance"], rel=0.02)
    # the adjusted MR index has expectation 0 under uniform ranks
    amri = AdjustedMeanRankIndex()
    vals = np.array([amri(d, N) for d in draws[:20_000]])
    assert abs(vals.mean()) < 4 * vals.std() / np.sqrt(len(vals))
    assert amri.expected_value(N) == 0.0


# ---- Table 3's aggregations ------------------------------------------------------------------------------------
def test_power_means_agree_with_scipy():
    x = np.array([1.0, 2.0, 4.0, 10.0, 3.5])
    assert power_mean(x, -1.0) == pytest.approx(stats.hmean(x))
    assert power_mean(x, 0.0) == pytest.approx(stats.gmean(x))
    assert power_mean(x, 2.0) == pytest.approx(stats.pmean(x, 2.0))
    assert power_mean(x, np.inf) == 10.0 and power_mean(x, -np.inf) == 1.0
    rows = holder_aggregations("d", "m", x, np.full(5, 10.0), samples=2000)
    by = {r["aggregation"]: r for r in rows}
    assert [r["value"] for r in rows] == sorted(r["value"] for r in rows)  # M_p increases with p
    assert by["arithmetic"]["random"] == pytest.approx(5.5, abs=0.15)  # E[MR] of U{1..10}


# ---- the case study ------------------------------------------------------------------------------------------
def test_case_study_rows_and_size_trend():
    ranks, N = np.array([1.0, 2.0, 4.0]), np.array([10.0, 10.0, 10.0])
    rows = {r["metric"]: r["value"] for r in case_study_rows("d", 10, "m", ranks, N)}
    assert rows["mr"] == pytest.approx(7 / 3)
    assert rows["amri"] == pytest.approx(1 - (7 / 3 - 1) / (5.5 - 1))
    assert rows["mrr"] == pytest.approx((1 + 0.5 + 0.25) / 3)
    ev = pd.Series({f"micro_{k}": float(i) for i, k in enumerate(rows)})
    assert [r["value"] for r in case_study_rows("d", 10, "m", evaluation_row=ev)] == list(range(len(rows)))
    # a metric that falls with size: τ = −1; MR rising with size is "worse" on larger graphs: τ = −1 as well
    table = pd.DataFrame([{"dataset": d, "entities": n, "model": "m", "metric": k, "base": "x", "family": "y",
                           "value": v} for d, n, k, v in
                          [("a", 14, "mrr", 0.8), ("b", 100, "mrr", 0.5), ("c", 1000, "mrr", 0.3),
                           ("a", 14, "mr", 2.0), ("b", 100, "mr", 20.0), ("c", 1000, "mr", 200.0),
                           ("a", 14, "zmrr", 5.0), ("b", 100, "zmrr", 50.0), ("c", 1000, "zmrr", 500.0)]])
    t = size_trend(table).set_index("metric")["tau_mean"]
    assert t["mrr"] == pytest.approx(-1.0) and t["mr"] == pytest.approx(-1.0) and t["zmrr"] == pytest.approx(1.0)


class _FixedScores(torch.nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = torch.as_tensor(s, dtype=torch.float32)  # (num_entities, num_relations, num_entities)

    def score_questions(self, queries, side):
        if side == 1:
            return self.s[queries[:, 0], queries[:, 1]]
        return self.s[:, queries[:, 1], queries[:, 0]].T


def test_split_ranks_against_brute_force():
    kg = tiny_kg()
    rng = np.random.default_rng(3)
    s = rng.integers(0, 4, (5, 2, 5)).astype(float)  # ties on purpose
    out = split_ranks(_FixedScores(s), kg, "test")
    known = {tuple(t) for t in kg.known()}
    expected = []
    for side in ("head", "tail"):
        for h, r, t in kg.splits["test"]:
            ans = h if side == "head" else t
            cand = [e for e in range(5) if e == ans or ((e, r, t) if side == "head" else (h, r, e)) not in known]
            sc = {e: (s[e, r, t] if side == "head" else s[h, r, e]) for e in cand}
            gt = sum(v > sc[ans] for v in sc.values())
            eq = sum(v == sc[ans] for v in sc.values()) - 1
            expected.append((gt + eq / 2 + 1, len(cand)))
    assert list(zip(out["rank"], out["num_candidates"])) == expected


# ---- long tail -----------------------------------------------------------------------------------------------
def test_districts_hand_computed():
    kg = tiny_kg()
    freq = training_frequency(kg)
    assert freq.tolist() == [2, 1, 2, 2, 1]
    pa = pd.DataFrame({"System": ["A"] * 5, "entity": [0, 1, 2, 3, 4], "micro_mrr": [1.0, 0.5, 0.5, 0.25, 0.2]})
    d = districts(pa, freq, num_districts=2)
    # sorted by frequency (ties by id): 0, 2, 3 | 1, 4 → district 1 mean (1 + .5 + .25)/3, district 2 (.5 + .2)/2
    assert d["classes"].tolist() == [3, 2]
    assert d["mean_mrr"].tolist() == pytest.approx([1.75 / 3, 0.35])
    assert d[["min_frequency", "max_frequency"]].values.tolist() == [[2, 2], [1, 1]]


# ---- the heat maps' colours ------------------------------------------------------------------------------------
def test_heatmap_caption_matches_the_colormap():
    red, _, blue, _ = matplotlib.colormaps["RdBu"](1.0)
    assert blue > red  # RdBu draws τ = +1 blue
    caption = (ROOT / "workflow" / "report" / "umf_heatmap.rst").read_text()
    assert "blue cells (τ near +1)" in caption.lower() or "blue cells (τ near +1)" in caption
    assert "Red cells (τ near 1)" not in caption


# ---- the findings row ------------------------------------------------------------------------------------------
def test_claim_12_hoyt_size_trend():
    from kgeval.analysis import findings as F

    claim = next(c for c in F.CLAIMS if c.claim.startswith("12. "))
    names = {"original": "O", "sample": "S", "complete": "SC"}

    def verdict(mrr, amrr, zmrr):
        t = pd.DataFrame({"metric": ["mrr", "amrr", "zmrr"], "tau_mean": [mrr, amrr, zmrr], "models": [4] * 3})
        return F.findings(F.Outputs(names, hoyt_size_trend=t), [claim]).iloc[0]

    r = verdict(-0.5, -0.4167, 0.6667)
    assert r["ours"] == "τ MRR −0.50, AMRR −0.42, ZMRR 0.67 (4 models, 4 datasets)".replace("−", "-") \
        and r["holds"] == "partly"
    assert verdict(-0.5, 0.0, 0.5)["holds"] == "yes"
    assert verdict(-0.5, -0.5, -0.5)["holds"] == "no"
    assert verdict(0.2, 0.0, 0.5)["holds"] == "no"
    assert F.findings(F.Outputs(names), [claim]).iloc[0]["holds"] == "not measured"


# ---- the steps, end to end on a tiny graph ---------------------------------------------------------------------
def _random_graph(n_ent=30, n_rel=3, n=200, seed=0) -> KnowledgeGraph:
    rng = np.random.default_rng(seed)
    t = np.unique(np.stack([rng.integers(0, n_ent, n), rng.integers(0, n_rel, n), rng.integers(0, n_ent, n)], 1),
                  axis=0)
    t = t[rng.permutation(len(t))]
    k = len(t) // 10
    return KnowledgeGraph("g", [f"e{i}" for i in range(n_ent)], [f"r{i}" for i in range(n_rel)],
                          {"train": t[2 * k:], "valid": t[:k], "test": t[k:2 * k]})


def test_case_study_and_umf_steps_write_every_output(tmp_path):
    from kgeval.analysis.metric_steps import case_study_step, umf_properties_step

    kg = _random_graph()
    kg.save(tmp_path / "kg.npz")
    rng = np.random.default_rng(1)
    ranks = {}
    for model in ("A", "B"):
        r = split_ranks(_FixedScores(rng.random((30, 3, 30))), kg, "test")
        ranks[model] = str(tmp_path / f"{model}.parquet")
        r.to_parquet(ranks[model])
    # the "large" dataset: the same graph read through an evaluation table and a per-answer table
    r = pd.read_parquet(ranks["A"])
    rows = case_study_rows("g", kg.num_entities, "A", r["rank"], r["num_candidates"])
    pd.DataFrame([{"System": "A", **{f"micro_{x['metric']}": x["value"] for x in rows}}]).to_csv(
        tmp_path / "evaluation.csv", index=False)
    pd.DataFrame({"System": "A", "rank": r["rank"], "num_candidates": r["num_candidates"],
                  "entity": np.where(r["side"] == "head", r["head"], r["tail"]),
                  "micro_mrr": 1.0 / r["rank"]}).to_parquet(tmp_path / "per_answer.parquet")
    out, tables = tmp_path / "analysis", tmp_path / "tables"
    case_study_step({"small": {"kg": str(tmp_path / "kg.npz"), "ranks": ranks}},
                    {"T": {"kg": str(tmp_path / "kg.npz"), "evaluation": str(tmp_path / "evaluation.csv"),
                           "per_answer": str(tmp_path / "per_answer.parquet")}}, ["A", "B"], str(out), str(tables))
    wide = pd.read_csv(tables / "hoyt_case_study.csv")
    assert len(wide) == 3  # A and B on the small graph, A (evaluation.csv) on the large one
    small_a = wide[(wide["dataset"] == "small") & (wide["model"] == "A")].iloc[0]
    large_a = wide[(wide["dataset"] == "g") & (wide["model"] == "A")].iloc[0]
    assert small_a.drop(["dataset"]).equals(large_a.drop(["dataset"]))  # both routes agree
    aggs = pd.read_csv(tables / "hoyt_aggregations.csv")
    arith = aggs[(aggs["model"] == "A") & (aggs["aggregation"] == "arithmetic")]["value"].to_numpy()
    assert arith == pytest.approx([small_a["mr"]] * 2)
    assert len(pd.read_csv(tables / "null_moments.csv")) == 2 * 2 * 3 * 7  # 2 graphs, splits, sides, metrics
    for name in ("hoyt_case_study.png", "hoyt_case_study.pdf"):
        assert (out / name).stat().st_size > 0

    umf_properties_step(str(tmp_path / "per_answer.parquet"), str(tmp_path / "kg.npz"), str(out), str(tables),
                        num_districts=3)
    tail = pd.read_csv(tables / "umf_long_tail.csv")
    assert tail["classes"].sum() == pd.read_parquet(tmp_path / "per_answer.parquet")["entity"].nunique()
    size = pd.read_csv(tables / "umf_size_invariance.csv")
    assert np.allclose(size.loc[size["alpha"] == 1.0, "expectation"], 0.5)
    assert (out / "umf_fotr.png").exists() and (out / "umf_size_invariance.png").exists()


# ---- configuration ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("change, message", [
    ({"datasets": ["Atlantis"]}, "config key hoyt/datasets: unknown dataset 'Atlantis'"),
    ({"test_sets": ["FB-Test-S"]}, "config key hoyt/test_sets: 'FB-Test-S' is a sample test set"),
    ({"test_sets": ["nope"]}, "config key hoyt/test_sets: unknown test set 'nope'"),
    ({"models": ["TransE", "PairRE"]}, "config key hoyt/models: 'PairRE' is not a model trained by this run"),
])
def test_bad_hoyt_config_is_one_line_naming_the_key(change, message):
    import yaml

    from kgeval.config.references import check_hoyt
    from kgeval.errors import ConfigError

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    check_hoyt(config)  # the default is valid
    config["hoyt"] = {**config["hoyt"], **change}
    with pytest.raises(ConfigError) as exc:
        check_hoyt(config)
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)


def test_heatmap_marks_sit_where_their_metrics_are():
    from kgeval.analysis.families import UMF_MARKS
    from kgeval.metrics.rank_based import GeometricMeanRank, HarmonicMeanRank, MeanRank, MeanReciprocalRank
    from kgeval.metrics.umf import DEFAULT_ALPHAS, DEFAULT_PS, UnifiedMetric

    ranks = np.array([1.0, 2.0, 7.0, 30.0, 3.0])
    N = np.full(5, 50.0)
    by_label = {"MRR": MeanReciprocalRank(), "MR": MeanRank(), "GMR": GeometricMeanRank(), "HMR": HarmonicMeanRank()}
    assert {label for _, _, label in UMF_MARKS} == set(by_label)
    for alpha, p, label in UMF_MARKS:
        assert alpha in DEFAULT_ALPHAS and p in DEFAULT_PS  # on the heat maps' grid
        umf = UnifiedMetric(alpha=alpha, p=p, weighting="frequency", rescale=False)
        assert umf(ranks, N) == pytest.approx(by_label[label](ranks, N), rel=1e-12)


def test_split_ranks_candidates_match_the_null_table():
    kg = tiny_kg()
    out = split_ranks(_FixedScores(np.zeros((5, 2, 5))), kg, "test")
    assert out["num_candidates"].tolist() == filtered_candidates(kg, "test")["num_candidates"].tolist()
    # all scores tied: the realistic rank is the middle of the candidates
    assert np.allclose(out["rank"], (out["num_candidates"] + 1) / 2)
