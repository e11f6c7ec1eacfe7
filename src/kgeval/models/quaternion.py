"""BiQUE: biquaternion embeddings (Guo & Kok, EMNLP 2021), and the biquaternion arithmetic it needs.

Layout (the official code's, so its checkpoints map directly): a biquaternion vector of rank k is a real row of
8k columns [w ‖ x ‖ y ‖ z], one block of 2k per quaternion component (1, i, j, k), each block a complex vector
stored as [re ‖ im] (k columns each). The complex unit (the biquaternion's I) commutes with i, j, k.
"""

from __future__ import annotations

import torch

from .base import KGEModel, init_embedding
from .hparams import INIT, POSITIVE_OR_NULL, Int


def complex_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Element-wise product of complex vectors stored as [re ‖ im] along the last axis."""
    a_re, a_im = a.chunk(2, dim=-1)
    b_re, b_im = b.chunk(2, dim=-1)
    return torch.cat([a_re * b_re - a_im * b_im, a_re * b_im + a_im * b_re], dim=-1)


def hamilton_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Element-wise Hamilton product a ⊗ b of biquaternion vectors (layout [w ‖ x ‖ y ‖ z], each [re ‖ im]):

        (a ⊗ b)_w = a_w b_w − a_x b_x − a_y b_y − a_z b_z
        (a ⊗ b)_x = a_w b_x + a_x b_w + a_y b_z − a_z b_y
        (a ⊗ b)_y = a_w b_y − a_x b_z + a_y b_w + a_z b_x
        (a ⊗ b)_z = a_w b_z + a_x b_y − a_y b_x + a_z b_w

    with complex products of the components (so i·j = k, j·i = −k, i² = j² = k² = −1, I² = −1).
    """
    aw, ax, ay, az = a.chunk(4, dim=-1)
    bw, bx, by, bz = b.chunk(4, dim=-1)

    def m(u, v):
        return complex_mul(u, v)

    return torch.cat([
        m(aw, bw) - m(ax, bx) - m(ay, by) - m(az, bz),
        m(aw, bx) + m(ax, bw) + m(ay, bz) - m(az, by),
        m(aw, by) - m(ax, bz) + m(ay, bw) + m(az, bx),
        m(aw, bz) + m(ax, by) - m(ay, bx) + m(az, bw),
    ], dim=-1)


def adjoint_factor(q: torch.Tensor) -> torch.Tensor:
    """The biquaternion q̃ with ⟨a ⊗ q, t⟩ = ⟨a, t ⊗ q̃⟩ for the real dot product ⟨·,·⟩ of the 8k columns: the
    quaternion conjugate of the complex conjugate of q (negate x, y, z and every imaginary part; i.e. keep
    w_re, x_im, y_im, z_im and negate w_im, x_re, y_re, z_re)."""
    k = q.shape[-1] // 8
    sign = torch.ones(8, dtype=q.dtype, device=q.device)
    sign[[1, 2, 4, 6]] = -1.0  # blocks: w_re w_im x_re x_im y_re y_im z_re z_im
    return q * sign.repeat_interleave(k)


def biquaternion_modulus(q: torch.Tensor) -> torch.Tensor:
    """Per position of the rank: sqrt of the sum of squares of the 8 reals (the official ``get_norm(x, 8)``)."""
    k = q.shape[-1] // 8
    return q.view(*q.shape[:-1], 8, k).pow(2).sum(-2).sqrt()


class BiQUE(KGEModel):
    """BiQUE (Guo & Kok 2021): f(h, r, t) = ⟨(e_h + r_add) ⊗ r_mul, e_t⟩.

    e_h, e_t, r_add, r_mul are biquaternion vectors of rank k (4 complex components, 8k reals, layout in the
    module docstring); ⊗ is the element-wise Hamilton product with complex arithmetic (``hamilton_product``);
    ⟨·,·⟩ is the real dot product of the 8k columns (the official code's ``res @ E.T``; no conjugation and no
    normalisation of r_mul, as in the official code). Scores are unbounded reals, higher = more plausible.

    Parameters: ``entity`` |E| × 8k; ``relation`` (relation rows) × 16k laid out [r_mul ‖ r_add] (the official
    order). **``dim`` is the number of real entity columns, 8k** (must be a multiple of 8); the published rank
    k = 128 is ``dim=1024``.

    All-entity scores: tails q @ Eᵀ with q = (e_h + r_add) ⊗ r_mul. Heads (without reciprocal relations) use the
    adjoint of right multiplication, ⟨(h + a) ⊗ m, t⟩ = ⟨h, t ⊗ m̃⟩ + ⟨a ⊗ m, t⟩ with m̃ = ``adjoint_factor(m)``,
    so score_po = E @ (t ⊗ m̃) + ⟨a ⊗ m, t⟩: also one matrix product. Non-reciprocal use is an extension; the
    published model uses reciprocal relations (the default).

    Regularisation: the official code trains with a weighted N3,
    λ (2 Σ|e_h + r_add|³ + ½ Σ|r_mul|³ + 2 Σ|e_t|³) / B, where |·| is the biquaternion modulus per rank position
    (``biquaternion_modulus``: the square root of the sum of squares of the 8 reals; the head term takes e_h
    after adding r_add, as the official code's in-place addition does). ``factors`` expresses the weights
    through the trainer's plain N3 (λ Σ_f Σ|f|³ / B) by scaling each modulus by the cube root of its weight:
    [2^⅓ |e_h + r_add|, (½)^⅓ |r_mul|, 2^⅓ |e_t|]. So ``regularizer: n3`` with weight .07 is the published
    weighted N3; with ``l2`` the weights would be 2^⅔ and (½)^⅔ instead (not a published setting).

    Defaults: the published setting (reciprocal relations, k = 128, initialisation N(0, 1e-3²) — the official
    ``init_size`` 1e-3 times a standard normal —, no dropout, which the original does not use; train with 1vsAll
    CE, Adagrad .1, batch 500, weighted N3 .07, 300 epochs).
    """

    name = "BiQUE"
    HPARAMS = {"dim": Int(8, 100_000, multiple_of=8), "init_std": POSITIVE_OR_NULL, "init": INIT}  # 8k real columns
    #: weights of the official weighted N3 on the head, relation and tail moduli
    N3_WEIGHTS = (2.0, 0.5, 2.0)

    def __init__(self, num_entities, num_relations, dim=1024, reciprocal=True, init_std=1e-3, init="normal",
                 **kw):
        if dim % 8:
            raise ValueError(f"BiQUE dim is the number of real columns 8k and must be a multiple of 8, got {dim}")
        super().__init__(num_entities, num_relations, dim, reciprocal, init_std=init_std, init=init, **kw)
        self.rank = dim // 8
        self.entity = init_embedding(num_entities, dim, init_std, init)
        self.relation = init_embedding(self.num_relation_rows, 2 * dim, init_std, init)

    def entity_embeddings(self):
        return self.entity.weight

    def _rel(self, p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(r_mul, r_add) of relation rows p."""
        r = self.relation(p)
        return r[:, :self.dim], r[:, self.dim:]

    def _query_sp(self, s, p) -> torch.Tensor:
        r_mul, r_add = self._rel(p)
        return hamilton_product(self.entity(s) + r_add, r_mul)

    def _query_po(self, p, o) -> tuple[torch.Tensor, torch.Tensor]:
        """(v, c) with f(h, p, o) = ⟨e_h, v⟩ + c."""
        r_mul, r_add = self._rel(p)
        t = self.entity(o)
        v = hamilton_product(t, adjoint_factor(r_mul))
        c = (hamilton_product(r_add, r_mul) * t).sum(-1)
        return v, c

    def _score_spo(self, s, p, o):
        return (self._query_sp(s, p) * self.entity(o)).sum(-1)

    def _score_sp(self, s, p):
        return self._query_sp(s, p) @ self.entity.weight.T

    def _score_po(self, p, o):
        v, c = self._query_po(p, o)
        return v @ self.entity.weight.T + c[:, None]

    def _score_sp_some(self, s, p, o):
        return torch.bmm(self.entity(o), self._query_sp(s, p).unsqueeze(2)).squeeze(2)

    def _score_po_some(self, p, o, s):
        v, c = self._query_po(p, o)
        return torch.bmm(self.entity(s), v.unsqueeze(2)).squeeze(2) + c[:, None]

    def factors(self, s, p, o):
        r_mul, r_add = self._rel(p)
        wh, wr, wt = (w ** (1.0 / 3.0) for w in self.N3_WEIGHTS)
        return [wh * biquaternion_modulus(self.entity(s) + r_add), wr * biquaternion_modulus(r_mul),
                wt * biquaternion_modulus(self.entity(o))]
