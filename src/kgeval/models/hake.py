"""HAKE (Zhang et al., AAAI 2020): hierarchy-aware embeddings, a modulus part and a phase part."""

from __future__ import annotations

import functools
import math

import torch
from torch import nn

from .base import KGEModel
from .distances import (
    EPSILON,
    all_phase,
    compiled_distance,
    example_inputs,
    hake_distances,
    hake_formula,
    safe_sqrt,
    uniform_embedding,
)
from .hparams import POSITIVE_OR_NULL, Float


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
        self.entity = uniform_embedding(num_entities, 2 * dim, self.init_range)
        self.relation = uniform_embedding(self.num_relation_rows, 3 * dim, self.init_range)
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
                functools.partial(hake_formula, sign=sign, factor=self.phase_factor),
                example_inputs((3, 1, 2), (3, 1, 2), (3, 1, 2), (3, 5, 4)), x_ph, x_m, y_m, cand, grad=True)
            if fast is not None:
                return self._combine(*fast)
        return self._combine(*hake_distances(x_ph, x_m, y_m, cand, sign, self.phase_factor))

    def _score_all(self, query, sign: float) -> torch.Tensor:
        x_ph, x_m, y_m = query
        c_ph, c_m = self._entity(self.entity.weight)
        sq = ((x_m * x_m).sum(-1, keepdim=True) - 2.0 * (x_m * y_m) @ c_m.T + (y_m * y_m) @ (c_m * c_m).T)
        mod = safe_sqrt(sq.clamp_min(0.0))
        fast = compiled_distance(self, f"HAKE all-entity phase (sign {sign:+g})",
                                 functools.partial(all_phase, sign=sign), example_inputs((3, 2), (5, 2), grad=False),
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


