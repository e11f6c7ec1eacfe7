"""Knowledge Persistence's robustness and ablation studies (Bastos et al. 2023): the sample size (Figure 5), the
distance between diagrams and the homology dimension (Table 10 and its persistence variant).

* **Sample size** (Figure 5): KP(test) with ``sample_multiple`` c ∈ a list, for several seeds; the correlation
  with the ranking metrics across models is then taken per (c, seed) and summarised as mean ± standard
  deviation over the seeds (``sample_size_table``).
* **Distance** (Table 10): the sliced Wasserstein distance of KP against the exact Wasserstein distance between
  the two diagrams as uniform point clouds (POT's ``ot.emd2`` on the cost ‖x − y‖₂^p, to the power 1/p). The
  exact problem is |PD+| × |PD−|, about (2|V|)² entries for KP's graphs (6.8 GB for FB15k-237), so each diagram
  is subsampled (seeded, uniformly) to at most ``exact_max_points`` points; the record says when it was.
* **Dimension**: 1-dimensional persistence beside KP's 0-dimensional one: the clique (flag) complex of each
  graph up to triangles (gudhi ``SimplexTree.expansion(2)``: a triangle enters with its last edge), its
  finite 1-dimensional intervals in the sublevel and the superlevel filtration, concatenated as in KP.
  Cycles that no triangle fills never die and are dropped with the other infinite intervals.

Every variant uses KP's own graphs (``persistence.kp_graphs``: the same samples and scores for a seed).
"""

from __future__ import annotations

from typing import Any

import gudhi
import numpy as np
import ot
import pandas as pd

from .persistence import kp_graphs, persistence_diagram, seeds_for, sliced_wasserstein

DISTANCES = ("sliced", "exact")


def one_dim_diagram(u: np.ndarray, v: np.ndarray, w: np.ndarray, vertex_value: float) -> np.ndarray:
    """Finite 1-dimensional intervals of the flag complex of a weighted graph (vertices at ``vertex_value``,
    edges at their weight, triangles at their largest edge), an (n, 2) array."""
    if len(w) == 0:
        return np.zeros((0, 2))
    st = gudhi.SimplexTree()
    vertices = np.unique(np.concatenate([u, v]))
    st.insert_batch(vertices[None, :].astype(np.int32), np.full(len(vertices), float(vertex_value)))
    st.insert_batch(np.stack([u, v]).astype(np.int32), np.asarray(w, dtype=np.float64))
    st.expansion(2)
    st.compute_persistence(homology_coeff_field=2, min_persistence=-1.0)
    d = np.asarray(st.persistence_intervals_in_dimension(1), dtype=np.float64).reshape(-1, 2)
    d = d[np.isfinite(d[:, 1])]
    return d[np.lexsort((d[:, 0], d[:, 1]))]


def diagram(u: np.ndarray, v: np.ndarray, w_norm: np.ndarray, dimension: int = 0) -> np.ndarray:
    """PD(G) in ``dimension`` 0 (KP's) or 1: sublevel then superlevel intervals, weights normalised to [0, 2]."""
    if dimension == 0:
        return persistence_diagram(u, v, w_norm)
    if dimension == 1:
        return np.concatenate([one_dim_diagram(u, v, w_norm, 0.0), one_dim_diagram(u, v, -w_norm, -2.0)])
    raise ValueError(f"persistence dimension must be 0 or 1, got {dimension}")


def exact_wasserstein(pd_a: np.ndarray, pd_b: np.ndarray, p: float = 2.0, max_points: int = 2000,
                      seed: int = 0) -> tuple[float, bool]:
    """(W_p between the diagrams as uniform point clouds, whether a diagram was subsampled); 0 if either is
    empty."""
    if len(pd_a) == 0 or len(pd_b) == 0:
        return 0.0, False
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 10]))
    cut = False
    if len(pd_a) > max_points:
        pd_a, cut = pd_a[rng.choice(len(pd_a), max_points, replace=False)], True
    if len(pd_b) > max_points:
        pd_b, cut = pd_b[rng.choice(len(pd_b), max_points, replace=False)], True
    cost = ot.dist(pd_a, pd_b, metric="euclidean") ** p
    value = ot.emd2(np.full(len(pd_a), 1.0 / len(pd_a)), np.full(len(pd_b), 1.0 / len(pd_b)), cost,
                    numItermax=10_000_000)
    return float(value) ** (1.0 / p), cut


def kp_variant(pos: tuple[np.ndarray, np.ndarray, np.ndarray], neg: tuple[np.ndarray, np.ndarray, np.ndarray],
               distance: str = "sliced", dimension: int = 0, projections: int = 50, seed: int = 0,
               p: float = 2.0, exact_max_points: int = 2000) -> dict[str, Any]:
    """KP between G+ and G− (edge arrays with normalised weights) with the given distance and dimension."""
    if distance not in DISTANCES:
        raise ValueError(f"unknown diagram distance {distance!r}; known: {', '.join(DISTANCES)}")
    pd_pos, pd_neg = diagram(*pos, dimension=dimension), diagram(*neg, dimension=dimension)
    cut = False
    if distance == "sliced":
        value = sliced_wasserstein(pd_pos, pd_neg, projections, seeds_for(seed)[2], p)
    else:
        value, cut = exact_wasserstein(pd_pos, pd_neg, p, exact_max_points, seed)
    return {"value": value, "points_positive": len(pd_pos), "points_negative": len(pd_neg), "subsampled": cut}


def variants_model_step_rows(model: Any, kg: Any, model_name: str, sample_multiples: list[float],
                             seeds: list[int], split: str = "test", projections: int = 50, p: float = 2.0,
                             batch_size: int = 4096, exact_max_points: int = 2000,
                             base_multiple: float = 1.0, base_seed: int = 0) -> list[dict[str, Any]]:
    """The rows of one model: KP(split) for every (sample multiple, seed) of Figure 5, and at the base
    multiple and seed every (distance, dimension) of Table 10."""
    import time

    from .persistence import known_keys

    known = known_keys(kg)
    rows = []
    graphs: dict[tuple[float, int], Any] = {}
    for c in sample_multiples:
        for s in seeds:
            t0 = time.perf_counter()
            graphs[(c, s)] = kp_graphs(model, kg, split, c, s, batch_size, known, model_name)
            r = kp_variant(*graphs[(c, s)], "sliced", 0, projections, s, p)
            rows.append({"model": model_name, "study": "sample_size", "split": split, "sample_multiple": c,
                         "seed": s, "distance": "sliced", "dimension": 0, **r,
                         "seconds": time.perf_counter() - t0})
    base = graphs.get((base_multiple, base_seed)) or kp_graphs(model, kg, split, base_multiple, base_seed,
                                                               batch_size, known, model_name)
    for distance in DISTANCES:
        for dimension in (0, 1):
            t0 = time.perf_counter()
            r = kp_variant(*base, distance, dimension, projections, base_seed, p, exact_max_points)
            rows.append({"model": model_name, "study": "variant", "split": split, "sample_multiple": base_multiple,
                         "seed": base_seed, "distance": distance, "dimension": dimension, **r,
                         "seconds": time.perf_counter() - t0})
    return rows


# ---- across models: Figure 5 and Table 10 ---------------------------------------------------------------------
def _corr_rows(values: pd.DataFrame, metrics: list[str], correlate: Any) -> list[dict[str, Any]]:
    """Pearson and Kendall of ``values["value"]`` with each metric column across the rows (models)."""
    rows = []
    for metric in metrics:
        c = correlate(values["value"], values[metric])
        rows += [{"correlation": k, "metric": metric, "r": c[k]} for k in ("pearson", "kendall")]
    return rows


def sample_size_table(detail: pd.DataFrame, ranking: pd.DataFrame, metrics: list[str], correlate: Any
                      ) -> pd.DataFrame:
    """Figure 5: per sample multiple, the correlation of KP with each metric across models, as mean and standard
    deviation (ddof 1) over the seeds. ``ranking``: one row per model (index = model) with the metric columns."""
    d = detail[detail["study"] == "sample_size"]
    per_seed = []
    for (c, seed), g in d.groupby(["sample_multiple", "seed"], sort=True):
        v = g.set_index("model")[["value"]].join(ranking[metrics], how="inner")
        per_seed += [{"sample_multiple": c, "seed": seed, "n_models": len(v), **r}
                     for r in _corr_rows(v, metrics, correlate)]
    per = pd.DataFrame(per_seed)
    if per.empty:
        return per
    out = (per.groupby(["sample_multiple", "correlation", "metric"], sort=False)
           .agg(mean=("r", "mean"), sd=("r", lambda x: float(np.std(x, ddof=1)) if len(x) > 1 else np.nan),
                seeds=("r", "size"), n_models=("n_models", "min")).reset_index())
    return out.sort_values(["correlation", "metric", "sample_multiple"], kind="stable").reset_index(drop=True)


def variant_table(detail: pd.DataFrame, ranking: pd.DataFrame, metrics: list[str], correlate: Any) -> pd.DataFrame:
    """Table 10 and the dimension ablation: per (distance, dimension), the correlation of KP with each metric
    across models and the median seconds of one KP computation."""
    d = detail[detail["study"] == "variant"]
    rows = []
    for (distance, dim), g in d.groupby(["distance", "dimension"], sort=False):
        v = g.set_index("model")[["value"]].join(ranking[metrics], how="inner")
        row = {"distance": distance, "dimension": int(dim), "n_models": len(v),
               "median_seconds": float(g["seconds"].median()), "subsampled": bool(g["subsampled"].any())}
        for r in _corr_rows(v, metrics, correlate):
            row[f"{r['correlation']}_{r['metric']}"] = r["r"]
        rows.append(row)
    return pd.DataFrame(rows)


def plot_sample_size(table: pd.DataFrame, png: str, pdf: str, metrics: list[str], title: str = "") -> None:
    """Mean ± sd over seeds of the Pearson correlation of KP with each metric against the sample multiple."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io import atomic_path

    fig, ax = plt.subplots(figsize=(6.4, 4.2), constrained_layout=True)
    t = table[table["correlation"] == "pearson"] if len(table) else table
    for metric in metrics:
        g = t[t["metric"] == metric] if len(t) else t
        if len(g):
            ax.errorbar(g["sample_multiple"], g["mean"], yerr=g["sd"].fillna(0.0), marker="o", capsize=3,
                        label=metric)
    ax.set_xscale("log")
    ax.axhline(0.0, color="grey", linewidth=0.6)
    ax.set_xlabel("sampled triples per entity (sample_multiple c)")
    ax.set_ylabel("Pearson r of KP(test) with the metric (mean ± sd over seeds)")
    ax.set_ylim(-1.05, 1.05)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    for path, fmt in ((png, "png"), (pdf, "pdf")):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=150)
    plt.close(fig)
