"""Bilinear (decomposition) models: DistMult, RESCAL, ComplEx, TuckER. All-entity scores are matrix products."""

from __future__ import annotations

import torch
from torch import nn

from .base import KGEModel, init_embedding


class _Embeddings(KGEModel):
    """Entity and relation embedding tables with LibKGE-style dropout on looked-up embeddings."""

    def __init__(self, num_entities, num_relations, dim, reciprocal=False, relation_dim=None,
                 entity_dropout=0.0, relation_dropout=0.0, init_std=None, init="normal", **kw):
        super().__init__(num_entities, num_relations, dim, reciprocal, relation_dim=relation_dim,
                         entity_dropout=entity_dropout, relation_dropout=relation_dropout, init_std=init_std,
                         init=init, **kw)
        self.entity = init_embedding(num_entities, dim, init_std, init)
        self.relation = init_embedding(self.num_relation_rows, relation_dim or dim, init_std, init)
        self.edrop = nn.Dropout(entity_dropout)
        self.rdrop = nn.Dropout(relation_dropout)

    def e(self, idx: torch.Tensor) -> torch.Tensor:
        return self.edrop(self.entity(idx))

    def r(self, idx: torch.Tensor) -> torch.Tensor:
        return self.rdrop(self.relation(idx))

    def all_e(self) -> torch.Tensor:
        return self.edrop(self.entity.weight)

    def entity_embeddings(self) -> torch.Tensor:
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.relation(p), self.entity(o)]


class DistMult(_Embeddings):
    """DistMult (Yang et al. 2015): f(h, r, t) = Σ e_h ∘ r ∘ e_t; e, r ∈ R^d."""

    name = "DistMult"

    def _score_spo(self, s, p, o):
        return (self.e(s) * self.r(p) * self.e(o)).sum(-1)

    def _score_sp(self, s, p):
        return (self.e(s) * self.r(p)) @ self.all_e().T

    def _score_po(self, p, o):
        return (self.r(p) * self.e(o)) @ self.all_e().T
