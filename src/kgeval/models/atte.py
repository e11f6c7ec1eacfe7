"""AttE (Chami et al., ACL 2020): attention over relation-specific Givens rotation and reflection."""

from __future__ import annotations

import math

import torch
from torch import nn

from .base import KGEModel, init_embedding
from .distances import sq_dist_all
from .hparams import Float, Int


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
        return -sq_dist_all(q, self.entity.weight) + self.head_bias(s) + self.tail_bias.weight[:, 0][None, :]

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
