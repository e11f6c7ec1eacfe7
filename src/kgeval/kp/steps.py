"""Steps of the Knowledge Persistence stage (Bastos et al., 2023): KP of every model, its correlation with the
ranking metrics across models (Table 2), with validation MRR across training checkpoints (Table 3), the time
of ranking vs KP evaluation (Table 5) and the carbon footprint of both protocols (Figure 4).

One function per rule; ``kgeval.kp.persistence`` holds the metric, ``kgeval.kp.carbon`` the energy measurement,
``kgeval.kp.correlation`` the correlations and ``kgeval.kp.settings`` the configuration the rules read.
"""

from __future__ import annotations

import logging
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..io import atomic_open, read_json, sha256_file, to_markdown, write_csv, write_json, write_table
from .correlation import CORRELATIONS, MEASURES, RANKING_METRICS, correlate, stratified_metrics

log = logging.getLogger(__name__)

KP_STEPS = ("sampling", "scoring", "diagrams", "distance")  # kgeval.kp.persistence.STEPS (not imported: gudhi, POT, torch)


def _kp_kwargs(sample_multiple: float, projections: int, seed: int, p: float, batch_size: int) -> dict[str, Any]:
    return {"sample_multiple": sample_multiple, "projections": projections, "seed": seed, "p": p,
            "batch_size": batch_size}


def _software() -> dict[str, str]:
    import gudhi
    import ot
    import torch

    return {"gudhi": gudhi.__version__, "pot": ot.__version__, "torch": torch.__version__}


# ---- KP(test), KP(train) and the geometric baselines of one model ---------------------------------------------------
def kp_model_step(model_path: str, kg_path: str, out: str, model_name: str, splits: list[str] | None = None,
                  sample_multiple: float = 1.0, projections: int = 50, seed: int = 0, p: float = 2.0,
                  batch_size: int = 4096, device: str | None = "auto",
                  graph_kernel: dict[str, Any] | None = None) -> dict[str, Any]:
    """KP of one trained model on each split (test and train), conicity and AVL, and with ``graph_kernel``
    (kp.graph_kernel: kernel, edges, runs, bins) the graph-kernel baseline GK of each split → JSON."""
    from ..data.kg import KnowledgeGraph
    from ..models.checkpoint import load_model, resolve_device
    from .kernel import graph_kernel_distance
    from .persistence import geometry_baselines, knowledge_persistence, known_keys, kp_graphs

    kg = KnowledgeGraph.load(kg_path)
    dev = resolve_device(device)
    model = load_model(model_path, kg, device=dev)
    known = known_keys(kg)
    results = {}
    for split in splits or ["test", "train"]:
        results[split] = knowledge_persistence(model, kg, split, known=known, model_name=model_name,
                                               **_kp_kwargs(sample_multiple, projections, seed, p, batch_size))
    geometry = geometry_baselines(model)
    gk: dict[str, float] = {}
    gk_seconds: dict[str, float] = {}
    if graph_kernel:
        for split in results:
            t0 = time.perf_counter()
            pos, neg = kp_graphs(model, kg, split, sample_multiple, seed, batch_size, known, model_name)
            gk[f"gk_{split}"] = graph_kernel_distance(pos, neg, seed=seed, **graph_kernel)
            gk_seconds[split] = time.perf_counter() - t0
    record = {"model": model_name, "dataset": kg.name, "device": str(dev), "model_sha256": sha256_file(model_path),
              "parameters": {**_kp_kwargs(sample_multiple, projections, seed, p, batch_size)},
              "graph_kernel": graph_kernel or None, "gk_seconds": gk_seconds,
              "seed": seed, "software": _software(), **geometry, **gk,
              **{f"kp_{s}": r.value for s, r in results.items()},
              "kp": {s: r.to_dict() for s, r in results.items()},
              "seconds": {s: r.seconds for s, r in results.items()}}
    write_json(out, record)
    return record


# ---- Table 2: correlation across models ---------------------------------------------------------------------------
def correlations_step(kp_records: dict[str, str], evaluation_csv: str, out_csv: str, out_md: str,
                      out_values: str, dataset: str = "") -> pd.DataFrame:
    """Pearson/Spearman/Kendall of KP(test), KP(train), conicity, AVL and GK with the ranking metrics of the test
    set (micro and macro MRR, MR, Hits@1/3/10) across the models: the paper's Table 2 (and 7, 8); and with the
    stratified (unified, entity-weighted) metrics the table carries: the paper's Table 6."""
    ev = pd.read_csv(evaluation_csv).set_index("System")
    missing = [m for m in kp_records if m not in ev.index]
    if missing:
        raise KeyError(f"{evaluation_csv}: no row for model(s) {', '.join(missing)}")
    absent = [c for c in RANKING_METRICS if c not in ev.columns]
    if absent:
        raise KeyError(f"{evaluation_csv}: missing column(s) {', '.join(absent)}")
    # the paper's Table 6: the stratified metrics, here the unified metrics weighted over answer entities that
    # every evaluation table carries (kgeval.metrics.umf: uniform = β 1, frequency = β 0)
    metrics = RANKING_METRICS + stratified_metrics(ev.columns)
    rows = []
    for model, path in kp_records.items():
        rec = read_json(path)
        rows.append({"System": model, **{col: rec.get(key, np.nan) for col, key in MEASURES.items()},
                     **{m: float(ev.loc[model, m]) for m in metrics}})
    values = pd.DataFrame(rows)
    table = []
    for corr in CORRELATIONS:
        for measure in MEASURES:
            row = {"correlation": corr, "measure": measure,
                   "n_models": int(np.isfinite(values[measure].to_numpy(float)).sum())}
            for metric in metrics:
                row[metric] = correlate(values[measure], values[metric])[corr]
            table.append(row)
    df = pd.DataFrame(table)
    write_csv(values, out_values)
    write_csv(df, out_csv)
    with atomic_open(out_md) as fh:
        fh.write(f"Correlation of KP and the geometric baselines with the ranking metrics across "
                 f"{len(values)} models{' on ' + dataset if dataset else ''} (paper's Table 2 layout; "
                 "higher is better for all metrics but MR).\n\n")
        fh.write(to_markdown(df, 3))
        fh.write("\nPer-model values:\n\n")
        fh.write(to_markdown(values, 4))
    log.info("correlations over %d models:\n%s", len(values), df.to_string())
    return df


# ---- Table 3: early stopping ----------------------------------------------------------------------------------------
def _selected_seed_checkpoint(selection: str, seed_models: list[str]) -> tuple[int, Path]:
    sel = read_json(selection)
    seed = sel.get("selected_seed")
    if seed is None:
        raise KeyError(f"{selection}: no selected_seed")
    for path in seed_models:
        if Path(path).name == f"seed{seed}.pt":
            return int(seed), Path(path)
    raise FileNotFoundError(f"{selection} selects seed {seed}, but its checkpoint seed{seed}.pt is not among "
                            f"{[Path(p).name for p in seed_models]}")


def early_stopping_model_step(selection: str, seed_models: list[str], kg_path: str, snapshot_root: str,
                              out: str, model_name: str, splits: list[str] | None = None,
                              test_mrr: bool = True, sample_multiple: float = 1.0, projections: int = 50,
                              seed: int = 0, p: float = 2.0, batch_size: int = 4096,
                              memory_budget_mb: float = 1024, device: str | None = "auto",
                              compile: bool = False) -> pd.DataFrame:
    """KP at every evaluation checkpoint of the selected seed, beside the validation MRR recorded in its
    trace (and, with ``test_mrr``, the filtered test MRR, Hits@1 and Hits@10 of the checkpoint) → one row per
    checkpoint."""
    from ..data.kg import KnowledgeGraph
    from ..models.checkpoint import load_model, resolve_device, sidecar
    from ..training.trainer import ranking_inputs, ranking_of
    from .persistence import knowledge_persistence, known_keys

    train_seed, checkpoint = _selected_seed_checkpoint(selection, seed_models)
    info = read_json(sidecar(checkpoint))
    snaps = info.get("snapshots") or []
    if not snaps:
        raise ValueError(f"{model_name}: seed {train_seed} ({checkpoint}) was trained without snapshots; set "
                         f"train.snapshots: true for {model_name} to study early stopping")
    folder = Path(snapshot_root) / f"seed{train_seed}"
    kg = KnowledgeGraph.load(kg_path)
    dev = resolve_device(device)
    known = known_keys(kg)
    rows = []
    test_inputs = ranking_inputs(kg, "test") if test_mrr else None  # one filter index for every checkpoint
    for snap in sorted(snaps, key=lambda s: s["epoch"]):
        path = folder / snap["path"]
        if not path.is_file():
            raise FileNotFoundError(f"{path}: snapshot of epoch {snap['epoch']} listed in {sidecar(checkpoint)} "
                                    "is missing (retrain the seed)")
        model = load_model(path, kg, device=dev, compile_distances=compile)
        row = {"model": model_name, "train_seed": train_seed, "epoch": int(snap["epoch"]),
               "valid_mrr": float(snap["valid_mrr"])}
        if test_mrr:  # the paper's Table 4 metrics, from one ranking of the test split
            ranking = ranking_of(model, test_inputs, memory_budget_mb=memory_budget_mb)
            row.update({f"test_{k}": ranking[k] for k in ("mrr", "hits@1", "hits@10")})
        for split in splits or ["valid", "test"]:
            r = knowledge_persistence(model, kg, split, known=known, model_name=f"{model_name}@{snap['epoch']}",
                                      **_kp_kwargs(sample_multiple, projections, seed, p, batch_size))
            row[f"kp_{split}"] = r.value
            row[f"kp_{split}_seconds"] = r.seconds["total"]
        rows.append(row)
        log.info("%s epoch %d: %s", model_name, snap["epoch"], row)
    df = pd.DataFrame(rows)
    write_csv(df, out)
    return df


ES_METRICS = ("valid_mrr", "test_mrr", "test_hits@1", "test_hits@10")  # Table 3 correlates MRR; Table 4 all three


def early_stopping_table_step(per_model: dict[str, str], out_csv: str, out_md: str,
                              out_checkpoints: str, out_range: str | None = None,
                              out_range_md: str | None = None) -> pd.DataFrame:
    """Correlation of KP with MRR, Hits@1 and Hits@10 across each model's checkpoints (paper's Table 3), the
    relative error of stopping at the checkpoint with the best KP instead of the best metric (paper's Table 4),
    and with ``out_range`` the correlation over every checkpoint of every model pooled (``model_range_table``)."""
    frames = [pd.read_csv(path) for path in per_model.values()]
    detail = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    kp_cols = [c for c in detail.columns if c.startswith("kp_") and not c.endswith("_seconds")]
    mrr_cols = [c for c in ES_METRICS if c in detail.columns]
    rows = []
    for model, g in detail.groupby("model", sort=False):
        for kp in kp_cols:
            for mrr in mrr_cols:
                c = correlate(g[kp], g[mrr])
                best_kp = g.loc[g[kp].idxmax()]
                best = float(g[mrr].max())
                rows.append({"model": model, "kp": kp.replace("kp_", "KP(") + ")", "metric": mrr,
                             "checkpoints": len(g), **c,
                             "epoch_best_kp": int(best_kp["epoch"]),
                             "epoch_best_metric": int(g.loc[g[mrr].idxmax(), "epoch"]),
                             "relative_error": abs(best - float(best_kp[mrr])) / best if best else np.nan})
    df = pd.DataFrame(rows)
    write_csv(detail, out_checkpoints)
    write_table(df, out_csv, out_md, digits=3,
                caption="Correlation of KP with MRR, Hits@1 and Hits@10 across the evaluation checkpoints of one "
                        "training run per model (paper's Table 3 layout; r Pearson, ρ Spearman, τ Kendall); "
                        "relative_error: relative loss of the metric when stopping at the checkpoint with the best "
                        "KP (paper's Table 4).")
    if out_range:
        write_table(model_range_table(detail), out_range, out_range_md, digits=3,
                    caption="Does KP track the ranking metrics once their range is wide? Correlation of KP with "
                            "the test metrics over the selected checkpoint of each model (a narrow range: the "
                            "across-models question of Table 2) and over every checkpoint of every model pooled "
                            "(under-trained checkpoints widen the range); metric_min/max give the range.")
    return df


def model_range_table(detail: pd.DataFrame) -> pd.DataFrame:
    """KP against the test metrics over two point sets of the early-stopping checkpoints: ``selected`` (each
    model's checkpoint with the best validation MRR: one point per model, the models' own narrow range) and
    ``all checkpoints`` (every checkpoint of every model, untrained to trained: a wide range)."""
    kp_cols = [c for c in detail.columns if c.startswith("kp_") and not c.endswith("_seconds")]
    metrics = [c for c in ES_METRICS if c.startswith("test_") and c in detail.columns]
    if detail.empty or not metrics:
        return pd.DataFrame()
    selected = detail.loc[detail.groupby("model", sort=False)["valid_mrr"].idxmax()]
    rows = []
    for scope, points in (("selected", selected), ("all checkpoints", detail)):
        for kp in kp_cols:
            for metric in metrics:
                rows.append({"points": scope, "kp": kp.replace("kp_", "KP(") + ")", "metric": metric,
                             "n": len(points), "models": points["model"].nunique(),
                             "metric_min": float(points[metric].min()), "metric_max": float(points[metric].max()),
                             **correlate(points[kp], points[metric])})
    return pd.DataFrame(rows)


# ---- Table 5 and Figure 4: timing and energy -------------------------------------------------------------------
def _n_evals(info: dict[str, Any]) -> int:
    return sum(1 for t in info.get("trace") or [] if "valid_mrr" in t)


def timing_step(model_path: str, info_path: str, kg_path: str, out: str, model_name: str,
                splits: list[str] | None = None, repeats: int = 3, min_seconds: float = 5.0,
                max_repeats: int = 1000, sample_multiple: float = 1.0, projections: int = 50, seed: int = 0,
                p: float = 2.0, batch_size: int = 4096, memory_budget_mb: float = 1024,
                country_iso_code: str = "USA", measure_power_secs: float = 1.0,
                device: str | None = "auto", compile: bool = False) -> dict[str, Any]:
    """In one process, on one device: the full filtered ranking evaluation (k = 0) of each split, then KP of
    each split, each protocol inside its own codecarbon tracker → JSON.

    codecarbon samples power every ``measure_power_secs`` and cannot resolve a block much shorter than that, so
    each protocol is repeated until it has run ``min_seconds`` (ranking at least once, KP at least ``repeats``
    times, at most ``max_repeats``); times are medians over the repeats (KP: the run with the median total, so its steps add up) and
    energies are per repeat.
    """
    import torch

    from ..data.kg import TAIL, KnowledgeGraph
    from ..models.checkpoint import load_model, resolve_device
    from ..training.trainer import evaluate_mrr
    from .carbon import EnergyMeter
    from .persistence import knowledge_persistence

    splits = splits or ["valid", "test"]
    kg = KnowledgeGraph.load(kg_path)
    dev = resolve_device(device)
    model = load_model(model_path, kg, device=dev, compile_distances=compile)
    info = read_json(info_path)
    kw = _kp_kwargs(sample_multiple, projections, seed, p, batch_size)

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    # warm-up outside the measurements: lazy initialisation, first kernels, imports, codecarbon's hardware probe
    with torch.no_grad():
        model.score_questions(torch.as_tensor(kg.splits["test"][:8, :2], device=dev), TAIL)
    knowledge_persistence(model, kg, splits[0], **{**kw, "sample_multiple": min(sample_multiple, 0.01)})
    with EnergyMeter("warm-up", country_iso_code, measure_power_secs):
        pass

    rank_runs: dict[str, list[float]] = {s: [] for s in splits}
    rank_mrr = {}
    with EnergyMeter(f"{model_name}-ranking", country_iso_code, measure_power_secs) as rank_meter:
        start = time.perf_counter()
        while not rank_runs[splits[0]] or (time.perf_counter() - start < min_seconds
                                           and len(rank_runs[splits[0]]) < max_repeats):
            for split in splits:
                t0 = time.perf_counter()
                rank_mrr[split] = evaluate_mrr(model, kg, split, None, memory_budget_mb=memory_budget_mb)
                sync()
                rank_runs[split].append(time.perf_counter() - t0)
    kp_runs: dict[str, list[dict[str, float]]] = {s: [] for s in splits}
    values = {}
    with EnergyMeter(f"{model_name}-kp", country_iso_code, measure_power_secs) as kp_meter:
        start = time.perf_counter()
        while len(kp_runs[splits[0]]) < repeats or (time.perf_counter() - start < min_seconds
                                                    and len(kp_runs[splits[0]]) < max_repeats):
            for split in splits:
                r = knowledge_persistence(model, kg, split, model_name=model_name, **kw)
                sync()
                kp_runs[split].append(r.seconds)
                values[split] = r.value
    rank_seconds = {s: statistics.median(rank_runs[s]) for s in splits}
    # per split, the steps of the run with the median total time (so that the steps add up to the total)
    kp_steps = {s: dict(sorted(kp_runs[s], key=lambda run: run["total"])[(len(kp_runs[s]) - 1) // 2])
                for s in splits}
    record = {
        "model": model_name, "dataset": kg.name, "device": str(dev), "threads": torch.get_num_threads(),
        "ranking": {"seconds": rank_seconds, "total_seconds": sum(rank_seconds.values()), "micro_mrr": rank_mrr,
                    "k": 0, "repeats": len(rank_runs[splits[0]])},
        "kp": {"seconds": {s: kp_steps[s]["total"] for s in splits}, "steps": kp_steps,
               "total_seconds": sum(kp_steps[s]["total"] for s in splits), "value": values,
               "repeats": len(kp_runs[splits[0]]), "parameters": kw},
        "energy": {"ranking": rank_meter.result.to_dict(), "kp": kp_meter.result.to_dict()},
        "train": {"train_seconds": info.get("train_seconds"), "eval_seconds": info.get("eval_seconds"),
                  "epochs": info.get("epochs"), "n_evals": _n_evals(info), "device": info.get("device")},
        "software": _software(),
    }
    record["speedup"] = record["ranking"]["total_seconds"] / record["kp"]["total_seconds"]
    log.info("%s: ranking %.3f s (%d runs), KP %.4f s (%d runs), speed-up %.1fx", model_name,
             record["ranking"]["total_seconds"], record["ranking"]["repeats"], record["kp"]["total_seconds"],
             record["kp"]["repeats"], record["speedup"])
    write_json(out, record)
    return record


def timing_table_step(timings: dict[str, str], out_csv: str, out_md: str) -> pd.DataFrame:
    """Evaluation time (validation + test) with full ranking and with KP, the speed-up and each KP step's share
    of the KP time (paper's Table 5 layout)."""
    order = {"train": 0, "valid": 1, "test": 2}
    rows = []
    for model, path in timings.items():
        t = read_json(path)
        splits = sorted(t["kp"]["seconds"], key=lambda s: order.get(s, 3))
        steps = {k: sum(t["kp"]["steps"][s][k] for s in splits) for k in KP_STEPS}
        kp_total = t["kp"]["total_seconds"]
        rows.append({"model": model, "device": t["device"],
                     **{f"ranking_{s}_seconds": t["ranking"]["seconds"][s] for s in splits},
                     "ranking_seconds": t["ranking"]["total_seconds"],
                     **{f"kp_{s}_seconds": t["kp"]["seconds"][s] for s in splits},
                     "kp_seconds": kp_total, "speedup": t["ranking"]["total_seconds"] / kp_total,
                     **{f"kp_{k}_share": steps[k] / kp_total for k in KP_STEPS}})
    df = pd.DataFrame(rows)
    write_table(df, out_csv, out_md, digits=3,
                caption="Evaluation time (validation + test) with the full filtered ranking and with Knowledge "
                        "Persistence, measured in the same process on the same device (paper's Table 5 layout); "
                        "speed-up = ranking / KP; kp_*_share = each KP step's share of the KP time.")
    return df


def carbon_step(timings: dict[str, str], out_csv: str, out_md: str, out_png: str, out_pdf: str,
                gpu: str = "NVIDIA Tesla P100 PCIe 16 GB", power_w: float = 250.0, pue: float = 1.0,
                intensity_g_per_kwh: float = 475.0, epochs: int = 100, eval_every: int = 5,
                dataset: str = "") -> pd.DataFrame:
    """Energy and CO₂e of training + evaluation with each protocol, measured and projected (``kgeval.kp.carbon``),
    as a table and a figure."""
    from .carbon import ProjectionAssumptions, carbon_table, plot_carbon

    a = ProjectionAssumptions(gpu=gpu, power_w=power_w, pue=pue, intensity_g_per_kwh=intensity_g_per_kwh,
                              epochs=epochs, eval_every=eval_every)
    df = carbon_table({m: read_json(p) for m, p in timings.items()}, a)
    write_csv(df, out_csv)
    with atomic_open(out_md) as fh:
        methods = sorted(set(df["method"])) if len(df) else []
        fh.write(f"Carbon footprint of training + evaluation per protocol{' on ' + dataset if dataset else ''}. "
                 f"codecarbon measurement method: {'; '.join(methods)}. Projection: {a.gpu} at {a.power_w} W, "
                 f"PUE {a.pue}, {a.intensity_g_per_kwh} gCO2e/kWh, {a.epochs} epochs, {a.n_evals} evaluations."
                 "\n\n")
        cols = ["model", "protocol", "train_kwh", "eval_kwh", "total_kwh", "total_co2e_g", "proj_total_co2e_g"]
        fh.write(to_markdown(df[cols] if len(df) else df, 6))
    plot_carbon(df, out_png, out_pdf, title=f"Carbon footprint, ranking vs KP{' — ' + dataset if dataset else ''}")
    return df


# ---- Figure 5 and Table 10: sample size, distance and dimension (kgeval.kp.variants) ---------------------------
def kp_variants_model_step(model_path: str, kg_path: str, out: str, model_name: str,
                           sample_multiples: list[float], seeds: list[int], split: str = "test",
                           exact_max_points: int = 2000, sample_multiple: float = 1.0, projections: int = 50,
                           seed: int = 0, p: float = 2.0, batch_size: int = 4096,
                           device: str | None = "auto") -> pd.DataFrame:
    """KP of one model for every sample multiple and seed (Figure 5) and every distance and dimension at the
    configured multiple and seed (Table 10) → CSV."""
    from ..data.kg import KnowledgeGraph
    from ..models.checkpoint import load_model, resolve_device
    from .variants import variants_model_step_rows

    kg = KnowledgeGraph.load(kg_path)
    model = load_model(model_path, kg, device=resolve_device(device))
    rows = variants_model_step_rows(model, kg, model_name, list(sample_multiples), list(seeds), split,
                                    projections, p, batch_size, exact_max_points, sample_multiple, seed)
    df = pd.DataFrame(rows)
    write_csv(df, out)
    return df


def kp_variants_table_step(records: dict[str, str], evaluation_csv: str, out_sample_csv: str, out_sample_md: str,
                           out_png: str, out_pdf: str, out_variants_csv: str, out_variants_md: str,
                           dataset: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 5 (correlation with the ranking metrics against the sample multiple, mean ± sd over seeds) and
    Table 10 (sliced vs exact Wasserstein, 0- vs 1-dimensional persistence) across the models."""
    from .variants import plot_sample_size, sample_size_table, variant_table

    ev = pd.read_csv(evaluation_csv).set_index("System")
    detail = pd.concat([pd.read_csv(p) for p in records.values()], ignore_index=True)
    missing = sorted(set(detail["model"]) - set(ev.index))
    if missing:
        raise KeyError(f"{evaluation_csv}: no row for model(s) {', '.join(missing)}")
    micro = [m for m in RANKING_METRICS if m.startswith("micro_")]
    size = sample_size_table(detail, ev, micro, correlate)
    variants = variant_table(detail, ev, micro, correlate)
    on = f" on {dataset}" if dataset else ""
    write_table(size, out_sample_csv, out_sample_md, digits=3,
                caption=f"Correlation of KP(test) with the micro ranking metrics across {detail['model'].nunique()} "
                        f"models{on} as the sampled fraction varies (paper's Figure 5): mean and sd over seeds.")
    write_table(variants, out_variants_csv, out_variants_md, digits=3,
                caption=f"KP variants{on} (paper's Table 10 and the persistence dimension): correlation with the "
                        "micro ranking metrics across models for the sliced and the exact Wasserstein distance and "
                        "0- and 1-dimensional persistence; median_seconds per KP computation.")
    plot_sample_size(size, out_png, out_pdf, ["micro_mrr", "micro_hits@1", "micro_hits@10", "micro_mr"],
                     title=f"KP(test) vs sample size{on}")
    return size, variants
