"""Translational and distance models: TransE, RotatE, HAKE, AttE.

Scores are higher = more plausible. All-entity scores (``score_sp`` / ``score_po``) use matrix products where the
distance allows it (squared Euclidean distances: TransE-L2, AttE, RotatE with ``norm=2``, HAKE's modulus part)
and otherwise elementwise (TransE-L1 uses ``torch.cdist``; RotatE's sum of complex moduli and HAKE's phase part):
in CPU inference over small in-place (question × entity) blocks (``KGEModel.blocked``), with autograd or on CUDA
over entity chunks (``KGEModel.chunked``), so no (batch × |E| × d) tensor exceeds ``chunk_budget_mb``. RotatE's
and HAKE's distances against given candidates (negative sampling) are fused autograd functions
(``modulus_sum``, ``hake_distances``) with hand-written gradients, checked against autograd by gradcheck.

Published defaults (``shared/specs/models.md``): TransE, RotatE and HAKE carry the RotatE/HAKE repositories'
FB15k-237 settings (d = 1000, γ = 9, uniform initialisation in ±(γ + ε)/d with ε = 2); AttE carries the
KGEmb settings (d = 500, reciprocal relations, initial scale 1e-3).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .base import KGEModel, init_embedding
from .compiled import run_compiled
from .hparams import DROPOUT, INIT, POSITIVE_OR_NULL, Choice, Float, Int

EPSILON = 2.0  # the RotatE/HAKE repositories' ε in the embedding range (γ + ε) / d


def _uniform_embedding(num: int, dim: int, bound: float) -> nn.Embedding:
    emb = nn.Embedding(num, dim)
    nn.init.uniform_(emb.weight, -bound, bound)
    return emb


def _sq_dist_all(q: torch.Tensor, ents: torch.Tensor) -> torch.Tensor:
    """‖q_b − e_j‖² for every query row b and entity row j, as a matrix product: (B, d), (N, d) → (B, N)."""
    return ((q * q).sum(-1, keepdim=True) + (ents * ents).sum(-1)[None, :] - 2.0 * (q @ ents.T)).clamp_min(0.0)


def _safe_sqrt(x: torch.Tensor) -> torch.Tensor:
    """sqrt with a finite gradient at 0 (the clamp is far below float32 resolution of any non-zero distance)."""
    return x.clamp_min(1e-30).sqrt()


class _ModulusSum(torch.autograd.Function):
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
    """RotatE's distance Σ_i |q_i − c_i| of [Re ‖ Im] vectors (see ``_ModulusSum``)."""
    return _ModulusSum.apply(q, c)


def _modulus_formula(q: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """``modulus_sum`` as plain operations, for torch.compile (same value; gradient 0 at a zero modulus)."""
    d = q - c
    k = d.shape[-1] // 2
    return _safe_sqrt(d[..., :k].square() + d[..., k:].square()).sum(-1)


def _lp_formula(q: torch.Tensor, c: torch.Tensor, p: int) -> torch.Tensor:
    """‖q − c‖_p, p ∈ {1, 2}, as plain operations, for torch.compile (gradient 0 where the distance is 0)."""
    d = q - c
    return d.abs().sum(-1) if p == 1 else _safe_sqrt(d.square().sum(-1))


def _example(*shapes: tuple[int, ...], grad: bool = True) -> Callable[[], tuple[torch.Tensor, ...]]:
    """Small inputs of these shapes for compiling a formula (with gradients for a training formula)."""
    return lambda: tuple(torch.randn(*s, requires_grad=grad) for s in shapes)


def _all_modulus(q: torch.Tensor, ents: torch.Tensor) -> torch.Tensor:
    """RotatE's distance of every query row to every entity row, (B, 2k) × (N, 2k) → (B, N), for torch.compile:
    the generated loop reduces over k without forming the (B × N × k) differences."""
    k = q.shape[-1] // 2
    a = q[:, None, :k] - ents[None, :, :k]
    b = q[:, None, k:] - ents[None, :, k:]
    return (a.square() + b.square()).sqrt().sum(-1)


def _all_l1(q: torch.Tensor, ents: torch.Tensor) -> torch.Tensor:
    """‖q_b − e_j‖₁ for every query and entity row, (B, d) × (N, d) → (B, N), for torch.compile."""
    return (q[:, None, :] - ents[None]).abs().sum(-1)


def _all_phase(x_ph: torch.Tensor, c_ph: torch.Tensor, sign: float) -> torch.Tensor:
    """HAKE's phase term Σ_i |sin((x + sign · c)_i / 2)| of every query and entity row, for torch.compile."""
    return torch.sin((x_ph[:, None, :] + sign * c_ph[None]) * 0.5).abs().sum(-1)


def compiled_distance(model: KGEModel, name: str, formula: Callable,
                      example: Callable[[], tuple[torch.Tensor, ...]], *args: torch.Tensor, grad: bool) -> Any:
    """``formula(*args)`` compiled where :func:`kgeval.models.compiled.run_compiled` allows it for this model,
    else None (the caller's eager code runs)."""
    return run_compiled(model.compile_distances, model.entity_embeddings().numel(), name, formula, example, *args,
                        grad=grad)


class TransE(KGEModel):
    """TransE (Bordes et al. 2013): f(h, r, t) = γ − ‖e_h + r − e_t‖_p, p ∈ {1, 2}.

    Parameters: ``entity`` |E| × d, ``relation`` |R| × d (2|R| × d with reciprocal relations); optional dropout
    on looked-up embeddings (LibKGE style). Scores lie in (−∞, γ]; γ is a constant offset that does not change
    rankings but shifts the logits of the negative-sampling losses (the RotatE repository's ``gamma``).

    Defaults are the RotatE repository's FB15k-237 run (``run.sh train TransE FB15k-237 … 1000 9.0 1.0 …``):
    d = 1000, L1 norm, γ = 9, uniform initialisation in ±(γ + 2)/d, no reciprocal relations. ``init="normal"``
    with ``init_std`` gives LibKGE-style normal initialisation instead; ``gamma=0`` gives PyKEEN's and LibKGE's
    −‖e_h + r − e_t‖ exactly.

    All-entity scores: p = 2 through ‖q‖² + ‖e‖² − 2 q·e (a matrix product), p = 1 with ``torch.cdist``.
    """

    name = "TransE"
    HPARAMS = {"norm": Choice(1, 2), "gamma": Float(0, lo_open=True), "entity_dropout": DROPOUT,
               "relation_dropout": DROPOUT, "init_std": POSITIVE_OR_NULL, "init": INIT}

    def __init__(self, num_entities, num_relations, dim=1000, reciprocal=False, norm=1, gamma=9.0,
                 entity_dropout=0.0, relation_dropout=0.0, init_std=None, init="uniform", chunk_budget_mb=256.0):
        if norm not in (1, 2):
            raise ValueError("TransE norm must be 1 or 2")
        super().__init__(num_entities, num_relations, dim, reciprocal, chunk_budget_mb=chunk_budget_mb, norm=norm,
                         gamma=gamma, entity_dropout=entity_dropout, relation_dropout=relation_dropout,
                         init_std=init_std, init=init)
        self.norm = norm
        self.gamma = float(gamma)
        if init == "uniform" and init_std is None:
            init_std = (self.gamma + EPSILON) / dim  # the RotatE repository's embedding range
        self.entity = init_embedding(num_entities, dim, init_std, init)
        self.relation = init_embedding(self.num_relation_rows, dim, init_std, init)
        self.edrop = nn.Dropout(entity_dropout)
        self.rdrop = nn.Dropout(relation_dropout)

    def entity_embeddings(self):
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.relation(p), self.entity(o)]

    def _dist_all(self, q: torch.Tensor) -> torch.Tensor:
        ents = self.edrop(self.entity.weight)
        if self.norm == 1:
            fast = compiled_distance(self, "TransE all-entity L1 distance", _all_l1,
                                     _example((3, 4), (5, 4), grad=False), q, ents, grad=False)
            return fast if fast is not None else torch.cdist(q, ents, p=1)
        return _safe_sqrt(_sq_dist_all(q, ents))

    def _dist_some(self, q: torch.Tensor, cand: torch.Tensor) -> torch.Tensor:
        p = self.norm
        fast = compiled_distance(self, f"TransE L{p} distance", functools.partial(_lp_formula, p=p),
                                 _example((3, 1, 4), (3, 5, 4)), q[:, None, :], cand, grad=True)
        return fast if fast is not None else (q[:, None, :] - cand).norm(p=p, dim=-1)

    def _score_spo(self, s, p, o):
        d = self.edrop(self.entity(s)) + self.rdrop(self.relation(p)) - self.edrop(self.entity(o))
        return self.gamma - d.norm(p=self.norm, dim=-1)

    def _score_sp(self, s, p):
        return self.gamma - self._dist_all(self.edrop(self.entity(s)) + self.rdrop(self.relation(p)))

    def _score_po(self, p, o):
        # ‖h + r − t‖ = ‖h − (t − r)‖
        return self.gamma - self._dist_all(self.edrop(self.entity(o)) - self.rdrop(self.relation(p)))

    def _score_sp_some(self, s, p, o):
        q = self.edrop(self.entity(s)) + self.rdrop(self.relation(p))
        return self.gamma - self._dist_some(q, self.edrop(self.entity(o)))

    def _score_po_some(self, p, o, s):
        q = self.edrop(self.entity(o)) - self.rdrop(self.relation(p))
        return self.gamma - self._dist_some(q, self.edrop(self.entity(s)))


class RotatE(KGEModel):
    """RotatE (Sun et al. 2019): f(h, r, t) = γ − Σ_i |h_i · e^{iθ_{r,i}} − t_i| (``norm=1``, the paper).

    Parameters: ``entity`` |E| × 2k holding h ∈ C^k as [Re ‖ Im] (LibKGE's layout; ``dim`` = k, the RotatE
    repository's ``hidden_dim`` with ``-de``); ``relation`` |R| × k raw phase parameters ρ (2|R| × k with
    reciprocal relations), θ = ρ · ``phase_scale``. Scores lie in (−∞, γ].

    Phase parameterisation (the original's): entities and ρ are initialised uniformly in ±(γ + 2)/k
    (``init_range``) and θ = ρ / (range / π), so the initial phases are uniform in [−π, π]. ``phase_scale=1``
    makes ρ the phase in radians (LibKGE's and PyKEEN's parameterisation; ρ is then initialised in [−π, π]).

    ``norm=2`` scores γ − ‖h ∘ r − t‖₂ over C^k, i.e. the complex 2-norm that PyKEEN's ``RotatEInteraction``
    uses (a deviation of PyKEEN from the paper, offered only for comparison); LibKGE's ``l_norm`` is the same
    switch (LibKGE and PyKEEN have no γ: ``gamma=0``).

    Head questions use |h ∘ r − t| = |h − conj(r) ∘ t| (|r_i| = 1). All-entity scores run elementwise
    (``norm=1``, see the module docstring) or as a matrix product of the [Re ‖ Im] vectors (``norm=2``).
    """

    name = "RotatE"
    HPARAMS = {"gamma": Float(0, lo_open=True), "norm": Choice(1, 2), "init_range": POSITIVE_OR_NULL,
               "phase_scale": POSITIVE_OR_NULL}

    def __init__(self, num_entities, num_relations, dim=1000, reciprocal=False, gamma=9.0, norm=1, init_range=None,
                 phase_scale=None, chunk_budget_mb=256.0):
        if norm not in (1, 2):
            raise ValueError("RotatE norm must be 1 (the paper) or 2 (PyKEEN)")
        super().__init__(num_entities, num_relations, dim, reciprocal, chunk_budget_mb=chunk_budget_mb, gamma=gamma,
                         norm=norm, init_range=init_range, phase_scale=phase_scale)
        self.gamma = float(gamma)
        self.norm = norm
        self.init_range = float(init_range) if init_range is not None else (self.gamma + EPSILON) / dim
        self.phase_scale = float(phase_scale) if phase_scale is not None else math.pi / self.init_range
        self.entity = _uniform_embedding(num_entities, 2 * dim, self.init_range)
        self.relation = _uniform_embedding(self.num_relation_rows, dim, math.pi / self.phase_scale)

    def entity_embeddings(self):
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.relation(p), self.entity(o)]

    def _split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x[..., : self.dim], x[..., self.dim:]

    def _rotation(self, p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        theta = self.relation(p) * self.phase_scale
        return torch.cos(theta), torch.sin(theta)

    def _tail_query(self, s, p) -> torch.Tensor:
        """h ∘ r as [Re ‖ Im] (B, 2k)."""
        h_re, h_im = self._split(self.entity(s))
        c, sn = self._rotation(p)
        return torch.cat([h_re * c - h_im * sn, h_re * sn + h_im * c], -1)

    def _head_query(self, p, o) -> torch.Tensor:
        """conj(r) ∘ t as [Re ‖ Im] (B, 2k)."""
        t_re, t_im = self._split(self.entity(o))
        c, sn = self._rotation(p)
        return torch.cat([t_re * c + t_im * sn, t_im * c - t_re * sn], -1)

    def _score(self, q: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """γ − distance of broadcastable [Re ‖ Im] (…, 2k) complex vectors."""
        if self.norm == 1:
            fast = None
            if q.dim() == 3:  # the negative-sampling shape (B, 1, 2k) against (B, n, 2k)
                fast = compiled_distance(self, "RotatE modulus distance", _modulus_formula,
                                         _example((3, 1, 4), (3, 5, 4)), q, c, grad=True)
            return self.gamma - (fast if fast is not None else modulus_sum(q, c))
        return self.gamma - _safe_sqrt((q - c).square().sum(-1))

    def _score_all(self, q: torch.Tensor) -> torch.Tensor:
        ents = self.entity.weight
        if self.norm == 2:  # |q − c|² over C^k = ‖[Re‖Im](q) − [Re‖Im](c)‖² over R^2k
            return self.gamma - _safe_sqrt(_sq_dist_all(q, ents))
        fast = compiled_distance(self, "RotatE all-entity distance", _all_modulus,
                                 _example((3, 4), (5, 4), grad=False), q, ents, grad=False)
        if fast is not None:
            return self.gamma - fast
        if self.use_blocks(q):
            def block(rs: slice, es: slice) -> torch.Tensor:  # the norm-1 distance, in place
                d = q[rs, None, : self.dim] - ents[None, es, : self.dim]
                e = q[rs, None, self.dim:] - ents[None, es, self.dim:]
                return self.gamma - d.square_().add_(e.square_()).sqrt_().sum(-1)

            return self.blocked(block, len(q), self.dim, q)
        return self.chunked(lambda sl: self._score(q[:, None, :], ents[None, sl]), len(q), 2 * self.dim)

    def _score_spo(self, s, p, o):
        return self._score(self._tail_query(s, p), self.entity(o))

    def _score_sp(self, s, p):
        return self._score_all(self._tail_query(s, p))

    def _score_po(self, p, o):
        return self._score_all(self._head_query(p, o))

    def _score_sp_some(self, s, p, o):
        return self._score(self._tail_query(s, p)[:, None, :], self.entity(o))

    def _score_po_some(self, p, o, s):
        return self._score(self._head_query(p, o)[:, None, :], self.entity(s))


class HAKE(KGEModel):
    """HAKE (Zhang et al. 2020), the official ``KGE-HAKE`` scoring function:

    f(h, r, t) = γ − (λ_m ‖m_h ∘ (|m_r| + b_r) − m_t ∘ (1 − b_r)‖₂ + λ_p Σ_i |sin((p_h + p_r − p_t)_i / 2)|)

    Parameters: ``entity`` |E| × 2d = [phase ‖ modulus]; ``relation`` |R| × 3d = [phase ‖ modulus ‖ bias]
    (2|R| rows with reciprocal relations); scalar ``modulus_weight`` λ_m and ``phase_weight`` λ_p, both trained.
    The bias is clamped to b ≤ 1 and then raised to −|m_r| where below (as the original, so |m_r| + b ≥ 0).
    Phases are stored scaled: p = stored / (range / π), range = (γ + 2)/d (``init_range``). Initialisation as the
    original: everything uniform in ±range, relation moduli 1, biases 0, λ_m = ``modulus_weight`` (3.5 for
    FB15k-237) and λ_p = ``phase_weight`` × range (1.0 × range). Scores lie in (−∞, γ] (while λ_m, λ_p ≥ 0).

    All-entity scores: the modulus part is expanded into matrix products
    (‖x − y ∘ m‖² = ‖x‖² − 2 (x ∘ y)·m + (y ∘ y)·(m ∘ m)), the phase part runs over entity chunks.
    Deviation: π is ``math.pi`` (the original's constant reads 3.14159262…, a typo).
    """

    name = "HAKE"
    HPARAMS = {"gamma": Float(0, lo_open=True), "modulus_weight": Float(0), "phase_weight": Float(0),
               "init_range": POSITIVE_OR_NULL}

    def __init__(self, num_entities, num_relations, dim=1000, reciprocal=False, gamma=9.0, modulus_weight=3.5,
                 phase_weight=1.0, init_range=None, chunk_budget_mb=256.0):
        super().__init__(num_entities, num_relations, dim, reciprocal, chunk_budget_mb=chunk_budget_mb, gamma=gamma,
                         modulus_weight=modulus_weight, phase_weight=phase_weight, init_range=init_range)
        self.gamma = float(gamma)
        self.init_range = float(init_range) if init_range is not None else (self.gamma + EPSILON) / dim
        self.phase_factor = math.pi / self.init_range
        self.entity = _uniform_embedding(num_entities, 2 * dim, self.init_range)
        self.relation = _uniform_embedding(self.num_relation_rows, 3 * dim, self.init_range)
        with torch.no_grad():
            self.relation.weight[:, dim:2 * dim] = 1.0
            self.relation.weight[:, 2 * dim:] = 0.0
        self.modulus_weight = nn.Parameter(torch.tensor(float(modulus_weight)))
        self.phase_weight = nn.Parameter(torch.tensor(float(phase_weight) * self.init_range))

    def entity_embeddings(self):
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.relation(p), self.entity(o)]

    def _entity(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(phase in radians, modulus) of entity rows."""
        return x[..., : self.dim] * self.phase_factor, x[..., self.dim:]

    def _relation(self, p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        w = self.relation(p)
        d = self.dim
        phase, mod = w[:, :d] * self.phase_factor, w[:, d:2 * d].abs()
        bias = w[:, 2 * d:].clamp(max=1.0)
        bias = torch.where(bias < -mod, -mod, bias)
        return phase, mod, bias

    def _tail_query(self, s, p):
        """(phase x, modulus x, modulus y) with score terms |sin((x − p_t)/2)| and ‖x − y ∘ m_t‖."""
        ph_h, m_h = self._entity(self.entity(s))
        ph_r, m_r, b = self._relation(p)
        return ph_h + ph_r, m_h * (m_r + b), 1.0 - b

    def _head_query(self, p, o):
        """(phase x, modulus x, modulus y) with score terms |sin((x + p_h)/2)| and ‖x − y ∘ m_h‖."""
        ph_t, m_t = self._entity(self.entity(o))
        ph_r, m_r, b = self._relation(p)
        return ph_r - ph_t, m_t * (1.0 - b), m_r + b

    def _combine(self, phase_sum: torch.Tensor, mod_dist: torch.Tensor) -> torch.Tensor:
        return self.gamma - (self.phase_weight * phase_sum + self.modulus_weight * mod_dist)

    def _score_some(self, query, cand: torch.Tensor, sign: float) -> torch.Tensor:
        """Scores of queries (B, d) against candidate entity rows (B, n, 2d) or (B, 2d)."""
        x_ph, x_m, y_m = query
        if cand.dim() == 3:
            x_ph, x_m, y_m = x_ph[:, None, :], x_m[:, None, :], y_m[:, None, :]
            fast = compiled_distance(
                self, f"HAKE distances (sign {sign:+g}, phase factor {self.phase_factor!r})",
                functools.partial(_hake_formula, sign=sign, factor=self.phase_factor),
                _example((3, 1, 2), (3, 1, 2), (3, 1, 2), (3, 5, 4)), x_ph, x_m, y_m, cand, grad=True)
            if fast is not None:
                return self._combine(*fast)
        return self._combine(*hake_distances(x_ph, x_m, y_m, cand, sign, self.phase_factor))

    def _score_all(self, query, sign: float) -> torch.Tensor:
        x_ph, x_m, y_m = query
        c_ph, c_m = self._entity(self.entity.weight)
        sq = ((x_m * x_m).sum(-1, keepdim=True) - 2.0 * (x_m * y_m) @ c_m.T + (y_m * y_m) @ (c_m * c_m).T)
        mod = _safe_sqrt(sq.clamp_min(0.0))
        fast = compiled_distance(self, f"HAKE all-entity phase (sign {sign:+g})",
                                 functools.partial(_all_phase, sign=sign), _example((3, 2), (5, 2), grad=False),
                                 x_ph, c_ph, grad=False)
        if fast is not None:
            return self._combine(fast, mod)
        if self.use_blocks(x_ph):
            def block(rs: slice, es: slice) -> torch.Tensor:  # the phase sum below, in place
                d = torch.add(x_ph[rs, None, :], c_ph[None, es], alpha=sign)
                return d.mul_(0.5).sin_().abs_().sum(-1)

            return self._combine(self.blocked(block, len(x_ph), self.dim, x_ph), mod)
        xp = x_ph[:, None, :]

        def chunk(sl: slice) -> torch.Tensor:
            return torch.sin((xp + sign * c_ph[None, sl]) / 2.0).abs().sum(-1)

        return self._combine(self.chunked(chunk, len(x_ph), 2 * self.dim), mod)

    def _score_spo(self, s, p, o):
        return self._score_some(self._tail_query(s, p), self.entity(o), -1.0)

    def _score_sp(self, s, p):
        return self._score_all(self._tail_query(s, p), -1.0)

    def _score_po(self, p, o):
        return self._score_all(self._head_query(p, o), 1.0)

    def _score_sp_some(self, s, p, o):
        return self._score_some(self._tail_query(s, p), self.entity(o), -1.0)

    def _score_po_some(self, p, o, s):
        return self._score_some(self._head_query(p, o), self.entity(s), 1.0)


class _HakeDistances(torch.autograd.Function):
    """HAKE's two distance terms of queries against candidate entity rows cand = [stored phase ‖ modulus]
    (…, 2d), the queries broadcasting against the candidates (…, d):

        phase = Σ_i |sin((x_ph + sign · φ c_ph)_i / 2)|,   modulus = ‖x_m − y_m ∘ c_m‖₂     (φ = phase factor)

    Fused for the same reason as ``_ModulusSum`` (the negative-sampling step no longer materialises autograd's
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
    """HAKE's (phase, modulus) distance terms (see ``_HakeDistances``)."""
    return _HakeDistances.apply(x_ph, x_m, y_m, cand, float(sign), float(factor))


def _hake_formula(x_ph, x_m, y_m, cand, sign: float, factor: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``hake_distances`` as plain operations, for torch.compile (same values; gradients 0 at |sin| = 0 and at
    a zero modulus)."""
    k = cand.shape[-1] // 2
    phase = torch.sin((x_ph + (sign * factor) * cand[..., :k]) * 0.5).abs().sum(-1)
    return phase, _safe_sqrt((x_m - y_m * cand[..., k:]).square().sum(-1))


def _givens(params: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """KGEmb's Givens rotation and reflection of x by per-pair parameters (broadcastable (…, d), d even).

    Each coordinate pair (x₀, x₁) with normalised (c, s) = g / ‖g‖ becomes (c x₀ − s x₁, c x₁ + s x₀) under the
    rotation and (c x₀ + s x₁, s x₀ − c x₁) under the reflection.
    """
    g = params.unflatten(-1, (-1, 2))
    g = g / g.norm(dim=-1, keepdim=True).clamp_min(1e-15)
    c, s = g[..., 0], g[..., 1]
    x2 = x.unflatten(-1, (-1, 2))
    x0, x1 = x2[..., 0], x2[..., 1]
    rot = torch.stack([c * x0 - s * x1, c * x1 + s * x0], -1).flatten(-2)
    ref = torch.stack([c * x0 + s * x1, s * x0 - c * x1], -1).flatten(-2)
    return rot, ref


class AttE(KGEModel):
    """AttE (Chami et al. 2020, the Euclidean attention model of the AttH paper; HazyResearch/KGEmb):

    f(h, r, t) = −‖q − e_t‖² + b_h + b_t,  q = Σ_{x ∈ {Ref_r(e_h), Rot_r(e_h)}} softmax_x(a_r · x / √d) x + r_trans

    Parameters: ``entity`` |E| × d, scalar biases ``head_bias`` and ``tail_bias`` |E| × 1 (KGEmb's ``bh``/``bt``,
    ``bias="learn"``); per relation row (2|R| rows with reciprocal relations) ``rotation`` d (d/2 Givens pairs,
    each normalised to (cos, sin)), ``reflection`` d, ``context`` a_r d and ``translation`` d. Scores are real,
    unbounded. Initialisation as KGEmb: entities and translations N(0, init_size²), rotation/reflection
    U(−1, 1), context N(0, 1), biases 0. ``dim`` must be even.

    Defaults: d = 500 with reciprocal relations (the paper's headline FB15k-237 setting). Without reciprocal
    relations head questions are scored directly: the query depends on the head non-linearly, so all-head
    scores run over entity chunks. Deviations: float32 (KGEmb defaults to float64); KGEmb's unused ``dropout``
    and the ``gamma``/``bias`` alternatives are not offered.

    All-entity tail scores: ‖q‖² + ‖e‖² − 2 q·e (a matrix product).
    """

    name = "AttE"
    HPARAMS = {"dim": Int(2, 100_000, multiple_of=2), "init_size": Float(0, lo_open=True)}

    def __init__(self, num_entities, num_relations, dim=500, reciprocal=True, init_size=1e-3, chunk_budget_mb=256.0):
        if dim % 2:
            raise ValueError("AttE needs an even dim (Givens transformations act on coordinate pairs)")
        super().__init__(num_entities, num_relations, dim, reciprocal, chunk_budget_mb=chunk_budget_mb,
                         init_size=init_size)
        n = self.num_relation_rows
        self.entity = init_embedding(num_entities, dim, init_size)
        self.head_bias = nn.Embedding(num_entities, 1)
        self.tail_bias = nn.Embedding(num_entities, 1)
        nn.init.zeros_(self.head_bias.weight)
        nn.init.zeros_(self.tail_bias.weight)
        self.rotation = init_embedding(n, dim, 1.0, "uniform")
        self.reflection = init_embedding(n, dim, 1.0, "uniform")
        self.context = init_embedding(n, dim, 1.0)
        self.translation = init_embedding(n, dim, init_size)
        self.scale = 1.0 / math.sqrt(dim)

    def entity_embeddings(self):
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.translation(p), self.entity(o)]

    def _query(self, h: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """q for head embeddings h (B, d) or (B, n, d) and relations p (B,)."""
        rot_p, ref_p, ctx, trans = (self.rotation(p), self.reflection(p), self.context(p), self.translation(p))
        if h.dim() == 3:
            rot_p, ref_p, ctx, trans = rot_p[:, None], ref_p[:, None], ctx[:, None], trans[:, None]
        rot, _ = _givens(rot_p, h)
        _, ref = _givens(ref_p, h)
        cands = torch.stack([ref, rot], -2)  # (…, 2, d)
        att = torch.softmax((cands * ctx[..., None, :]).sum(-1) * self.scale, dim=-1)
        return (att[..., None] * cands).sum(-2) + trans

    def _score_spo(self, s, p, o):
        q = self._query(self.entity(s), p)
        return (-((q - self.entity(o)) ** 2).sum(-1) + self.head_bias(s)[:, 0] + self.tail_bias(o)[:, 0])

    def _score_sp(self, s, p):
        q = self._query(self.entity(s), p)
        return -_sq_dist_all(q, self.entity.weight) + self.head_bias(s) + self.tail_bias.weight[:, 0][None, :]

    def _score_sp_some(self, s, p, o):
        q = self._query(self.entity(s), p)[:, None, :]
        return -((q - self.entity(o)) ** 2).sum(-1) + self.head_bias(s) + self.tail_bias(o)[..., 0]

    def _score_heads(self, h: torch.Tensor, bh: torch.Tensor, p, o) -> torch.Tensor:
        """Scores of (h_ij, p_i, o_i) for head embeddings h (B, n, d) (or (1, n, d)) with biases bh (·, n)."""
        q = self._query(h.expand(len(p), -1, -1), p)
        return -((q - self.entity(o)[:, None, :]) ** 2).sum(-1) + bh + self.tail_bias(o)

    def _score_po(self, p, o):
        ents, bh = self.entity.weight, self.head_bias.weight[:, 0]

        def chunk(sl: slice) -> torch.Tensor:
            return self._score_heads(ents[None, sl], bh[None, sl], p, o)

        return self.chunked(chunk, len(p), 4 * self.dim)

    def _score_po_some(self, p, o, s):
        return self._score_heads(self.entity(s), self.head_bias(s)[..., 0], p, o)
