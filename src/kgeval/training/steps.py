"""Workflow steps of the model stage (workflow/rules/training.smk): train one seed, pick the best seed, fetch
and convert a published LibKGE checkpoint."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

from .. import numerics
from ..errors import CorruptFileError
from ..io import atomic_path, read_json, set_aside, sha256_file, sidecar, write_json

# torch, the models and the trainer are imported by the functions that use them: select_model's jobs (one per
# model and dataset) only copy a file, and importing torch would be most of their time (docs/dev/ci.md)

log = logging.getLogger(__name__)

__all__ = ["convert_libkge", "fetch_libkge", "select_best", "train_seed"]  # noqa: F822 (fetch_libkge: __getattr__)


def train_seed(kg_path: str | Path, model_name: str, model_hparams: dict[str, Any], train: dict[str, Any],
               seed: int, out: str | Path, work_dir: str | Path, snapshot_dir: str | Path | None = None,
               device: str | None = "auto") -> dict[str, Any]:
    """Train one seed; resume from the work checkpoint of an interrupted run with the same settings."""
    import torch

    from ..data.kg import KnowledgeGraph
    from ..models.checkpoint import save_checkpoint
    from .config import TrainConfig
    from .trainer import Trainer, model_state

    kg = KnowledgeGraph.load(kg_path)
    cfg = TrainConfig.from_dict(train)
    # the configured count, not Snakemake's (capped by --cores): the thread count changes float summation order
    torch.set_num_threads(cfg.threads)
    if numerics.on():  # the reproducible mode (kgeval.numerics): deterministic kernels where torch has a choice
        numerics.deterministic()
    trainer = Trainer(kg, model_name, model_hparams, cfg, seed=seed, device=device)
    work = Path(work_dir) / f"seed{seed}-{trainer.hash[:12]}.partial.pt"
    work.parent.mkdir(parents=True, exist_ok=True)
    if snapshot_dir is not None:
        Path(snapshot_dir).mkdir(parents=True, exist_ok=True)
    result = trainer.fit(work, snapshot_dir if cfg.snapshots else None)
    summary = {"valid_mrr": result.best_valid_mrr, "best_epoch": result.best_epoch, "epochs": result.epochs,
               "steps": result.steps, "train_seconds": sum(t["seconds"] for t in result.trace),
               "eval_seconds": sum(t.get("eval_seconds", 0.0) for t in result.trace), "device": str(trainer.device),
               "trace": result.trace, "snapshots": result.snapshots}
    save_checkpoint(model_state(model_name, model_hparams, kg, result, trainer.hash, {"seed": seed}), out, summary)
    for path in (work, sidecar(work)):
        path.unlink(missing_ok=True)
    log.info("%s seed %d: best valid MRR %.4f at epoch %d", model_name, seed, result.best_valid_mrr,
             result.best_epoch)
    return summary


def select_best(candidates: list[str], out: str | Path, summary_out: str | Path) -> dict[str, Any]:
    """Keep the seed with the best validation MRR (ties: the first listed); record every seed's result."""
    infos = [read_json(sidecar(c)) for c in candidates]
    for c, info in zip(candidates, infos):
        # verified before the copy: a corrupted seed checkpoint copied into the selection would be set aside
        # there on load, and copied again from here on every rerun
        actual = sha256_file(c)
        if actual != info.get("sha256"):
            problem = f"SHA-256 {actual} differs from {info.get('sha256')} recorded in {sidecar(c).name}"
            aside = set_aside(c, problem)
            set_aside(sidecar(c), "sidecar of a corrupted checkpoint")
            raise CorruptFileError(c, f"{problem}; set aside as {aside.name} (safe to delete), a rerun retrains "
                                      "this seed")
    best = max(range(len(candidates)), key=lambda i: (infos[i]["valid_mrr"], -i))
    with atomic_path(out) as tmp:
        shutil.copyfile(candidates[best], tmp)
    with atomic_path(sidecar(out)) as tmp:
        shutil.copyfile(sidecar(candidates[best]), tmp)
    summary = {"selected_seed": infos[best].get("seed"), "selected_file": Path(candidates[best]).name,
               "valid_mrr": infos[best]["valid_mrr"],
               "seeds": [{"seed": info.get("seed"), "valid_mrr": info["valid_mrr"], "epochs": info.get("epochs"),
                          "train_seconds": info.get("train_seconds"), "eval_seconds": info.get("eval_seconds"),
                          "trace": info.get("trace")} for info in infos]}
    write_json(summary_out, summary)
    log.info("selected %s (valid MRR %.4f) of %d seeds", Path(candidates[best]).name, infos[best]["valid_mrr"],
             len(candidates))
    return summary


def __getattr__(name: str) -> Any:
    """``fetch_libkge``, re-exported for workflow/scripts/fetch_libkge.py, on first use (kgeval.models imports
    torch)."""
    if name == "fetch_libkge":
        from ..models.libkge import fetch_libkge

        return fetch_libkge
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True)


def convert_libkge(path: str | Path, kg_path: str | Path, sha256: str, out: str | Path,
                   entity_ids: str | Path | None = None, relation_ids: str | Path | None = None) -> None:
    """A pinned LibKGE checkpoint → a kgeval checkpoint (``out`` and ``out.json``) that
    :func:`kgeval.models.checkpoint.load_model` loads for the graph saved at ``kg_path``."""
    from ..models.checkpoint import save_checkpoint
    from ..models.libkge import convert_checkpoint

    st, record = convert_checkpoint(path, kg_path, sha256, entity_ids, relation_ids)
    save_checkpoint(st, out, summary=record)
    log.info("converted LibKGE %s (%s, sha256 %s…) to %s", record["libkge_model"], Path(path).name,
             record["source_sha256"][:12], out)
