"""Knowledge Persistence: diagrams (Kruskal by hand), the distance, the metric on synthetic scorers, edge
cases, the carbon helpers, and the workflow steps end to end on a tiny trained model."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from kgeval.data.kg import KnowledgeGraph
from kgeval.errors import ConfigError, ScoreError
from kgeval.kp.persistence import (
    KPError,
    average_vector_length,
    build_graph,
    conicity,
    corrupt,
    knowledge_persistence,
    known_keys,
    normalise_jointly,
    persistence_diagram,
    sliced_wasserstein,
    triple_keys,
    zero_dim_diagram,
)

SCHEMA = Path(__file__).resolve().parents[1] / "config" / "schema.yaml"

torch.set_num_threads(1)


class ToyScorer(torch.nn.Module):
    """score = strength · [triple is known] + deterministic noise of the triple (a model whose separation of
    true from false triples grows with ``strength``)."""

    def __init__(self, kg: KnowledgeGraph, strength: float, noise: float = 1.0):
        super().__init__()
        self.known = torch.as_tensor(known_keys(kg))
        self.E, self.R = kg.num_entities, kg.num_relations
        self.strength, self.noise = strength, noise

    def score_spo(self, s, p, o):
        key = (s * self.R + p) * self.E + o
        true = torch.isin(key, self.known).double()
        u = torch.frac(torch.sin(key.double() * 12.9898) * 43758.5453)  # a hash of the triple in [0, 1)
        return self.strength * true + self.noise * u


class ConstantScorer(torch.nn.Module):
    def __init__(self, value: float):
        super().__init__()
        self.value = value

    def score_spo(self, s, p, o):
        return torch.full((len(s),), self.value, dtype=torch.float64)


# ---- diagrams ----------------------------------------------------------------------------------------------------
# two components: {0, 1, 2, 3, 4} and {5, 6}
U = np.array([0, 1, 0, 2, 3, 1, 5])
V = np.array([1, 2, 2, 3, 4, 4, 6])
W = np.array([0.5, 0.2, 0.9, 1.4, 0.7, 1.8, 1.0])


def test_sublevel_diagram_is_kruskal_by_hand():
    # Kruskal, increasing weights: 0.2 {1,2}, 0.5 {0,1}, 0.7 {3,4}, 0.9 cycle, 1.0 {5,6}, 1.4 {2,3}, 1.8 cycle
    d = zero_dim_diagram(U, V, W, 0.0)
    np.testing.assert_allclose(d, [[0, 0.2], [0, 0.5], [0, 0.7], [0, 1.0], [0, 1.4]])


def test_superlevel_diagram_is_maximum_spanning_forest_by_hand():
    # decreasing weights: 1.8 {1,4}, 1.4 {2,3}, 1.0 {5,6}, 0.9 {0,2}, 0.7 joins {1,4} and {0,2,3}, 0.5/0.2 cycles
    d = zero_dim_diagram(U, V, -W, -2.0)
    np.testing.assert_allclose(d, [[-2, -1.8], [-2, -1.4], [-2, -1.0], [-2, -0.9], [-2, -0.7]])
    pd_ = persistence_diagram(U, V, W)
    assert pd_.shape == (10, 2)  # sublevel then superlevel; the two infinite intervals are dropped


def test_zero_length_interval_is_kept():
    d = zero_dim_diagram(np.array([0, 1]), np.array([1, 2]), np.array([0.0, 2.0]), 0.0)
    np.testing.assert_allclose(d, [[0, 0], [0, 2]])


def test_diagram_matches_minimum_spanning_tree_on_a_random_graph():
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree

    rng = np.random.default_rng(3)
    u, v = rng.integers(0, 60, 300), rng.integers(0, 60, 300)
    u, v, w = build_graph(np.stack([u, np.zeros_like(u), v], 1), rng.uniform(0.01, 2, 300))
    mst = minimum_spanning_tree(coo_matrix((w, (u, v)), shape=(60, 60))).data
    np.testing.assert_allclose(np.sort(zero_dim_diagram(u, v, w, 0.0)[:, 1]), np.sort(mst))


def test_graph_is_undirected_keeps_best_score_and_drops_self_loops():
    triples = np.array([[0, 0, 1], [1, 1, 0], [2, 0, 2], [1, 0, 3]])
    u, v, w = build_graph(triples, np.array([0.1, 0.7, 5.0, 0.3]))
    assert u.tolist() == [0, 1] and v.tolist() == [1, 3]
    np.testing.assert_allclose(w, [0.7, 0.3])


def test_joint_normalisation_and_its_guard():
    a, b, m, M = normalise_jointly(np.array([1.0, 3.0]), np.array([2.0, 5.0]))
    np.testing.assert_allclose(np.concatenate([a, b]), [0, 1, 0.5, 2])
    assert (m, M) == (1.0, 5.0)
    a, b, _, _ = normalise_jointly(np.array([4.0]), np.array([4.0, 4.0]))  # M = m: no division by zero
    assert np.all(a == 0) and np.all(b == 0)


# ---- distance ---------------------------------------------------------------------------------------------------
def test_sliced_wasserstein_identity_symmetry_and_empty():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0, 2, (40, 2)), rng.uniform(0, 1, (25, 2))
    assert sliced_wasserstein(a, a, 50, seed=7) == pytest.approx(0.0, abs=1e-12)
    d_ab = sliced_wasserstein(a, b, 50, seed=7)
    assert d_ab > 0
    assert d_ab == pytest.approx(sliced_wasserstein(b, a, 50, seed=7), rel=1e-12)
    assert sliced_wasserstein(a, np.zeros((0, 2)), 50, seed=7) == 0.0


# ---- the metric ----------------------------------------------------------------------------------------------------
def test_better_separation_gives_higher_kp(synth_kg):
    values = [knowledge_persistence(ToyScorer(synth_kg, s), synth_kg, "test", seed=0).value
              for s in (0.0, 0.5, 1.0, 3.0)]
    assert values == sorted(values) and values[-1] > 3 * values[0], values


def test_reproducible_for_a_fixed_seed(synth_kg):
    model = ToyScorer(synth_kg, 1.0)
    a = knowledge_persistence(model, synth_kg, "train", sample_multiple=0.5, seed=11)
    b = knowledge_persistence(model, synth_kg, "train", sample_multiple=0.5, seed=11)
    c = knowledge_persistence(model, synth_kg, "train", sample_multiple=0.5, seed=12)
    assert a.value == b.value and a.params == b.params
    assert c.value != a.value
    assert set(a.seconds) == {"sampling", "scoring", "diagrams", "distance", "total"}
    assert a.n_positive == a.n_requested == round(0.5 * synth_kg.num_entities)


def test_negatives_are_never_known_triples(synth_kg):
    known = known_keys(synth_kg)
    pos = synth_kg.splits["train"]
    neg = corrupt(pos, synth_kg.num_entities, synth_kg.num_relations, known, np.random.default_rng(0))
    assert not np.isin(triple_keys(neg, synth_kg.num_entities, synth_kg.num_relations), known).any()
    assert np.array_equal(neg[:, 1], pos[:, 1])  # the relation is kept
    changed = (neg[:, 0] != pos[:, 0]).astype(int) + (neg[:, 2] != pos[:, 2]).astype(int)
    assert np.all(changed == 1)  # exactly one side corrupted, and each negative corrupts its own positive


def test_fewer_triples_than_requested_uses_the_split_whole(synth_kg):
    r = knowledge_persistence(ToyScorer(synth_kg, 1.0), synth_kg, "valid", sample_multiple=50.0)
    assert r.n_positive == len(synth_kg.splits["valid"]) < r.n_requested


def test_all_equal_scores_give_zero(synth_kg):
    r = knowledge_persistence(ConstantScorer(3.0), synth_kg, "test")
    assert r.value == 0.0 and r.degenerate == "all scores equal"


def test_nan_scores_are_an_error_naming_the_model(synth_kg):
    with pytest.raises(ScoreError, match="BrokenModel"):
        knowledge_persistence(ConstantScorer(float("nan")), synth_kg, "test", model_name="BrokenModel")


def _kg(train, test, n=6):
    return KnowledgeGraph("edge", [f"e{i}" for i in range(n)], ["r"],
                          {"train": np.array(train, np.int64).reshape(-1, 3), "valid": np.zeros((0, 3), np.int64),
                           "test": np.array(test, np.int64).reshape(-1, 3)})


def test_empty_split_is_an_error():
    kg = _kg([[0, 0, 1]], [])
    with pytest.raises(KPError, match="no triples"):
        knowledge_persistence(ConstantScorer(1.0), kg, "test")


def test_graph_without_edges_gives_zero():
    kg = _kg([[0, 0, 1]], [[2, 0, 2], [3, 0, 3]])  # every test triple is a self-loop: G+ has no edge
    r = knowledge_persistence(ToyScorer(kg, 1.0), kg, "test")
    assert r.value == 0.0 and r.degenerate == "empty diagram" and r.n_edges_positive == 0


def test_uncorruptible_triples_are_an_error():
    full = [[h, 0, t] for h in range(2) for t in range(2)]
    kg = _kg(full[:3], full[3:], n=2)
    with pytest.raises(KPError, match="could not be corrupted"):
        knowledge_persistence(ToyScorer(kg, 1.0), kg, "test", max_rounds=5)


def test_geometric_baselines_by_hand():
    e = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert conicity(e) == pytest.approx(np.sqrt(0.5))
    assert average_vector_length(e) == pytest.approx(1.0)
    assert average_vector_length(np.array([[3.0, 4.0], [0.0, 0.0]])) == pytest.approx(2.5)


# ---- carbon ----------------------------------------------------------------------------------------------------------
def test_energy_formula():
    from kgeval.kp.carbon import co2e_g, energy_kwh

    assert energy_kwh(250.0, 3600.0) == pytest.approx(0.25)
    assert energy_kwh(250.0, 3600.0, pue=1.5) == pytest.approx(0.375)
    assert co2e_g(0.25, 475.0) == pytest.approx(118.75)


def test_codecarbon_offline_never_touches_the_network(monkeypatch):
    from kgeval.kp.carbon import EnergyMeter

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    with EnergyMeter("test", "DEU", measure_power_secs=1.0) as meter:
        sum(i * i for i in range(200_000))
    r = meter.result
    assert r.energy_kwh > 0 and r.seconds > 0 and r.country_iso_code == "DEU"
    assert "CPU:" in r.method and "RAM:" in r.method and "GPU:" in r.method
    assert r.intensity_g_per_kwh == pytest.approx(r.emissions_kg * 1000 / r.energy_kwh)


def test_unknown_country_is_an_error():
    from kgeval.kp.carbon import EnergyMeter

    with pytest.raises(ValueError, match="XYZ"), EnergyMeter("test", "XYZ"):
        pass


# ---- workflow configuration and steps ------------------------------------------------------------------------------
def _config(**kp):
    """A configuration whose kp block holds ``kp`` with the schema's defaults (as validation leaves it)."""
    from kgeval.config import section_defaults

    return {"datasets": {"D": {}, "E": {}},
            "test_sets": {"D-O": {"dataset": "D", "kind": "full"}, "E-S": {"dataset": "E", "kind": "sample"}},
            "models": {"A": {"train": {"snapshots": True}}, "B": {"train": {}},
                       "C": {"source": "libkge", "train": {"snapshots": True}}},
            "kp": section_defaults(SCHEMA, "kp", kp)}


def test_workflow_configuration():
    from kgeval.kp.persistence import STEPS
    from kgeval.kp.settings import (
        kp_datasets,
        kp_early_stopping_models,
        kp_params,
        kp_settings,
        kp_timing_models,
    )
    from kgeval.kp.steps import KP_STEPS

    assert KP_STEPS == STEPS

    cfg = _config(projection={"power_w": 300.0})
    assert kp_settings(cfg)["projection"]["power_w"] == 300.0 and kp_settings(cfg)["projection"]["epochs"] == 100
    assert kp_params(cfg) == {"sample_multiple": 1.0, "projections": 50, "seed": 0, "p": 2.0, "batch_size": 4096}
    assert kp_datasets(cfg) == ["D"]  # E has no full test set
    assert kp_early_stopping_models(cfg, "D") == ["A"]  # C is not trained here
    with pytest.raises(ValueError, match="B"):
        kp_early_stopping_models(_config(early_stopping_models=["A", "B"]), "D")
    with pytest.raises(ValueError, match="no test set of kind full"):
        kp_datasets(_config(datasets=["E"]))
    # the timing study: every model, or the listed ones in the run's order; an unknown name is an error naming it
    assert kp_timing_models(cfg) == ["A", "B", "C"]
    assert kp_timing_models(_config(timing_models=["C", "A"])) == ["A", "C"]
    with pytest.raises(ValueError, match="config kp.timing_models: Z not among"):
        kp_timing_models(_config(timing_models=["A", "Z"]))
    # defaults live only in the schema: a block that validation has not filled is refused, naming the key
    with pytest.raises(ConfigError, match="config key kp: read before validation"):
        kp_settings({"kp": {"projections": 10}})


def test_early_stopping_needs_snapshots(tmp_path):
    from kgeval.io import write_json
    from kgeval.kp.steps import early_stopping_model_step

    (tmp_path / "seed3.pt").write_bytes(b"")
    write_json(tmp_path / "seed3.pt.json", {"snapshots": [], "trace": []})
    write_json(tmp_path / "selection.json", {"selected_seed": 3})
    with pytest.raises(ValueError, match="train.snapshots: true for TransE"):
        early_stopping_model_step(str(tmp_path / "selection.json"), [str(tmp_path / "seed3.pt")], "unused",
                                  str(tmp_path), str(tmp_path / "out.csv"), "TransE")
    write_json(tmp_path / "selection.json", {"selected_seed": 4})
    with pytest.raises(FileNotFoundError, match="seed4.pt"):
        early_stopping_model_step(str(tmp_path / "selection.json"), [str(tmp_path / "seed3.pt")], "unused",
                                  str(tmp_path), str(tmp_path / "out.csv"), "TransE")


# ---- workflow steps, end to end ----------------------------------------------------------------------------------------
def test_steps_end_to_end(synth_kg, tmp_path):
    from kgeval.io import read_json, write_json
    from kgeval.kp.correlation import correlate
    from kgeval.kp.steps import (
        carbon_step,
        correlations_step,
        early_stopping_model_step,
        early_stopping_table_step,
        kp_model_step,
        timing_step,
        timing_table_step,
    )
    from kgeval.training.steps import select_best, train_seed

    kg_path = tmp_path / "kg.npz"
    synth_kg.save(kg_path)
    train = {"regime": "1vsAll", "lr": 0.02, "batch_size": 256, "max_epochs": 6, "eval_every": 2, "snapshots": True}
    models, records, timings = {}, {}, {}
    for name in ("DistMult", "TransE"):
        ck = tmp_path / "models" / name / "seed0.pt"
        train_seed(kg_path, name, {"dim": 16}, train, 0, ck, tmp_path / "work", tmp_path / "snap" / name / "seed0",
                   device="cpu")
        models[name] = tmp_path / "results" / name / "model.pt"
        select_best([str(ck)], models[name], tmp_path / "results" / name / "selection.json")
        records[name] = tmp_path / "kp" / f"{name}.json"
        rec = kp_model_step(str(models[name]), str(kg_path), str(records[name]), name, sample_multiple=1.0,
                            device="cpu", graph_kernel={"kernel": "shortest_path", "edges": 40, "runs": 2,
                                                        "bins": 10})
        assert rec["kp_test"] > 0 and rec["kp_train"] > 0 and np.isfinite(rec["conicity"])
        assert 0 < rec["gk_test"] <= np.sqrt(2) and 0 < rec["gk_train"] <= np.sqrt(2)
        assert set(rec["seconds"]["test"]) == {"sampling", "scoring", "diagrams", "distance", "total"}
        timings[name] = tmp_path / "kp" / "timing" / f"{name}.json"
        t = timing_step(str(models[name]), str(models[name]) + ".json", str(kg_path), str(timings[name]), name,
                        repeats=2, min_seconds=0.2, device="cpu")
        assert t["kp"]["value"]["test"] == rec["kp_test"]  # same seed, same value
        assert t["speedup"] > 0 and t["energy"]["ranking"]["energy_kwh"] > 0 and t["kp"]["repeats"] >= 2

    # a third, fake model so that the correlation table has three points
    fake = read_json(records["DistMult"])
    fake.update(kp_test=0.0, kp_train=0.0, conicity=0.1, avl=1.0, gk_test=0.0, gk_train=0.0)
    records["Fake"] = tmp_path / "kp" / "Fake.json"
    write_json(records["Fake"], fake)
    ev = pd.DataFrame({"System": ["DistMult", "TransE", "Fake"]})
    for avg in ("micro", "macro"):
        for m in ("hits@1", "hits@3", "hits@10", "mrr"):
            ev[f"{avg}_{m}"] = [0.3, 0.2, 0.01]
        ev[f"{avg}_mr"] = [10.0, 20.0, 100.0]
    ev["micro_umf_a-1_p1_uniform"] = [0.1, 0.3, 0.2]  # a stratified metric (Table 6)
    ev.to_csv(tmp_path / "evaluation.csv", index=False)
    df = correlations_step({k: str(v) for k, v in records.items()}, str(tmp_path / "evaluation.csv"),
                           str(tmp_path / "corr.csv"), str(tmp_path / "corr.md"), str(tmp_path / "values.csv"))
    assert len(df) == 18 and {"micro_mrr", "macro_mr", "n_models", "micro_umf_a-1_p1_uniform"} <= set(df.columns)
    kp_strat = df[(df["measure"] == "KP(test)") & (df["correlation"] == "kendall")]["micro_umf_a-1_p1_uniform"]
    kp_vals = [read_json(records[m])["kp_test"] for m in ("DistMult", "TransE", "Fake")]
    assert kp_strat.iloc[0] == pytest.approx(correlate(kp_vals, [0.1, 0.3, 0.2])["kendall"])
    gk = df[(df["measure"] == "GK(test)") & (df["correlation"] == "pearson")].iloc[0]
    assert gk["n_models"] == 3 and gk["micro_mrr"] == pytest.approx(correlate(
        [read_json(records[m])["gk_test"] for m in ("DistMult", "TransE", "Fake")], [0.3, 0.2, 0.01])["pearson"])

    es = {}
    for name in ("DistMult", "TransE"):
        es[name] = tmp_path / "es" / f"{name}.csv"
        d = early_stopping_model_step(str(tmp_path / "results" / name / "selection.json"),
                                      [str(tmp_path / "models" / name / "seed0.pt")], str(kg_path),
                                      str(tmp_path / "snap" / name), str(es[name]), name, device="cpu")
        assert d["epoch"].tolist() == [2, 4, 6] and d["kp_valid"].gt(0).all() and d["test_mrr"].gt(0).all()
        assert d[["test_hits@1", "test_hits@10"]].ge(0).all().all() and (d["test_hits@1"] <= d["test_hits@10"]).all()
    table = early_stopping_table_step({k: str(v) for k, v in es.items()}, str(tmp_path / "es.csv"),
                                      str(tmp_path / "es.md"), str(tmp_path / "es_ck.csv"),
                                      str(tmp_path / "range.csv"), str(tmp_path / "range.md"))
    # 2 models × 2 KP splits × (valid MRR, test MRR, Hits@1, Hits@10)
    assert len(table) == 2 * 2 * 4 and table["checkpoints"].eq(3).all()
    detail = pd.read_csv(tmp_path / "es_ck.csv")
    h1 = table[(table["model"] == "TransE") & (table["kp"] == "KP(test)") & (table["metric"] == "test_hits@1")]
    t = detail[detail["model"] == "TransE"]
    best = t["test_hits@1"].max()
    assert h1["relative_error"].iloc[0] == pytest.approx(abs(best - t.loc[t["kp_test"].idxmax(), "test_hits@1"]) / best)
    rng = pd.read_csv(tmp_path / "range.csv")
    pooled = rng[(rng["points"] == "all checkpoints") & (rng["kp"] == "KP(test)") & (rng["metric"] == "test_mrr")]
    assert pooled["n"].iloc[0] == 6 and pooled["models"].iloc[0] == 2
    assert pooled["pearson"].iloc[0] == pytest.approx(np.corrcoef(detail["kp_test"], detail["test_mrr"])[0, 1])
    assert pooled["metric_min"].iloc[0] == detail["test_mrr"].min()
    sel = rng[(rng["points"] == "selected")]
    assert sel["n"].eq(2).all() and sel["pearson"].isna().all()  # two points: undefined

    tt = timing_table_step({k: str(v) for k, v in timings.items()}, str(tmp_path / "t.csv"), str(tmp_path / "t.md"))
    shares = tt[[c for c in tt.columns if c.endswith("_share")]].sum(axis=1)
    np.testing.assert_allclose(shares, 1.0, rtol=1e-9)
    carbon = carbon_step({k: str(v) for k, v in timings.items()}, str(tmp_path / "c.csv"), str(tmp_path / "c.md"),
                         str(tmp_path / "c.png"), str(tmp_path / "c.pdf"))
    assert len(carbon) == 4 and carbon["total_co2e_g"].gt(0).all()
    assert (tmp_path / "c.png").stat().st_size > 0 and (tmp_path / "c.pdf").stat().st_size > 0

    assert correlate([1, 2, 3, 4], [2, 4, 6, 9]) == pytest.approx({"pearson": 0.99438, "spearman": 1.0,
                                                                  "kendall": 1.0}, abs=1e-4)
    assert np.isnan(correlate([1, 2], [1, 2])["pearson"])
