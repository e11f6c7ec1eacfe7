"""Fake LibKGE checkpoints (a state dict, options and trace as LibKGE writes them) for the LibKGE import tests
and the outside-system tests."""

from __future__ import annotations

import contextlib
import hashlib
import sys
import types
from collections import OrderedDict
from pathlib import Path

import torch
import torch.nn.functional as F

SEED = 20200426


@contextlib.contextmanager
def fake_kge():
    """A stand-in ``kge.config.Config`` importable only inside the block (so that pickle can name it)."""
    kge_mod, cfg_mod = types.ModuleType("kge"), types.ModuleType("kge.config")

    class Config:
        def __init__(self, options):
            self.options = options
            self.folder = "local/experiments/20200101-fb15k-237"
            self.log_folder = None
            self.log_prefix = None

    Config.__module__, Config.__qualname__ = "kge.config", "Config"
    cfg_mod.Config = Config
    kge_mod.config = cfg_mod
    saved = {k: sys.modules.get(k) for k in ("kge", "kge.config")}
    sys.modules["kge"], sys.modules["kge.config"] = kge_mod, cfg_mod
    try:
        yield Config
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_checkpoint(path: Path, state: dict, options: dict, legacy: bool = False, extra: dict | None = None) -> str:
    with fake_kge() as Config:
        ckpt = {"type": "train", "epoch": 7,
                "valid_trace": [{"type": "entity_ranking", "epoch": 5, "mean_reciprocal_rank_filtered_with_test":
                                 0.31, "hits_at_10_filtered_with_test": 0.5},
                                {"type": "entity_ranking", "epoch": 7, "mean_reciprocal_rank_filtered_with_test":
                                 0.34, "hits_at_10_filtered_with_test": 0.52}],
                "model": (OrderedDict(state), {}),
                "optimizer_state_dict": {"state": {0: {"sum": torch.ones(3)}},
                                         "param_groups": [{"lr": 0.16, "params": [0, 1]}]},
                "lr_scheduler_state_dict": {"mode": "max", "best": 0.34, "last_epoch": 7},
                "job_id": "c0ffee", "config": Config(options)}
        ckpt.update(extra or {})
        torch.save(ckpt, path, _use_new_zipfile_serialization=not legacy)
    assert "kge.config" not in sys.modules and "kge" not in sys.modules
    return sha(path)


def libkge_options(lib_model: str, reciprocal: bool, dim: int, extra: dict | None = None,
                   normalize: float = -1.0) -> dict:
    emb = {"type": "lookup_embedder", "dim": dim, "dropout": 0.25, "normalize": {"p": normalize}, "+++": "+++"}
    model_opts = {"class_name": lib_model, "entity_embedder": dict(emb),
                  "relation_embedder": {**emb, "dropout": 0.1, "normalize": {"p": -1.0}}, **(extra or {})}
    opts = {"model": lib_model, lib_model: model_opts, "job": {"device": "cuda"},
            "lookup_embedder": {"class_name": "LookupEmbedder", "dim": 100, "dropout": 0.0, "normalize": {"p": -1.0},
                                "initialize": "normal_"},
            "valid": {"metric": "mean_reciprocal_rank_filtered_with_test"}}
    if reciprocal:
        opts["model"] = "reciprocal_relations_model"
        opts["reciprocal_relations_model"] = {"class_name": "ReciprocalRelationsModel",
                                              "base_model": {"type": lib_model, "+++": "+++"}}
    return opts


def make_weights(lib_model: str, n_e: int, n_r: int, reciprocal: bool, variant: dict) -> dict[str, torch.Tensor]:
    """Random LibKGE tensors (float32): E, R, and for ConvE the scorer's parameters (LibKGE names)."""
    g = torch.Generator().manual_seed(SEED)
    rows = 2 * n_r if reciprocal else n_r
    d = 6

    def rnd(*shape, scale=0.5):
        return torch.randn(*shape, generator=g) * scale

    if lib_model == "rescal":
        return {"E": rnd(n_e, d), "R": rnd(rows, d * d)}
    if lib_model == "rotate":
        return {"E": rnd(n_e, 2 * d), "R": (torch.rand(rows, d, generator=g) * 2 - 1) * torch.pi}
    if lib_model == "conve":
        d, kernel, pad = 8, 3, variant.get("padding", 0)  # aspect 2: a 2×4 image, stacked 4×4
        fc_in = 32 * (4 + 2 * pad - kernel + 1) * (4 + 2 * pad - kernel + 1)
        w = {"E": rnd(n_e, d + 1), "R": rnd(rows, d + 1),
             "convolution.weight": rnd(32, 1, kernel, kernel), "projection.weight": rnd(d, fc_in, scale=0.1),
             "projection.bias": rnd(d, scale=0.1),
             "bn1.running_mean": rnd(32, scale=0.2), "bn1.running_var": torch.rand(32, generator=g) + 0.5,
             "bn1.num_batches_tracked": torch.tensor(1234),
             "bn2.running_mean": rnd(d, scale=0.2), "bn2.running_var": torch.rand(d, generator=g) + 0.5,
             "bn2.num_batches_tracked": torch.tensor(1234)}
        if not variant.get("no_conv_bias"):
            w["convolution.bias"] = rnd(32, scale=0.1)
        return w
    return {"E": rnd(n_e, d), "R": rnd(rows, d)}


def libkge_state(lib_model: str, w: dict, reciprocal: bool, variant: dict) -> dict[str, torch.Tensor]:
    """The state_dict LibKGE saves: a reciprocal model repeats its base model's modules without the prefix."""
    emb = "embeddings" if variant.get("old_keys") else "_embeddings"
    base = {f"_entity_embedder.{emb}.weight": w["E"], f"_relation_embedder.{emb}.weight": w["R"]}
    base.update({f"_scorer.{k}": v for k, v in w.items() if k not in ("E", "R")})
    if not reciprocal:
        return base
    state = {k: v for k, v in base.items() if k.startswith("_scorer.")}
    state.update({f"_base_model.{k}": v for k, v in base.items()})
    if not variant.get("base_only"):
        state.update({k: v for k, v in base.items() if not k.startswith("_scorer.")})
    else:
        state = {k: v for k, v in state.items() if k.startswith("_base_model.")}
    return state


# ---- LibKGE's scoring functions (float64, from the raw tensors) --------------------------------------------------
def lib_spo(lib_model: str, w: dict, s: torch.Tensor, p: torch.Tensor, o: torch.Tensor, variant: dict
            ) -> torch.Tensor:
    E, R = w["E"].double(), w["R"].double()
    if variant.get("normalize"):
        E = F.normalize(E, p=variant["normalize"], dim=-1)
    Sh, Pr, Ob = E[s], R[p], E[o]
    if lib_model == "distmult":
        return (Sh * Pr * Ob).sum(-1)
    if lib_model == "rescal":
        d = Sh.shape[1]
        return ((Sh.unsqueeze(1) @ Pr.view(-1, d, d)).squeeze(1) * Ob).sum(-1)
    if lib_model == "complex":  # ComplExScorer
        p_re, p_im = Pr.chunk(2, dim=1)
        o_re, o_im = Ob.chunk(2, dim=1)
        s_all = torch.cat((Sh, Sh), dim=1)
        r_all = torch.cat((p_re, Pr, -p_im), dim=1)
        o_all = torch.cat((Ob, o_im, o_re), dim=1)
        return (s_all * o_all * r_all).sum(dim=1)
    if lib_model == "transe":  # sp_/_po: -cdist(s + p, o)
        return -(Sh + Pr - Ob).norm(p=variant.get("l_norm", 1.0), dim=-1)
    if lib_model == "rotate":  # RotatEScorer, combine "spo" (LibKGE versions with the negated distance)
        s_re, s_im = Sh.chunk(2, dim=1)
        o_re, o_im = Ob.chunk(2, dim=1)
        p_re, p_im = torch.cos(Pr), torch.sin(Pr)
        sp_re, sp_im = s_re * p_re - s_im * p_im, s_re * p_im + s_im * p_re
        diff_abs = torch.stack((sp_re - o_re, sp_im - o_im), dim=0).norm(dim=0)
        return -diff_abs.norm(dim=1, p=variant.get("l_norm", 1.0))
    if lib_model == "conve":  # ConvEScorer.score_emb, eval mode
        h, wd = 2, 4
        x = torch.cat([Sh[:, 1:].view(-1, 1, h, wd), Pr[:, 1:].view(-1, 1, h, wd)], 2)
        bias = w.get("convolution.bias")
        x = F.conv2d(x, w["convolution.weight"].double(), None if bias is None else bias.double(),
                     stride=1, padding=variant.get("padding", 0))
        x = F.batch_norm(x, w["bn1.running_mean"].double(), w["bn1.running_var"].double(), training=False)
        x = F.relu(x).view(len(Sh), -1)
        x = F.linear(x, w["projection.weight"].double(), w["projection.bias"].double())
        x = F.relu(F.batch_norm(x, w["bn2.running_mean"].double(), w["bn2.running_var"].double(), training=False))
        return (x * Ob[:, 1:]).sum(-1) + Ob[:, 0]
    raise AssertionError(lib_model)


CASES = [
    ("distmult", False, {}),
    ("distmult", True, {}),
    ("distmult", True, {"base_only": True}),
    ("rescal", False, {"old_keys": True}),
    ("complex", False, {}),
    ("complex", True, {"legacy": True}),
    ("transe", False, {"l_norm": 1.0}),
    ("transe", True, {"l_norm": 2.0, "normalize": 2.0}),
    ("rotate", False, {}),
    ("rotate", True, {"l_norm": 2.0}),
    ("conve", True, {}),
    ("conve", True, {"padding": 1, "no_conv_bias": True}),
]
KGEVAL_NAME = {"distmult": "DistMult", "rescal": "RESCAL", "complex": "ComplEx", "transe": "TransE",
               "rotate": "RotatE", "conve": "ConvE"}


def build_case(tmp_path: Path, kg, lib_model: str, reciprocal: bool, variant: dict, n_e: int, n_r: int):
    w = make_weights(lib_model, n_e, n_r, reciprocal, variant)
    extra: dict = {}
    if "l_norm" in variant:
        extra["l_norm"] = variant["l_norm"]
    if lib_model == "conve":
        extra.update({"2D_aspect_ratio": 2, "filter_size": 3, "stride": 1, "padding": variant.get("padding", 0),
                      "feature_map_dropout": 0.2, "projection_dropout": 0.3, "round_dim": False,
                      "convolution_bias": not variant.get("no_conv_bias")})
    opts = libkge_options(lib_model, reciprocal, w["E"].shape[1], extra, normalize=variant.get("normalize", -1.0))
    path = tmp_path / f"{lib_model}.pt"
    digest = write_checkpoint(path, libkge_state(lib_model, w, reciprocal, variant), opts,
                              legacy=variant.get("legacy", False))
    return w, path, digest
