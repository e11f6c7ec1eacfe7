"""Translational models that project entities per relation before translating: TransH and TransR.

Both belong to Knowledge Persistence's model set (Bastos et al. 2023 use TransE, TransH, TransR, ComplEx, RotatE,
TuckER and ConvKB). Scores are higher = more plausible, as everywhere in kgeval.

All-entity scores: TransH's hyperplane projection is linear and shared by all candidates of a question, so
‖q − t_⊥‖² expands into matrix products with the entity table (no (batch × |E| × d) tensor). TransR projects
every candidate with the question's own matrix M_r: the entities are projected once per distinct relation of
the batch (an (|E| × k) table, the unavoidable |E|·d·k cost of the model) and the distances to those rows are
matrix products (L2) or ``torch.cdist`` (L1).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import KGEModel, init_embedding
from .distances import safe_sqrt, sq_dist_all
from .hparams import INIT, POSITIVE_OR_NULL, Choice, Float, Int


class TransH(KGEModel):
    """TransH (Wang et al. 2014, "Knowledge Graph Embedding by Translating on Hyperplanes"):

        f(h, r, t) = −‖h_⊥ + d_r − t_⊥‖₂,   x_⊥ = x − (w_rᵀx) w_r,   ‖w_r‖ = 1

    Parameters: ``entity`` |E| × d, ``relation`` |R| × d (the translation d_r), ``normal`` |R| × d (the hyperplane
    normal w_r, used divided by its norm so the unit-norm constraint holds exactly; PyKEEN renormalises the
    stored rows after each step instead, which gives the same score). With reciprocal relations both tables
    hold 2|R| rows. The paper scores with the squared norm; the root gives the same ranking and the same
    gradient direction, and equals PyKEEN's ``TransH`` (``scoring_fct_norm=2``, ``power_norm=False``). The
    paper's soft constraints (‖e‖ ≤ 1, w_rᵀd_r/‖d_r‖ ≤ ε) are left to the regulariser (``factors``).

    All-entity scores, with q = h_⊥ + d_r and w·h_⊥ = 0 (so w·q = w·d_r):
    ‖q − t_⊥‖² = ‖q‖² + ‖t‖² − 2 q·t + 2 (w·d_r)(w·t) − (w·t)², every term a matrix product with the entity table
    (head questions likewise, with q = t_⊥ − d_r).

    Defaults: d = 100 and L2 as in the paper's FB15k experiments (FB15k-237 was published later; no FB15k-237 MRR is
    published by the authors), normal initialisation 1/√d.
    """

    name = "TransH"
    HPARAMS = {"init_std": POSITIVE_OR_NULL, "init": INIT}

    def __init__(self, num_entities, num_relations, dim=100, reciprocal=False, init_std=None, init="normal",
                 chunk_budget_mb=256.0):
        super().__init__(num_entities, num_relations, dim, reciprocal, chunk_budget_mb=chunk_budget_mb,
                         init_std=init_std, init=init)
        self.entity = init_embedding(num_entities, dim, init_std, init)
        self.relation = init_embedding(self.num_relation_rows, dim, init_std, init)
        self.normal = init_embedding(self.num_relation_rows, dim, init_std, init)

    def entity_embeddings(self):
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.relation(p), self.entity(o)]

    def _unit_normal(self, p: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.normal(p), dim=-1)

    @staticmethod
    def _project(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x - (x * w).sum(-1, keepdim=True) * w

    def _score_spo(self, s, p, o):
        w = self._unit_normal(p)
        d = self._project(self.entity(s), w) + self.relation(p) - self._project(self.entity(o), w)
        return -safe_sqrt(d.square().sum(-1))

    def _all(self, q: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """−‖q − e_⊥‖ for every entity e: ‖q − e_⊥‖² = ‖q − e‖² + 2(w·q)(w·e) − (w·e)² since ‖w‖ = 1 (the same
        expansion serves ‖e_⊥ − q‖ of head questions)."""
        ents = self.entity.weight
        we = w @ ents.T  # (B, |E|)
        wq = (w * q).sum(-1, keepdim=True)
        return -safe_sqrt((sq_dist_all(q, ents) + 2.0 * wq * we - we.square()).clamp_min(0.0))

    def _score_sp(self, s, p):
        w = self._unit_normal(p)
        return self._all(self._project(self.entity(s), w) + self.relation(p), w)

    def _score_po(self, p, o):
        # ‖h_⊥ + d − t_⊥‖ = ‖h_⊥ − (t_⊥ − d)‖: the same expansion with q = t_⊥ − d (w·q = −w·d)
        w = self._unit_normal(p)
        return self._all(self._project(self.entity(o), w) - self.relation(p), w)

    def _score_sp_some(self, s, p, o):
        w = self._unit_normal(p)
        q = self._project(self.entity(s), w) + self.relation(p)
        d = q[:, None, :] - self._project(self.entity(o), w[:, None, :])
        return -safe_sqrt(d.square().sum(-1))

    def _score_po_some(self, p, o, s):
        w = self._unit_normal(p)
        q = self._project(self.entity(o), w) - self.relation(p)
        d = self._project(self.entity(s), w[:, None, :]) - q[:, None, :]
        return -safe_sqrt(d.square().sum(-1))


class TransR(KGEModel):
    """TransR (Lin et al. 2015, "Learning Entity and Relation Embeddings for Knowledge Graph Completion"):

        f(h, r, t) = −‖c(M_r h) + r − c(M_r t)‖_p,   c(x) = x · min(1, m / ‖x‖₂)

    Entities live in R^d, relations in R^k, M_r ∈ R^{k×d} per relation. ``max_projection_norm`` m enforces the
    paper's constraint ‖M_r e‖₂ ≤ 1 by clamping the projection (PyKEEN's ``TransRInteraction`` clamps the p-norm; null:
    no clamp). ``norm`` p = 1 (PyKEEN's default) or 2 (the paper's, there squared — same ranking).

    Parameters: ``entity`` |E| × d, ``relation`` |R| × k, ``projection`` |R| × k × d (initialised to the identity
    padded or cut to k × d, the paper's initialisation from TransE embeddings with M_r = I, plus normal noise of
    ``init_std``). With reciprocal relations the relation tables hold 2|R| rows.

    Equal to PyKEEN's ``TransR`` with ``scoring_fct_norm=p``, ``power_norm=False``, whose projection matrix is
    stored transposed (d × k, applied as e @ M).

    Defaults: d = k = 100 (the paper's FB15k setting; no FB15k-237 MRR is published by the authors).
    """

    name = "TransR"
    HPARAMS = {"relation_dim": Int(1, 100_000, nullable=True), "norm": Choice(1, 2),
               "max_projection_norm": POSITIVE_OR_NULL, "init_std": POSITIVE_OR_NULL, "init": INIT,
               "projection_noise": Float(0)}

    def __init__(self, num_entities, num_relations, dim=100, reciprocal=False, relation_dim=None, norm=1,
                 max_projection_norm=1.0, init_std=None, init="normal", projection_noise=0.01,
                 chunk_budget_mb=256.0):
        if norm not in (1, 2):
            raise ValueError("TransR norm must be 1 or 2")
        super().__init__(num_entities, num_relations, dim, reciprocal, chunk_budget_mb=chunk_budget_mb,
                         relation_dim=relation_dim, norm=norm, max_projection_norm=max_projection_norm,
                         init_std=init_std, init=init, projection_noise=projection_noise)
        self.relation_dim = int(relation_dim) if relation_dim is not None else self.dim
        self.norm = norm
        self.max_norm = float(max_projection_norm) if max_projection_norm is not None else None
        self.entity = init_embedding(num_entities, dim, init_std, init)
        self.relation = init_embedding(self.num_relation_rows, self.relation_dim, init_std, init)
        eye = torch.eye(self.relation_dim, dim).expand(self.num_relation_rows, -1, -1)
        self.projection = nn.Parameter(eye + projection_noise * torch.randn(eye.shape))

    def entity_embeddings(self):
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.relation(p), self.entity(o)]

    def _clamp(self, x: torch.Tensor) -> torch.Tensor:
        if self.max_norm is None:
            return x
        n = x.norm(dim=-1, keepdim=True)
        return x * (self.max_norm / n.clamp_min(self.max_norm))

    def _proj(self, e: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """c(M_p e) for rows e (…, d) and relation ids p broadcasting to e's leading shape."""
        return self._clamp(torch.einsum("...kd,...d->...k", self.projection[p], e))

    def _dist(self, x: torch.Tensor) -> torch.Tensor:
        return x.abs().sum(-1) if self.norm == 1 else safe_sqrt(x.square().sum(-1))

    def _score_spo(self, s, p, o):
        return -self._dist(self._proj(self.entity(s), p) + self.relation(p) - self._proj(self.entity(o), p))

    def _all(self, q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """−‖q_b − c(M_{p_b} e)‖ for every entity e: the entities are projected once per distinct relation of the
        batch (rows of a question share its relation's projected table)."""
        rels, inverse = torch.unique(p, return_inverse=True)
        pieces, order = [], []
        for j in range(len(rels)):  # one pass per distinct relation, never per question or entity
            rows = (inverse == j).nonzero().squeeze(1)
            ents = self._clamp(self.entity.weight @ self.projection[rels[j]].T)  # (|E|, k)
            qs = q[rows]
            dist = torch.cdist(qs, ents, p=1) if self.norm == 1 else safe_sqrt(sq_dist_all(qs, ents))
            pieces.append(-dist)
            order.append(rows)
        return torch.cat(pieces)[torch.argsort(torch.cat(order))]

    def _score_sp(self, s, p):
        return self._all(self._proj(self.entity(s), p) + self.relation(p), p)

    def _score_po(self, p, o):
        return self._all(self._proj(self.entity(o), p) - self.relation(p), p)

    def _score_sp_some(self, s, p, o):
        q = self._proj(self.entity(s), p) + self.relation(p)
        c = self._proj(self.entity(o), p[:, None])
        return -self._dist(q[:, None, :] - c)

    def _score_po_some(self, p, o, s):
        q = self._proj(self.entity(o), p) - self.relation(p)
        c = self._proj(self.entity(s), p[:, None])
        return -self._dist(c - q[:, None, :])
