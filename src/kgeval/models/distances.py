"""The distances of the translational models, shared by TransE, RotatE and HAKE: all-entity forms, fused autograd
functions for negative sampling (``modulus_sum``, ``hake_distances``, with hand-written gradients checked against
autograd by gradcheck), their plain formulas, and the compiled variants (``kgeval.models.compiled``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .base import KGEModel
from .compiled import run_compiled

EPSILON = 2.0  # the RotatE/HAKE repositories' ε in the embedding range (γ + ε) / d


def uniform_embedding(num: int, dim: int, bound: float) -> nn.Embedding:
    emb = nn.Embedding(num, dim)
    nn.init.uniform_(emb.weight, -bound, bound)
    return emb


def sq_dist_all(q: torch.Tensor, ents: torch.Tensor) -> torch.Tensor:
    """‖q_b − e_j‖² for every query row b and entity row j, as a matrix product: (B, d), (N, d) → (B, N)."""
    return ((q * q).sum(-1, keepdim=True) + (ents * ents).sum(-1)[None, :] - 2.0 * (q @ ents.T)).clamp_min(0.0)


def safe_sqrt(x: torch.Tensor) -> torch.Tensor:
    """sqrt with a finite gradient at 0 (the clamp is far below float32 resolution of any non-zero distance)."""
    return x.clamp_min(1e-30).sqrt()


class ModulusSum(torch.autograd.Function):
    """Σ_i |q_i − c_i| over complex k-vectors stored as [Re ‖ Im] (…, 2k) → (…), q broadcasting against c.

    One fused function instead of autograd's chain (two slices, squares, a sum, a clamp and a square root, each
    with its own backward temporaries): it keeps only the difference and the moduli, which makes RotatE's
    negative-sampling step about twice as fast on CPU. The gradient at a zero modulus is 0, as with the
    clamped square root it replaces.
    """

    @staticmethod
    def forward(ctx, q: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        diff = q - c
        k = diff.shape[-1] // 2
        sq = diff.square()
        mod = sq[..., :k].add_(sq[..., k:]).sqrt_()
        ctx.save_for_backward(diff, mod)
        ctx.q_shape = q.shape
        return mod.sum(-1)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        diff, mod = ctx.saved_tensors
        scale = torch.where(mod > 0, grad[..., None] / mod, 0.0)
        gd = (diff.unflatten(-1, (2, -1)) * scale[..., None, :]).flatten(-2)
        return gd.sum_to_size(ctx.q_shape), -gd  # not in place: sum_to_size may return gd itself


def modulus_sum(q: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """RotatE's distance Σ_i |q_i − c_i| of [Re ‖ Im] vectors (see ``ModulusSum``)."""
    return ModulusSum.apply(q, c)


def modulus_formula(q: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """``modulus_sum`` as plain operations, for torch.compile (same value; gradient 0 at a zero modulus)."""
    d = q - c
    k = d.shape[-1] // 2
    return safe_sqrt(d[..., :k].square() + d[..., k:].square()).sum(-1)


def lp_formula(q: torch.Tensor, c: torch.Tensor, p: int) -> torch.Tensor:
    """‖q − c‖_p, p ∈ {1, 2}, as plain operations, for torch.compile (gradient 0 where the distance is 0)."""
    d = q - c
    return d.abs().sum(-1) if p == 1 else safe_sqrt(d.square().sum(-1))


def example_inputs(*shapes: tuple[int, ...], grad: bool = True) -> Callable[[], tuple[torch.Tensor, ...]]:
    """Small inputs of these shapes for compiling a formula (with gradients for a training formula)."""
    return lambda: tuple(torch.randn(*s, requires_grad=grad) for s in shapes)


def all_modulus(q: torch.Tensor, ents: torch.Tensor) -> torch.Tensor:
    """RotatE's distance of every query row to every entity row, (B, 2k) × (N, 2k) → (B, N), for torch.compile:
    the generated loop reduces over k without forming the (B × N × k) differences."""
    k = q.shape[-1] // 2
    a = q[:, None, :k] - ents[None, :, :k]
    b = q[:, None, k:] - ents[None, :, k:]
    return (a.square() + b.square()).sqrt().sum(-1)


def all_l1(q: torch.Tensor, ents: torch.Tensor) -> torch.Tensor:
    """‖q_b − e_j‖₁ for every query and entity row, (B, d) × (N, d) → (B, N), for torch.compile."""
    return (q[:, None, :] - ents[None]).abs().sum(-1)


def all_phase(x_ph: torch.Tensor, c_ph: torch.Tensor, sign: float) -> torch.Tensor:
    """HAKE's phase term Σ_i |sin((x + sign · c)_i / 2)| of every query and entity row, for torch.compile."""
    return torch.sin((x_ph[:, None, :] + sign * c_ph[None]) * 0.5).abs().sum(-1)


def compiled_distance(model: KGEModel, name: str, formula: Callable,
                      example: Callable[[], tuple[torch.Tensor, ...]], *args: torch.Tensor, grad: bool) -> Any:
    """``formula(*args)`` compiled where :func:`kgeval.models.compiled.run_compiled` allows it for this model,
    else None (the caller's eager code runs)."""
    return run_compiled(model.compile_distances, model.entity_embeddings().numel(), name, formula, example, *args,
                        grad=grad)




class HakeDistances(torch.autograd.Function):
    """HAKE's two distance terms of queries against candidate entity rows cand = [stored phase ‖ modulus]
    (…, 2d), the queries broadcasting against the candidates (…, d):

        phase = Σ_i |sin((x_ph + sign · φ c_ph)_i / 2)|,   modulus = ‖x_m − y_m ∘ c_m‖₂     (φ = phase factor)

    Fused for the same reason as ``ModulusSum`` (the negative-sampling step no longer materialises autograd's
    slice, sine, absolute-value and norm temporaries); gradients at |sin| = 0 or a zero modulus are 0, as
    autograd's ``abs`` and ``norm`` give.
    """

    @staticmethod
    def forward(ctx, x_ph, x_m, y_m, cand, sign: float, factor: float):
        k = cand.shape[-1] // 2
        c_ph, c_m = cand[..., :k], cand[..., k:]
        half = torch.add(x_ph, c_ph, alpha=sign * factor).mul_(0.5)
        sin = half.sin()
        dm = x_m - y_m * c_m
        mod = torch.linalg.vector_norm(dm, dim=-1)
        ctx.save_for_backward(x_ph, x_m, y_m, cand, half, sin, dm, mod)
        ctx.sign, ctx.factor = sign, factor
        return sin.abs().sum(-1), mod

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g_phase, g_mod):
        x_ph, x_m, y_m, cand, half, sin, dm, mod = ctx.saved_tensors
        k = cand.shape[-1] // 2
        t = half.cos().mul_(sin.sign()).mul_(0.5 * g_phase[..., None])  # ∂phase / ∂x_ph
        u = dm * torch.where(mod > 0, g_mod / mod, 0.0)[..., None]  # ∂modulus / ∂x_m
        g_x_ph, g_x_m = t.sum_to_size(x_ph.shape), u.sum_to_size(x_m.shape)
        g_y_m = (u * cand[..., k:]).sum_to_size(y_m.shape).neg_()
        g_cand = torch.cat([t * (ctx.sign * ctx.factor), u * y_m.neg()], -1)  # t may be g_x_ph itself
        return g_x_ph, g_x_m, g_y_m, g_cand.sum_to_size(cand.shape), None, None


def hake_distances(x_ph, x_m, y_m, cand, sign: float, factor: float) -> tuple[torch.Tensor, torch.Tensor]:
    """HAKE's (phase, modulus) distance terms (see ``HakeDistances``)."""
    return HakeDistances.apply(x_ph, x_m, y_m, cand, float(sign), float(factor))


def hake_formula(x_ph, x_m, y_m, cand, sign: float, factor: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``hake_distances`` as plain operations, for torch.compile (same values; gradients 0 at |sin| = 0 and at
    a zero modulus)."""
    k = cand.shape[-1] // 2
    phase = torch.sin((x_ph + (sign * factor) * cand[..., :k]) * 0.5).abs().sum(-1)
    return phase, safe_sqrt((x_m - y_m * cand[..., k:]).square().sum(-1))


