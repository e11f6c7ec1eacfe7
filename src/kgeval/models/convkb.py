"""ConvKB (Nguyen et al. 2018, "A Novel Embedding Model for Knowledge Base Completion Based on Convolutional Neural
Network"; daiquocnguyen/ConvKB), one of Knowledge Persistence's seven models.

The triple is the d × 3 matrix A = [h; r; t]; N filters ω_c ∈ R^{1×3} slide over its rows, so feature c of row i
is g(ω_c1 h_i + ω_c2 r_i + ω_c3 t_i + b_c); the N·d features, concatenated filter by filter, meet one weight
vector w:

    f(h, r, t) = w · vec(ReLU(conv(A))) + b

**Sign**: the original trains softplus(l · f) with l = +1 for true triples, so there a *lower* f is more
plausible; kgeval (like PyKEEN's ``ConvKBInteraction``) scores higher = more plausible, the same model with w and
b negated. Equal to PyKEEN's ``ConvKB`` (conv weight (N, 1, 1, 3) and bias, linear (1, N·d) and bias) given the
same weights.

All-entity scores: the candidate enters every feature inside the ReLU, so no single matrix product applies. The
question's part a_{c,i} = ω_c1 h_i + ω_c2 r_i + b_c is computed once; ReLU(x) = (x + |x|)/2 then splits the
score into matrix products and two L1 distances over the N·d features (``torch.cdist``; see ``ConvKB._all``).
With feature dropout in training the elementwise form runs over entity chunks (``KGEModel.chunked``). Head
questions are the same with the roles of ω_c1 and ω_c3 swapped.

Defaults are the paper's FB15k-237 setting: d = 100, N = 50 filters, the filters initialised to
[0.1, 0.1, −0.1] (the paper's truncated-normal alternative is ``init_filters="normal"``), dropout 0 on the
features; the paper trains with Adam 5e-6 and L2 λ = 0.001 on w, from TransE embeddings.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import KGEModel, init_embedding
from .hparams import DROPOUT, INIT, POSITIVE_OR_NULL, Choice, Int


class ConvKB(KGEModel):
    """ConvKB: see the module docstring. Parameters: ``entity`` |E| × d, ``relation`` |R| × d (2|R| with reciprocal
    relations), ``conv_weight`` (N, 3) and ``conv_bias`` (N), ``weight`` (N·d, filter-major) and ``bias``."""

    name = "ConvKB"
    HPARAMS = {"filters": Int(1, 10_000), "hidden_dropout": DROPOUT, "init_std": POSITIVE_OR_NULL, "init": INIT,
               "init_filters": Choice("constant", "normal")}

    def __init__(self, num_entities, num_relations, dim=100, reciprocal=False, filters=50, hidden_dropout=0.0,
                 init_std=None, init="xavier", init_filters="constant", chunk_budget_mb=256.0):
        super().__init__(num_entities, num_relations, dim, reciprocal, chunk_budget_mb=chunk_budget_mb,
                         filters=filters, hidden_dropout=hidden_dropout, init_std=init_std, init=init,
                         init_filters=init_filters)
        self.filters = int(filters)
        self.entity = init_embedding(num_entities, dim, init_std, init)
        self.relation = init_embedding(self.num_relation_rows, dim, init_std, init)
        if init_filters == "constant":
            conv = torch.tensor([0.1, 0.1, -0.1]).expand(self.filters, 3).clone()
        else:
            conv = torch.nn.init.trunc_normal_(torch.empty(self.filters, 3), std=0.1, a=-0.2, b=0.2)
        self.conv_weight = nn.Parameter(conv)
        self.conv_bias = nn.Parameter(torch.zeros(self.filters))
        self.weight = nn.Parameter(torch.empty(self.filters * self.dim))
        nn.init.uniform_(self.weight, -(6.0 / (self.filters * self.dim + 1)) ** 0.5,
                         (6.0 / (self.filters * self.dim + 1)) ** 0.5)
        self.bias = nn.Parameter(torch.zeros(()))
        self.drop = nn.Dropout(hidden_dropout)

    def entity_embeddings(self):
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.relation(p), self.entity(o)]

    def _features(self, x: torch.Tensor) -> torch.Tensor:
        """(…, N, d) pre-activations → (…) scores."""
        x = self.drop(F.relu(x))
        return (x * self.weight.view(self.filters, self.dim)).sum((-1, -2)) + self.bias

    def _partial(self, known: torch.Tensor, r: torch.Tensor, known_col: int) -> torch.Tensor:
        """The question's part of every pre-activation, (B, N, d): ω_known·known_i + ω_2·r_i + b."""
        w = self.conv_weight
        return (w[:, known_col, None] * known[:, None, :] + w[:, 1, None] * r[:, None, :]
                + self.conv_bias[:, None])

    def _score_spo(self, s, p, o):
        a = self._partial(self.entity(s), self.relation(p), 0)
        return self._features(a + self.conv_weight[:, 2, None] * self.entity(o)[:, None, :])

    def _all(self, a: torch.Tensor, col: int) -> torch.Tensor:
        """Scores of every entity in column ``col`` of A, given the question's part a (B, N, d).

        With ReLU(x) = (x + |x|)/2 and, per feature (c, i), w·|a + ω e| = sign(w) · |u − v| for u = |w| a and
        v = −|w| ω e, the score is a linear part (two matrix-vector products) plus half the L1 distance between
        u and v over the features with w > 0 minus that over the features with w < 0: two ``torch.cdist``
        calls instead of a (B × |E| × N·d) elementwise pass. Exact (float rounding aside); with dropout on
        the features (training) the elementwise form over entity chunks is used.
        """
        coef = self.conv_weight[:, col, None]  # (N, 1)
        ents = self.entity.weight
        if self.training and self.drop.p > 0:
            return self.chunked(lambda sl: self._features(a[:, None] + coef * ents[sl, None, :]), len(a),
                                self.filters * self.dim)
        w = self.weight.view(self.filters, self.dim)
        lin = (a * w).sum((-1, -2))[:, None] + (ents @ (w * coef).sum(0))[None, :]  # Σ w (a + ω e)
        aw = w.abs()
        u = (aw * a).flatten(1)  # (B, N·d)
        v = (-(aw * coef)[None] * ents[:, None, :]).flatten(1)  # (|E|, N·d)
        pos = (w > 0).flatten()
        neg = (w < 0).flatten()
        l1 = torch.zeros_like(lin)
        if pos.any():
            l1 = l1 + torch.cdist(u[:, pos], v[:, pos], p=1)
        if neg.any():
            l1 = l1 - torch.cdist(u[:, neg], v[:, neg], p=1)
        return 0.5 * (lin + l1) + self.bias

    def _score_sp(self, s, p):
        return self._all(self._partial(self.entity(s), self.relation(p), 0), 2)

    def _score_po(self, p, o):
        return self._all(self._partial(self.entity(o), self.relation(p), 2), 0)

    def _score_sp_some(self, s, p, o):
        a = self._partial(self.entity(s), self.relation(p), 0)
        return self._features(a[:, None] + self.conv_weight[:, 2, None] * self.entity(o)[:, :, None, :])

    def _score_po_some(self, p, o, s):
        a = self._partial(self.entity(o), self.relation(p), 2)
        return self._features(a[:, None] + self.conv_weight[:, 0, None] * self.entity(s)[:, :, None, :])
