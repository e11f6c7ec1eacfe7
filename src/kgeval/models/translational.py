"""Translational and distance models: TransE, RotatE, HAKE, AttE."""

from __future__ import annotations

import torch
from torch import nn

from .base import KGEModel, init_embedding


class TransE(KGEModel):
    """TransE (Bordes et al. 2013): f(h, r, t) = −‖e_h + r − e_t‖_p, p ∈ {1, 2}; e, r ∈ R^d.

    All-entity scores: p = 2 through ‖q‖² + ‖e‖² − 2 q·e (a matrix product), p = 1 with ``torch.cdist``.
    """

    name = "TransE"

    def __init__(self, num_entities, num_relations, dim=200, reciprocal=False, norm=2, entity_dropout=0.0,
                 relation_dropout=0.0, init_std=None, init="normal", **kw):
        if norm not in (1, 2):
            raise ValueError("TransE norm must be 1 or 2")
        super().__init__(num_entities, num_relations, dim, reciprocal, norm=norm, entity_dropout=entity_dropout,
                         relation_dropout=relation_dropout, init_std=init_std, init=init, **kw)
        self.norm = norm
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
            return torch.cdist(q, ents, p=1)
        sq = (q * q).sum(-1, keepdim=True) + (ents * ents).sum(-1)[None, :] - 2.0 * (q @ ents.T)
        return sq.clamp_min(1e-12).sqrt()

    def _score_spo(self, s, p, o):
        d = self.edrop(self.entity(s)) + self.rdrop(self.relation(p)) - self.edrop(self.entity(o))
        return -d.norm(p=self.norm, dim=-1)

    def _score_sp(self, s, p):
        return -self._dist_all(self.edrop(self.entity(s)) + self.rdrop(self.relation(p)))

    def _score_po(self, p, o):
        # ‖h + r − t‖ = ‖h − (t − r)‖
        return -self._dist_all(self.edrop(self.entity(o)) - self.rdrop(self.relation(p)))
