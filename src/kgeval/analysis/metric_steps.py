"""Steps of Hoyt et al.'s case study (rule ``hoyt_case_study``) and of the unified metric framework's property
analyses (rule ``umf_properties``)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..io import write_csv, write_table
from ..metrics.umf_properties import expected_transform, fotr, limit_expectation, size_invariant_alpha
from . import metric_figures
from .case_study import (
    CASE_METRICS,
    case_study_rows,
    filtered_candidates,
    holder_aggregations,
    null_moments,
    size_trend,
)
from .long_tail import districts, training_frequency

log = logging.getLogger(__name__)

FOTR_ALPHAS = tuple(np.round(np.arange(-3.0, 2.01, 0.1), 10))
FOTR_KS = (10, 100)
SIZE_ALPHAS = (-np.inf, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)


def _tables(folder, name):
    folder = Path(folder)
    return [folder / f"{name}.{ext}" for ext in ("csv", "md", "tex")]


def case_study_step(small: dict[str, dict], large: dict[str, dict], models: list[str], out_dir: str,
                    tables_dir: str, seed: int = 0) -> None:
    """Figure 1 of Hoyt et al. with its table and size trend, the null moments of every dataset and Table 3's
    aggregations.

    ``small``: dataset → {"kg": kg.npz, "ranks": {model: parquet of ``kgeval.scores.split_ranks``}};
    ``large``: dataset → {"kg", "evaluation" (evaluation.csv), "per_answer" (per_answer.parquet)} of a study
    test set. Models missing from a large dataset's evaluation are left out there."""
    rows, aggs, moments = [], [], []
    for name, files in small.items():
        kg = KnowledgeGraph.load(files["kg"])
        moments.append(null_moments(kg))
        for model in models:
            r = pd.read_parquet(files["ranks"][model])
            rows += case_study_rows(name, kg.num_entities, model, r["rank"], r["num_candidates"])
            aggs += holder_aggregations(name, model, r["rank"], r["num_candidates"], seed=seed)
    for files in large.values():
        kg = KnowledgeGraph.load(files["kg"])
        moments.append(null_moments(kg))
        ev = pd.read_csv(files["evaluation"]).set_index("System")
        pa = pd.read_parquet(files["per_answer"])
        # a reference pack's per-answer table keeps only the headline metrics: the rank is 1/MRR there
        ranks = pa["rank"] if "rank" in pa else 1.0 / pa["micro_mrr"]
        # chance level of the aggregations: every filtered task of the split (random draws need N only)
        cands = filtered_candidates(kg, "test")["num_candidates"]
        for model in models:
            if model not in ev.index:
                continue
            rows += case_study_rows(kg.name, kg.num_entities, model, evaluation_row=ev.loc[model])
            aggs += holder_aggregations(kg.name, model, ranks[(pa["System"] == model).to_numpy()], cands,
                                        seed=seed)
    table = pd.DataFrame(rows)
    out = Path(out_dir)
    write_csv(table, out / "hoyt_case_study.csv")
    wide = table.pivot_table(index=["dataset", "entities", "model"], columns="metric", values="value",
                             sort=False).reset_index().sort_values(["entities", "model"], kind="stable")
    wide = wide[["dataset", "entities", "model"] + [k for k, _, _ in CASE_METRICS]]
    write_table(wide, *_tables(tables_dir, "hoyt_case_study"), caption="Hoyt et al. Figure 1: MR, MRR and "
                "Hits@10 with their chance-adjusted and z-scored forms, per model, datasets by size.",
                label="tab:hoyt-case-study")
    trend = size_trend(table)
    write_table(trend, *_tables(tables_dir, "hoyt_size_trend"), caption="Kendall's τ between the number of "
                "entities and each metric, per model (positive: the model looks better on larger graphs).",
                label="tab:hoyt-size-trend")
    metric_figures.case_study(table, out / "hoyt_case_study.png", out / "hoyt_case_study.pdf")
    write_table(pd.concat(moments, ignore_index=True), *_tables(tables_dir, "null_moments"), digits=6,
                caption="Expectation and variance of each metric under uniformly random ranks, per dataset, "
                "split and side (filtered candidates, exact closed forms).", label="tab:null-moments")
    write_table(pd.DataFrame(aggs), *_tables(tables_dir, "hoyt_aggregations"), caption="Hoyt et al. Table 3: "
                "power-mean aggregations of the ranks, and their mean under random ranks.",
                label="tab:hoyt-aggregations")
    log.info("size trend: %s", trend[["metric", "tau_mean"]].to_dict("records"))


def umf_properties_step(per_answer: str, kg: str, out_dir: str, tables_dir: str, num_districts: int = 10) -> None:
    """FOTR of f_α against α, E[f_α] against the number of candidates, and the long-tail districts of the
    original test set."""
    graph = KnowledgeGraph.load(kg)
    out = Path(out_dir)
    sizes = sorted({14, 104, graph.num_entities, 40943})
    rows = [{"alpha": a, "k": k, "candidates": n, "fotr": float(fotr(a, k, n))}
            for n in (graph.num_entities,) for k in FOTR_KS if k <= n for a in FOTR_ALPHAS]
    fotr_table = pd.DataFrame(rows)
    write_table(fotr_table, *_tables(tables_dir, "umf_fotr"), caption="Focus-on-top rate FOTR_k = (f(k) − f(N)) "
                "/ (f(1) − f(N)) of the rank transform f_α, per α.", label="tab:umf-fotr", digits=6)
    metric_figures.fotr(fotr_table, out / "umf_fotr.png", out / "umf_fotr.pdf")

    grid = np.unique(np.round(np.logspace(np.log10(2), np.log10(50_000), 60)).astype(np.int64))
    candidates = np.unique(np.concatenate([grid, sizes]))
    size_rows = [{"alpha": a, "candidates": int(n), "expectation": float(e), "limit": limit_expectation(a)}
                 for a in SIZE_ALPHAS for n, e in zip(candidates, expected_transform(a, candidates))]
    size_table = pd.DataFrame(size_rows)
    # the case study's extremes (Nations and WN18RR), whatever graph this run has
    invariant = size_invariant_alpha(14, 40943)
    write_table(size_table[size_table["candidates"].isin(sizes)], *_tables(tables_dir, "umf_size_invariance"),
                caption=f"E[f_α] under uniformly random ranks for the datasets' numbers of entities; the α with "
                f"equal E on 14 and 40,943 candidates is {invariant:.6f}.",
                label="tab:umf-size", digits=6)
    write_csv(size_table, out / "umf_size_invariance.csv")
    metric_figures.size_invariance(size_table, out / "umf_size_invariance.png", out / "umf_size_invariance.pdf")

    pa = pd.read_parquet(per_answer, columns=["System", "entity", "micro_mrr"])
    # a small test set (the tiny synthetic run) may have fewer answer entities than districts
    tail = districts(pa, training_frequency(graph), min(num_districts, pa["entity"].nunique()))
    write_table(tail, *_tables(tables_dir, "umf_long_tail"), caption="Mean MRR of the answer-entity classes per "
                "district of equal class count, most frequent classes first.", label="tab:umf-long-tail")
    metric_figures.long_tail(tail, out / "umf_long_tail.png", out / "umf_long_tail.pdf")
    log.info("size-invariant α (14 vs 40,943 candidates): %.6f", invariant)
