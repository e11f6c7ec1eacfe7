"""Translational models: TransE and RotatE (HAKE and AttE, distance models too, have modules of their own).

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

import torch
from torch import nn

from .base import KGEModel, init_embedding
from .distances import (
    EPSILON,
    all_l1,
    all_modulus,
    compiled_distance,
    example_inputs,
    lp_formula,
    modulus_formula,
    modulus_sum,
    safe_sqrt,
    sq_dist_all,
    uniform_embedding,
)
from .hparams import DROPOUT, INIT, POSITIVE_OR_NULL, Choice, Float


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
            fast = compiled_distance(self, "TransE all-entity L1 distance", all_l1,
                                     example_inputs((3, 4), (5, 4), grad=False), q, ents, grad=False)
            return fast if fast is not None else torch.cdist(q, ents, p=1)
        return safe_sqrt(sq_dist_all(q, ents))

    def _dist_some(self, q: torch.Tensor, cand: torch.Tensor) -> torch.Tensor:
        p = self.norm
        fast = compiled_distance(self, f"TransE L{p} distance", functools.partial(lp_formula, p=p),
                                 example_inputs((3, 1, 4), (3, 5, 4)), q[:, None, :], cand, grad=True)
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
        self.entity = uniform_embedding(num_entities, 2 * dim, self.init_range)
        self.relation = uniform_embedding(self.num_relation_rows, dim, math.pi / self.phase_scale)

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
                fast = compiled_distance(self, "RotatE modulus distance", modulus_formula,
                                         example_inputs((3, 1, 4), (3, 5, 4)), q, c, grad=True)
            return self.gamma - (fast if fast is not None else modulus_sum(q, c))
        return self.gamma - safe_sqrt((q - c).square().sum(-1))

    def _score_all(self, q: torch.Tensor) -> torch.Tensor:
        ents = self.entity.weight
        if self.norm == 2:  # |q − c|² over C^k = ‖[Re‖Im](q) − [Re‖Im](c)‖² over R^2k
            return self.gamma - safe_sqrt(sq_dist_all(q, ents))
        fast = compiled_distance(self, "RotatE all-entity distance", all_modulus,
                                 example_inputs((3, 4), (5, 4), grad=False), q, ents, grad=False)
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


