"""KP's robustness and ablation studies (kgeval.kp.variants): 1-dimensional diagrams by hand, the exact
Wasserstein distance by hand and against a brute-force matching, Figure 5's mean ± sd over seeds, the steps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from kgeval.kp.correlation import correlate
from kgeval.kp.variants import (
    diagram,
    exact_wasserstein,
    kp_variant,
    one_dim_diagram,
    sample_size_table,
    variant_table,
)


def test_one_dim_diagram_by_hand():
    # square 0-1-2-3 (0.1, 0.2, 0.3, 0.4) and diagonal 0-2 (0.5): the square's cycle is born at 0.4, the diagonal
    # adds a second at 0.5; both triangles enter at 0.5 and fill both: intervals (0.4, 0.5) and (0.5, 0.5)
    u, v = np.array([0, 1, 2, 0, 0]), np.array([1, 2, 3, 3, 2])
    w = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    np.testing.assert_allclose(one_dim_diagram(u, v, w, 0.0), [[0.4, 0.5], [0.5, 0.5]])
    # without the diagonal the cycle is never filled: no finite interval
    assert one_dim_diagram(u[:4], v[:4], w[:4], 0.0).shape == (0, 2)
    # a triangle: its cycle is born and filled by the same edge, a zero-length interval
    np.testing.assert_allclose(one_dim_diagram(np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([0.3, 0.1, 0.2]),
                                               0.0), [[0.3, 0.3]])
    # the superlevel half uses the negated weights: the square then closes at -0.1 and fills at -0.1 ... -0.5
    both = diagram(u, v, w, dimension=1)
    assert len(both) == 4 and both[:2].tolist() == [[0.4, 0.5], [0.5, 0.5]]
    with pytest.raises(ValueError, match="dimension must be 0 or 1"):
        diagram(u, v, w, dimension=2)


def test_exact_wasserstein_by_hand_and_by_brute_force():
    a, b = np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]])
    assert exact_wasserstein(a, b, p=2.0)[0] == pytest.approx(5.0)
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0, 2, (5, 2)), rng.uniform(0, 2, (5, 2))
    # equal sizes and uniform weights: the optimal plan is a permutation (Birkhoff)
    best = min(np.mean(np.sum((x - y[list(perm)]) ** 2, axis=1)) for perm in itertools.permutations(range(5)))
    value, cut = exact_wasserstein(x, y, p=2.0)
    assert value == pytest.approx(math.sqrt(best), rel=1e-9) and not cut
    value, cut = exact_wasserstein(rng.uniform(0, 2, (50, 2)), y, p=2.0, max_points=10)
    assert cut and value > 0
    assert exact_wasserstein(np.zeros((0, 2)), y) == (0.0, False)


def test_kp_variant_sliced_equals_kp_and_distances_are_positive():
    rng = np.random.default_rng(2)
    u, v = rng.integers(0, 40, 120), rng.integers(0, 40, 120)
    keep = u < v
    pos = (u[keep], v[keep], rng.uniform(1, 2, keep.sum()))
    neg = (u[keep], v[keep], rng.uniform(0, 1, keep.sum()))
    sliced = kp_variant(pos, neg, "sliced", 0, seed=3)
    exact = kp_variant(pos, neg, "exact", 0)
    one = kp_variant(pos, neg, "exact", 1)
    assert sliced["value"] > 0 and exact["value"] > 0 and one["points_positive"] > 0
    # the sliced distance never exceeds the exact one (each projection is 1-Lipschitz)
    assert sliced["value"] <= exact["value"] + 1e-9
    with pytest.raises(ValueError, match="unknown diagram distance"):
        kp_variant(pos, neg, "hausdorff")


def test_sample_size_table_mean_and_sd_over_seeds():
    models = ["a", "b", "c", "d"]
    ranking = pd.DataFrame({"micro_mrr": [0.1, 0.2, 0.3, 0.4]}, index=models)
    rows = []
    kp = {(0.5, 0): [1, 2, 3, 4], (0.5, 1): [4, 3, 2, 1], (1.0, 0): [1, 2, 3, 5], (1.0, 1): [1, 2, 4, 3]}
    for (c, s), vals in kp.items():
        rows += [{"model": m, "study": "sample_size", "sample_multiple": c, "seed": s, "value": x}
                 for m, x in zip(models, vals)]
    t = sample_size_table(pd.DataFrame(rows), ranking, ["micro_mrr"], correlate)
    p = t[t["correlation"] == "pearson"].set_index("sample_multiple")
    assert p.loc[0.5, "mean"] == pytest.approx(0.0) and p.loc[0.5, "sd"] == pytest.approx(math.sqrt(2))
    r1 = np.corrcoef([1, 2, 3, 5], [1, 2, 3, 4])[0, 1]
    r2 = np.corrcoef([1, 2, 4, 3], [1, 2, 3, 4])[0, 1]
    assert p.loc[1.0, "mean"] == pytest.approx((r1 + r2) / 2)
    assert p.loc[1.0, "sd"] == pytest.approx(np.std([r1, r2], ddof=1))
    assert p["seeds"].eq(2).all() and p["n_models"].eq(4).all()
    k = t[t["correlation"] == "kendall"].set_index("sample_multiple")
    assert k.loc[1.0, "mean"] == pytest.approx((1.0 + 4 / 6) / 2)

    var = pd.DataFrame([{"model": m, "study": "variant", "distance": d, "dimension": 0, "value": x, "seconds": 1.0,
                         "subsampled": False} for d in ("sliced", "exact") for m, x in zip(models, [1, 2, 3, 4])])
    vt = variant_table(var, ranking, ["micro_mrr"], correlate)
    assert vt["pearson_micro_mrr"].tolist() == pytest.approx([1.0, 1.0]) and vt["n_models"].eq(4).all()


def test_variant_steps_end_to_end(synth_kg, tmp_path):
    import torch

    from kgeval.kp.steps import kp_variants_model_step, kp_variants_table_step
    from kgeval.models import build_model
    from kgeval.models.checkpoint import save_checkpoint

    kg_path = tmp_path / "kg.npz"
    synth_kg.save(kg_path)
    records, ev = {}, []
    for i, name in enumerate(("DistMult", "TransE", "ComplEx")):
        torch.manual_seed(i)
        hp = {"dim": 8}
        m = build_model(name, synth_kg.num_entities, synth_kg.num_relations, **hp)
        path = tmp_path / f"{name}.pt"
        save_checkpoint({"model_name": name, "model_hparams": m.hparams, "state_dict": m.state_dict(),
                         "dataset_fingerprint": synth_kg.fingerprint()}, path)
        records[name] = str(tmp_path / f"{name}.csv")
        d = kp_variants_model_step(str(path), str(kg_path), records[name], name, [0.5, 1.0], [0, 1],
                                   exact_max_points=300, device="cpu")
        assert len(d) == 2 * 2 + 4 and d["value"].ge(0).all()
        ev.append({"System": name, **{f"{a}_{k}": 0.1 * (i + 1) for a in ("micro", "macro")
                                      for k in ("hits@1", "hits@3", "hits@10", "mr", "mrr")}})
    pd.DataFrame(ev).to_csv(tmp_path / "evaluation.csv", index=False)
    size, variants = kp_variants_table_step(records, str(tmp_path / "evaluation.csv"), str(tmp_path / "s.csv"),
                                            str(tmp_path / "s.md"), str(tmp_path / "s.png"), str(tmp_path / "s.pdf"),
                                            str(tmp_path / "v.csv"), str(tmp_path / "v.md"))
    assert set(size["sample_multiple"]) == {0.5, 1.0} and size["seeds"].eq(2).all()
    assert len(variants) == 4 and (tmp_path / "s.png").stat().st_size > 0
