"""A LibKGE checkpoint as a kgeval model: one conversion function per LibKGE model type.

Every converter takes the checkpoint's embedding tables (already L_p-normalised where LibKGE normalises) and
returns the kgeval model's hyperparameters and state entries; rows are then permuted into the knowledge graph's
order and the result is loaded into kgeval's own model, which checks shapes and completeness. How each LibKGE
layout maps onto kgeval's models is written out in docs/dev/libkge.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...data.kg import KnowledgeGraph
from ...errors import ChecksumError, CorruptFileError
from ...io import set_aside
from .. import build_model
from ..base import KGEModel
from .errors import LibKGEError
from .ids import libkge_order, permutation, read_ids
from .state import dropout, embedder_keys, find, model_state, norm_option, normalize, option
from .unpickle import LibKGEConfig, _check_sha, read_libkge_checkpoint

SOURCE = "libkge"

# LibKGE model type -> kgeval model name
LIBKGE_MODELS = {"rescal": "RESCAL", "transe": "TransE", "distmult": "DistMult", "complex": "ComplEx",
                 "conve": "ConvE", "rotate": "RotatE"}
RECIPROCAL_WRAPPERS = ("reciprocal_relations_model", "inverse_relations_model")


@dataclass
class Tables:
    """What a converter reads: the model type, its configuration key, the embedding tables and the state."""

    lib_model: str
    key: str  # the model's configuration key (``<wrapper>.base_model`` for a reciprocal model)
    reciprocal: bool
    cfg: LibKGEConfig
    state: dict[str, torch.Tensor]
    path: Path
    entity: torch.Tensor
    relation: torch.Tensor

    @property
    def dim(self) -> int:
        return int(self.entity.shape[1])

    def dropout(self, which: str) -> float:
        return dropout(self.cfg, f"{self.key}.{which}_embedder.dropout")


Converted = tuple[dict[str, Any], dict[str, torch.Tensor]]  # (hyperparameters, state entries)


def _bilinear(t: Tables) -> Converted:
    """DistMult, ComplEx ([re ‖ im]) and RESCAL (relation rows are d×d matrices flattened row-major): copied."""
    d = t.dim
    want = d * d if t.lib_model == "rescal" else d
    if t.relation.shape[1] != want:
        raise CorruptFileError(t.path, f"LibKGE {t.lib_model}: relation width {t.relation.shape[1]}, expected "
                                       f"{want} for entity width {d}")
    if t.lib_model == "complex" and d % 2:
        raise CorruptFileError(t.path, f"LibKGE complex: odd entity width {d}")
    hparams = {"dim": d, "entity_dropout": t.dropout("entity"), "relation_dropout": t.dropout("relation")}
    return hparams, {"entity.weight": t.entity, "relation.weight": t.relation}


def _transe(t: Tables) -> Converted:
    """TransE: LibKGE's score is −‖s + p − o‖ with no margin (gamma 0), its ``l_norm`` kgeval's ``norm``."""
    if t.relation.shape[1] != t.dim:
        raise CorruptFileError(t.path, f"LibKGE transe: relation width {t.relation.shape[1]} != entity width "
                                       f"{t.dim}")
    hparams = {"dim": t.dim, "norm": norm_option(t.cfg, t.key, t.path), "gamma": 0.0,
               "entity_dropout": t.dropout("entity"), "relation_dropout": t.dropout("relation")}
    return hparams, {"entity.weight": t.entity, "relation.weight": t.relation}


def _rotate(t: Tables) -> Converted:
    """RotatE: entities [re ‖ im] (2k columns), relations k phases in radians."""
    d = t.dim
    if d % 2 or t.relation.shape[1] != d // 2:
        raise CorruptFileError(t.path, f"LibKGE rotate: entity width {d} must be even and twice the relation "
                                       f"width {t.relation.shape[1]}")
    hparams = {"dim": d // 2, "gamma": 0.0, "norm": norm_option(t.cfg, t.key, t.path), "phase_scale": 1.0}
    return hparams, {"entity.weight": t.entity, "relation.weight": t.relation}


def _conve(t: Tables) -> Converted:
    """ConvE (reciprocal only): column 0 of the entity table is the object bias, of the relation table unused;
    the scorer's convolution, projection and batch norms map onto kgeval's ConvE."""
    if not t.reciprocal:
        raise LibKGEError(f"{t.path}: LibKGE ConvE without reciprocal relations is not supported "
                          "(kgeval's ConvE answers head questions through reciprocal relations)")
    d, rd = t.dim - 1, int(t.relation.shape[1]) - 1
    if rd != d:
        raise CorruptFileError(t.path, f"LibKGE conve: relation width {rd + 1} != entity width {d + 1}")
    out = {"entity_bias": t.entity[:, 0], "entity.weight": t.entity[:, 1:], "relation.weight": t.relation[:, 1:]}
    hparams = _conve_scorer(t, d, out)
    hparams["input_dropout"] = t.dropout("entity")
    return hparams, out


def _conve_scorer(t: Tables, d: int, out: dict[str, torch.Tensor]) -> dict[str, Any]:
    """ConvE's scorer weights into ``out`` (kgeval names); returns its hyperparameters."""
    state, path, cfg, key = t.state, t.path, t.cfg, t.key
    prefixes = ["_base_model._scorer.", "_scorer."]
    prefix = next((p for p in prefixes if f"{p}convolution.weight" in state), None)
    if prefix is None:
        raise CorruptFileError(path, "LibKGE conve: no _scorer.convolution.weight in the state_dict")

    def get(name: str, required: bool = True) -> torch.Tensor | None:
        return find(state, [prefix + name], path, required)

    conv_w = get("convolution.weight")
    assert conv_w is not None
    if conv_w.dim() != 4 or conv_w.shape[1] != 1 or conv_w.shape[2] != conv_w.shape[3]:
        raise CorruptFileError(path, f"LibKGE conve: unexpected convolution weight shape {tuple(conv_w.shape)}")
    filters, kernel = int(conv_w.shape[0]), int(conv_w.shape[2])
    stride = int(option(cfg, f"{key}.stride", 1))
    if stride != 1:
        raise LibKGEError(f"{path}: LibKGE conve stride {stride} is not supported (kgeval's ConvE uses stride 1)")
    padding = int(option(cfg, f"{key}.padding", 0))
    aspect = float(option(cfg, f"{key}.2D_aspect_ratio", 2))
    k_h = int(math.sqrt(d / aspect))  # LibKGE: emb_height = sqrt(d / ratio), views with int(emb_height)
    k_w = int(k_h * aspect)
    if k_h <= 0 or k_h * k_w != d:
        raise LibKGEError(f"{path}: LibKGE conve: 2D_aspect_ratio {aspect} gives no integer image for dim {d}")
    proj_w, proj_b = get("projection.weight"), get("projection.bias")
    assert proj_w is not None and proj_b is not None
    fc_in = filters * (2 * k_h + 2 * padding - kernel + 1) * (k_w + 2 * padding - kernel + 1)
    if tuple(proj_w.shape) != (d, fc_in):
        raise CorruptFileError(path, f"LibKGE conve: projection weight {tuple(proj_w.shape)}, expected {(d, fc_in)} "
                                     f"for a {k_h}×{k_w} image, {filters} filters {kernel}×{kernel}, padding "
                                     f"{padding}")
    conv_b = get("convolution.bias", required=False)
    out["conv.weight"], out["fc.weight"], out["fc.bias"] = conv_w, proj_w, proj_b
    if conv_b is not None:
        out["conv.bias"] = conv_b
    for bn, width in (("bn1", filters), ("bn2", d)):
        mean, var = get(f"{bn}.running_mean"), get(f"{bn}.running_var")
        tracked = get(f"{bn}.num_batches_tracked", required=False)
        if get(f"{bn}.weight", required=False) is not None:
            raise CorruptFileError(path, f"LibKGE conve: {bn} has affine weights (LibKGE's have none)")
        out[f"{bn}.running_mean"], out[f"{bn}.running_var"] = mean, var  # type: ignore[assignment]
        out[f"{bn}.weight"], out[f"{bn}.bias"] = torch.ones(width), torch.zeros(width)
        out[f"{bn}.num_batches_tracked"] = (tracked.to(torch.long) if tracked is not None
                                            else torch.tensor(0, dtype=torch.long))
    return {"dim": d, "k_h": k_h, "filters": filters, "kernel_size": kernel, "padding": padding,
            "conv_bias": conv_b is not None, "input_batch_norm": False,
            "feature_map_dropout": dropout(cfg, f"{key}.feature_map_dropout"),
            "hidden_dropout": dropout(cfg, f"{key}.projection_dropout")}


CONVERTERS: dict[str, Callable[[Tables], Converted]] = {
    "distmult": _bilinear, "complex": _bilinear, "rescal": _bilinear,
    "transe": _transe, "rotate": _rotate, "conve": _conve,
}
assert set(CONVERTERS) == set(LIBKGE_MODELS)


def _detect(cfg: LibKGEConfig, path: Path) -> tuple[str, str, bool]:
    """(LibKGE model type, its configuration key, reciprocal)."""
    try:
        model = cfg.get("model")
    except KeyError:
        raise CorruptFileError(path, "LibKGE config has no 'model' option") from None
    reciprocal = model in RECIPROCAL_WRAPPERS
    key = model
    if reciprocal:
        key = f"{model}.base_model"
        try:
            model = cfg.get_default(f"{key}.type")
        except KeyError:
            raise CorruptFileError(path, f"LibKGE config has no {key}.type") from None
    if model not in LIBKGE_MODELS:
        raise LibKGEError(f"{path}: LibKGE model {model!r} is not supported "
                          f"(supported: {', '.join(sorted(LIBKGE_MODELS))})")
    return model, key, reciprocal


def _tables(ckpt: dict[str, Any], path: Path) -> Tables:
    cfg: LibKGEConfig = ckpt["config"]
    lib_model, key, reciprocal = _detect(cfg, path)
    state = model_state(ckpt, path)
    ent = find(state, embedder_keys("entity", reciprocal), path)
    rel = find(state, embedder_keys("relation", reciprocal), path)
    assert ent is not None and rel is not None
    if ent.dim() != 2 or rel.dim() != 2:
        raise CorruptFileError(path, "LibKGE embedding tables are not matrices")
    ent = normalize(ent, cfg, f"{key}.entity_embedder")
    rel = normalize(rel, cfg, f"{key}.relation_embedder")
    return Tables(lib_model, key, reciprocal, cfg, state, path, ent, rel)


def _row_permutations(t: Tables, kg: KnowledgeGraph, entity_ids: str | Path | None,
                      relation_ids: str | Path | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Our row j = the checkpoint's row ``perm[j]``, from LibKGE's id files or its order derived from the splits."""
    derived_e, derived_r = (None, None) if entity_ids and relation_ids else libkge_order(kg)
    lib_e = read_ids(entity_ids) if entity_ids else derived_e
    lib_r = read_ids(relation_ids) if relation_ids else derived_r
    assert lib_e is not None and lib_r is not None
    e_src = str(entity_ids) if entity_ids else f"LibKGE entity order derived from {kg.name}'s splits"
    r_src = str(relation_ids) if relation_ids else f"LibKGE relation order derived from {kg.name}'s splits"
    if t.entity.shape[0] != len(lib_e):
        raise LibKGEError(f"{t.path}: {t.entity.shape[0]} entity rows, but {e_src} lists {len(lib_e)} entities")
    rows = len(lib_r) * (2 if t.reciprocal else 1)
    if t.relation.shape[0] != rows:
        raise LibKGEError(f"{t.path}: {t.relation.shape[0]} relation rows, but {r_src} lists {len(lib_r)} "
                          "relations" + (" (a reciprocal model has 2|R| rows)" if t.reciprocal else ""))
    e_perm = permutation(lib_e, kg.entities, "entity", e_src, kg.name)
    r_perm = permutation(lib_r, kg.relations, "relation", r_src, kg.name)
    if t.reciprocal:  # kgeval's reciprocal rows use LibKGE's layout: relation r⁻¹ = r + |R|
        r_perm = torch.cat([r_perm, r_perm + len(lib_r)])
    return e_perm, r_perm


def _convert(ckpt: dict[str, Any], path: Path, kg: KnowledgeGraph, entity_ids: str | Path | None,
             relation_ids: str | Path | None) -> tuple[str, dict[str, Any], dict[str, torch.Tensor], str]:
    t = _tables(ckpt, path)
    name = LIBKGE_MODELS[t.lib_model]
    e_perm, r_perm = _row_permutations(t, kg, entity_ids, relation_ids)
    hparams, out = CONVERTERS[t.lib_model](t)
    hparams = {"reciprocal": t.reciprocal, **hparams}
    for k in ("entity.weight", "entity_bias"):
        if k in out:
            out[k] = out[k][e_perm]
    out["relation.weight"] = out["relation.weight"][r_perm]
    out = {k: v.contiguous().clone() for k, v in out.items()}

    # validate against the kgeval model itself (shapes, completeness)
    model = build_model(name, kg.num_entities, kg.num_relations, graph=kg.splits["train"], **hparams)
    try:
        model.load_state_dict(out, strict=True)
    except RuntimeError as exc:
        raise LibKGEError(f"{path}: converted LibKGE {t.lib_model} weights do not fit kgeval's {name}: {exc}"
                          ) from exc
    return name, hparams, {k: v.detach().clone() for k, v in model.state_dict().items()}, t.lib_model


def load_libkge(path: str | Path, kg: KnowledgeGraph, sha256: str, entity_ids: str | Path | None = None,
                relation_ids: str | Path | None = None) -> tuple[str, dict[str, Any], dict[str, torch.Tensor]]:
    """Load a LibKGE checkpoint pinned by ``sha256`` for ``kg``.

    Returns (kgeval model name, constructor hyperparameters, state_dict): ``build_model(name, kg.num_entities,
    kg.num_relations, **hparams).load_state_dict(state_dict)`` gives a model whose scores equal LibKGE's (in eval
    mode), with entity and relation ids those of ``kg``. ``entity_ids``/``relation_ids`` are LibKGE's
    ``entity_ids.del``/``relation_ids.del``; without them LibKGE's order is derived from the graph's splits.
    """
    path = Path(path)
    ckpt = read_libkge_checkpoint(path, sha256)
    name, hparams, state, _ = _convert(ckpt, path, kg, entity_ids, relation_ids)
    return name, hparams, state


def libkge_model(path: str | Path, kg: KnowledgeGraph, sha256: str, entity_ids: str | Path | None = None,
                 relation_ids: str | Path | None = None) -> KGEModel:
    """The kgeval model of a LibKGE checkpoint, in eval mode on the CPU."""
    name, hparams, state = load_libkge(path, kg, sha256, entity_ids, relation_ids)
    model = build_model(name, kg.num_entities, kg.num_relations, graph=kg.splits["train"], **hparams)
    model.load_state_dict(state)
    return model.eval()


def _plain(value: Any) -> Any:
    """A trace value as plain data (loadable with ``weights_only=True`` and writable as JSON)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.item()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def _best_valid(cfg: LibKGEConfig, trace: list[Any], epoch: Any) -> float | None:
    metric = option(cfg, "valid.metric", "mean_reciprocal_rank_filtered_with_test")
    values = [(e.get("epoch"), e[metric]) for e in trace if isinstance(e, dict) and isinstance(e.get(metric),
                                                                                              (int, float))]
    at_epoch = [v for ep, v in values if ep == epoch]
    if at_epoch:
        return float(at_epoch[-1])
    return float(max(v for _, v in values)) if values else None


def convert_checkpoint(path: str | Path, kg_path: str | Path, sha256: str, entity_ids: str | Path | None = None,
                       relation_ids: str | Path | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pinned LibKGE checkpoint as the state of a kgeval checkpoint and its provenance record, for the graph
    saved at ``kg_path`` (written by ``kgeval.training.steps.convert_libkge``)."""
    path = Path(path)
    kg = KnowledgeGraph.load(kg_path)
    try:
        ckpt = read_libkge_checkpoint(path, sha256)
    except ChecksumError as exc:  # a damaged download: set aside, so that the next run fetches it again
        aside = set_aside(path, str(exc))
        raise ChecksumError(f"{path} (set aside as {aside.name}, safe to delete; a rerun fetches it again)",
                            exc.expected, exc.actual) from exc
    name, hparams, state, lib_model = _convert(ckpt, path, kg, entity_ids, relation_ids)
    trace = _plain(ckpt.get("valid_trace") or [])
    epoch = _plain(ckpt.get("epoch"))
    valid = _best_valid(ckpt["config"], trace, epoch)
    record = {"source": SOURCE, "source_file": path.name, "source_sha256": _check_sha(sha256),
              "libkge_model": lib_model, "libkge_epoch": epoch, "valid_mrr": valid}
    st = {"model_name": name, "model_hparams": hparams, "dataset": kg.name,
          "dataset_fingerprint": kg.fingerprint(), "epoch": epoch if isinstance(epoch, int) else -1,
          "trace": trace, "state_dict": state, **record}
    return st, record
