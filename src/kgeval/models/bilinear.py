"""Bilinear (decomposition) models: DistMult, RESCAL, ComplEx, TuckER. All-entity scores are matrix products.

Every model here scores a question by first building a query vector q (B × d) from the known entity and the
relation, then multiplying it with the entity matrix: ``score_sp = q @ Eᵀ``. Nothing of size B × |E| × d is ever
built.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import KGEModel, init_embedding
from .hparams import DROPOUT, INIT, POSITIVE_OR_NULL, Bool, Int


class _Embeddings(KGEModel):
    """Entity and relation embedding tables with LibKGE-style dropout on looked-up embeddings."""

    HPARAMS = {"relation_dim": Int(1, 100_000, nullable=True), "entity_dropout": DROPOUT,
               "relation_dropout": DROPOUT, "init_std": POSITIVE_OR_NULL, "init": INIT}

    def __init__(self, num_entities, num_relations, dim, reciprocal=False, relation_dim=None,
                 entity_dropout=0.0, relation_dropout=0.0, init_std=None, init="normal", **kw):
        super().__init__(num_entities, num_relations, dim, reciprocal, relation_dim=relation_dim,
                         entity_dropout=entity_dropout, relation_dropout=relation_dropout, init_std=init_std,
                         init=init, **kw)
        self._tables(dim, relation_dim or dim, entity_dropout, relation_dropout, init_std, init)

    def _tables(self, entity_width: int, relation_width: int, entity_dropout: float, relation_dropout: float,
                init_std: float | None, init: str) -> None:
        """Create the entity table (|E| × entity_width), the relation table (relation rows × relation_width)
        and the two dropouts (in this order, so that a seed gives the same initial weights)."""
        self.entity = init_embedding(self.num_entities, entity_width, init_std, init)
        self.relation = init_embedding(self.num_relation_rows, relation_width, init_std, init)
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


class RESCAL(_Embeddings):
    """RESCAL (Nickel et al. 2011): f(h, r, t) = e_hᵀ M_r e_t.

    Parameters: entities e ∈ R^d (``entity``: |E| × d); one full matrix M_r ∈ R^{d×d} per relation row, stored
    flattened row-major as an embedding of (relation rows) × d² (``relation``), M_r = row.view(d, d) — LibKGE's
    layout, so LibKGE checkpoints map directly (and PyKEEN's (d, d) relation representation is the same matrix).
    Scores are unbounded reals, higher = more plausible. All-entity scores: (e_h M_r) @ Eᵀ for tails and
    (M_r e_t) @ Eᵀ for heads. Dropout (LibKGE) acts on the looked-up entity vectors and relation matrices.

    Defaults: LibKGE's published FB15k-237 setting (1vsAll, no reciprocal relations, d = 128, dropout .43 on
    entities and .16 on relations). The published model was initialised with LibKGE's searched initialiser; here
    the default is N(0, 1/d) for entities and N(0, 1/d²) for the matrix entries (``init``/``init_std`` choose
    another).
    """

    name = "RESCAL"

    def __init__(self, num_entities, num_relations, dim=128, reciprocal=False, entity_dropout=0.43,
                 relation_dropout=0.16, init_std=None, init="normal", **kw):
        KGEModel.__init__(self, num_entities, num_relations, dim, reciprocal, entity_dropout=entity_dropout,
                          relation_dropout=relation_dropout, init_std=init_std, init=init, **kw)
        self._tables(dim, dim * dim, entity_dropout, relation_dropout, init_std, init)

    def _matrices(self, p: torch.Tensor) -> torch.Tensor:
        return self.r(p).view(-1, self.dim, self.dim)

    def _score_spo(self, s, p, o):
        q = torch.bmm(self.e(s).unsqueeze(1), self._matrices(p)).squeeze(1)
        return (q * self.e(o)).sum(-1)

    def _score_sp(self, s, p):
        q = torch.bmm(self.e(s).unsqueeze(1), self._matrices(p)).squeeze(1)  # e_hᵀ M_r
        return q @ self.all_e().T

    def _score_po(self, p, o):
        q = torch.bmm(self._matrices(p), self.e(o).unsqueeze(2)).squeeze(2)  # M_r e_t
        return q @ self.all_e().T

    def _score_sp_some(self, s, p, o):
        q = torch.bmm(self.e(s).unsqueeze(1), self._matrices(p))  # B × 1 × d
        return torch.bmm(q, self.e(o).transpose(1, 2)).squeeze(1)

    def _score_po_some(self, p, o, s):
        q = torch.bmm(self._matrices(p), self.e(o).unsqueeze(2))  # B × d × 1
        return torch.bmm(self.e(s), q).squeeze(2)


class ComplEx(_Embeddings):
    """ComplEx (Trouillon et al. 2016): f(h, r, t) = Re⟨e_h, r, conj(e_t)⟩ = Re Σ_i e_h,i · r_i · conj(e_t,i).

    Parameters: complex vectors of rank k stored as real rows of 2k columns [re ‖ im] (LibKGE and kbc layout):
    ``entity`` |E| × 2k, ``relation`` (relation rows) × 2k. **``dim`` is the number of real columns, 2k** (must be
    even); the published kbc rank 1000 is ``dim=2000``. Scores are unbounded reals, higher = more plausible.
    All-entity scores: the complex query e_h ∘ r (tails) or r ∘ conj(e_t) conjugated (heads) as [re ‖ im],
    multiplied with the entity matrix.

    ``factors`` returns the moduli |e_h|, |r|, |e_t| (k columns each, sqrt(re² + im²)) as kbc's N3 regulariser
    does (Lacroix et al. 2018), so ``regularizer: n3`` is kbc's N3.

    Defaults: kbc's published setting (reciprocal relations, rank 1000, N(0, 1e-3²) initialisation — kbc's
    ``init_size`` 1e-3 times a standard normal —, no dropout; train with 1vsAll CE, Adagrad .1, N3 5e-2,
    batch 1000). ``entity_dropout``/``relation_dropout`` give LibKGE's variant (dropout on the [re ‖ im] rows).
    """

    name = "ComplEx"
    HPARAMS = {"dim": Int(2, 100_000, multiple_of=2)}  # 2k real columns

    def __init__(self, num_entities, num_relations, dim=2000, reciprocal=True, entity_dropout=0.0,
                 relation_dropout=0.0, init_std=1e-3, init="normal", **kw):
        if dim % 2:
            raise ValueError(f"ComplEx dim is the number of real columns 2k and must be even, got {dim}")
        KGEModel.__init__(self, num_entities, num_relations, dim, reciprocal, entity_dropout=entity_dropout,
                          relation_dropout=relation_dropout, init_std=init_std, init=init, **kw)
        self._tables(dim, dim, entity_dropout, relation_dropout, init_std, init)
        self.rank = dim // 2

    def _split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x[..., :self.rank], x[..., self.rank:]

    def _query_sp(self, s, p) -> torch.Tensor:
        """e_h ∘ r as [re ‖ im]: f = ⟨q, e_t⟩ (real dot product)."""
        h_re, h_im = self._split(self.e(s))
        r_re, r_im = self._split(self.r(p))
        return torch.cat([h_re * r_re - h_im * r_im, h_re * r_im + h_im * r_re], -1)

    def _query_po(self, p, o) -> torch.Tensor:
        """conj(r ∘ conj(e_t)) as [re ‖ im]: f = ⟨q, e_h⟩ (real dot product)."""
        r_re, r_im = self._split(self.r(p))
        t_re, t_im = self._split(self.e(o))
        return torch.cat([r_re * t_re + r_im * t_im, r_re * t_im - r_im * t_re], -1)

    def _score_spo(self, s, p, o):
        return (self._query_sp(s, p) * self.e(o)).sum(-1)

    def _score_sp(self, s, p):
        return self._query_sp(s, p) @ self.all_e().T

    def _score_po(self, p, o):
        return self._query_po(p, o) @ self.all_e().T

    def _score_sp_some(self, s, p, o):
        return torch.bmm(self.e(o), self._query_sp(s, p).unsqueeze(2)).squeeze(2)

    def _score_po_some(self, p, o, s):
        return torch.bmm(self.e(s), self._query_po(p, o).unsqueeze(2)).squeeze(2)

    def factors(self, s, p, o):
        def modulus(x):
            re, im = self._split(x)
            return torch.sqrt(re**2 + im**2)

        return [modulus(self.entity(s)), modulus(self.relation(p)), modulus(self.entity(o))]


class TuckER(KGEModel):
    """TuckER (Balažević et al. 2019): f(h, r, t) = (W ×₁ e_h ×₂ w_r) · e_t, with batch norm and dropout:

        q = DO₂(BN₁(DO_in(BN₀(e_h)) · DO₁(W ×₂ w_r))),   f(h, r, t) = q · e_t,

    where (W ×₂ w_r)_{ik} = Σ_j W_{ijk} w_r,j is a d_e × d_e matrix per query. Scores are unbounded logits
    (the original applies a sigmoid for its BCE loss; our KvsAll loss takes logits), higher = more plausible.

    Parameters: ``entity`` |E| × d_e (d_e = ``dim``), ``relation`` (2|R|) × d_r (d_r = ``relation_dim``, default
    ``dim``), core ``core`` W ∈ R^{d_e × d_r × d_e} indexed (head, relation, tail) as in the paper and PyKEEN;
    the official code stores the same tensor as (d_r, d_e, d_e): ``W_official = core.permute(1, 0, 2)``.
    ``bn0``/``bn1``: BatchNorm1d(d_e) on the head embedding and on the head-relation vector. Dropouts:
    ``input_dropout`` (DO_in, on BN₀(e_h)), ``hidden_dropout1`` (DO₁, on the d_e × d_e relation matrix),
    ``hidden_dropout2`` (DO₂, on the query). Initialisation as the original: Xavier-normal embeddings, core
    uniform in [−1, 1].

    Reciprocal relations only (``supports_po = False``): the original trains and evaluates with reciprocal
    relations (relation rows doubled, head questions answered as tail questions of r⁻¹), and its batch norm of
    the head-relation vector has no counterpart when the head is the unknown entity (batch statistics of
    B × |E| head-relation vectors), so a non-reciprocal ``score_po`` is not offered.

    Training-mode batch norm uses the statistics of the batch (as the original), so in training mode the score
    of a question depends on the other questions of its batch; in eval mode (running statistics) it does not.
    A training batch of a single question (where batch statistics are undefined) is normalised with the
    running statistics instead of failing. Questions are encoded in chunks that keep the per-question
    d_e × d_e relation matrices within ``chunk_budget_mb``.

    PyKEEN's ``TuckERInteraction`` is the same function (same core layout, batch norms and dropouts); it differs
    only in head questions: without inverse triples it normalises over all B × |E| candidate heads (training
    mode), where this model answers them as tail questions of r⁻¹. In eval mode with inverse triples both agree.

    ``factors`` returns (e_h, w_r, e_t) for an optional N3/L2 penalty; the published setting uses none.

    Defaults: the published FB15k-237 setting (d_e = d_r = 200, dropouts .3/.4/.5, batch norm; train with
    KvsAll BCE, label smoothing .1, Adam 5e-4, batch 128, 500 epochs).
    """

    name = "TuckER"
    HPARAMS = {"relation_dim": Int(1, 100_000, nullable=True), "input_dropout": DROPOUT,
               "hidden_dropout1": DROPOUT, "hidden_dropout2": DROPOUT, "batch_norm": Bool(), "init": INIT,
               "init_std": POSITIVE_OR_NULL}
    supports_po = False

    def __init__(self, num_entities, num_relations, dim=200, reciprocal=True, relation_dim=None,
                 input_dropout=0.3, hidden_dropout1=0.4, hidden_dropout2=0.5, batch_norm=True, init="xavier",
                 init_std=None, **kw):
        super().__init__(num_entities, num_relations, dim, reciprocal, relation_dim=relation_dim,
                         input_dropout=input_dropout, hidden_dropout1=hidden_dropout1,
                         hidden_dropout2=hidden_dropout2, batch_norm=batch_norm, init=init, init_std=init_std,
                         **kw)
        d_e, d_r = dim, relation_dim or dim
        self.relation_dim = d_r
        self.entity = init_embedding(num_entities, d_e, init_std, init)
        self.relation = init_embedding(self.num_relation_rows, d_r, init_std, init)
        self.core = nn.Parameter(torch.empty(d_e, d_r, d_e).uniform_(-1.0, 1.0))
        self.input_drop = nn.Dropout(input_dropout)
        self.hidden_drop1 = nn.Dropout(hidden_dropout1)
        self.hidden_drop2 = nn.Dropout(hidden_dropout2)
        self.bn0 = nn.BatchNorm1d(d_e) if batch_norm else None
        self.bn1 = nn.BatchNorm1d(d_e) if batch_norm else None

    def entity_embeddings(self):
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.relation(p), self.entity(o)]

    def _bn(self, bn: nn.BatchNorm1d | None, x: torch.Tensor) -> torch.Tensor:
        if bn is None:
            return x
        if self.training and x.shape[0] == 1:
            return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)
        return bn(x)

    def _query(self, s: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """The (B, d_e) query q: f(h, r, t) = q · e_t."""
        h = self.input_drop(self._bn(self.bn0, self.entity(s)))
        r = self.relation(p)
        d_e = self.dim
        # per-question relation matrices are B × d_e × d_e: encode in chunks within the memory budget
        chunk = max(1, int(self.chunk_budget_mb * 2**20 // (d_e * d_e * 4 * 2)))
        parts = []
        for i in range(0, max(len(h), 1), chunk):
            w_r = torch.einsum("bj,ijk->bik", r[i:i + chunk], self.core)  # B × d_e(head) × d_e(tail)
            w_r = self.hidden_drop1(w_r)
            parts.append(torch.bmm(h[i:i + chunk].unsqueeze(1), w_r).squeeze(1))
        x = parts[0] if len(parts) == 1 else torch.cat(parts)
        return self.hidden_drop2(self._bn(self.bn1, x))

    def _score_spo(self, s, p, o):
        return (self._query(s, p) * self.entity(o)).sum(-1)

    def _score_sp(self, s, p):
        return self._query(s, p) @ self.entity.weight.T

    def _score_sp_some(self, s, p, o):
        return torch.bmm(self.entity(o), self._query(s, p).unsqueeze(2)).squeeze(2)
