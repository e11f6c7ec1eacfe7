"""Block scorers: models whose scores for a batch of questions can be computed one slice of the entities at a time.

The engine (:mod:`.engine`) asks a scorer for a query representation of a batch of questions once, then for the
scores of that batch against entities ``lo:hi`` block after block, so only (batch × block) scores ever exist.
"""

from __future__ import annotations

import torch

from ..data.kg import HEAD, TAIL


def _check_side(side: int) -> None:
    if side not in (HEAD, TAIL):
        raise ValueError(f"unknown side {side}")


class _Rows:
    """A model's entity and relation rows, of one width, as float32 on one device (the scorers' device)."""

    def __init__(self, entity: torch.Tensor, relation: torch.Tensor):
        if entity.shape[1] != relation.shape[1]:
            raise ValueError(f"entity dimension {entity.shape[1]} != relation dimension {relation.shape[1]}")
        self.entity = entity.to(torch.float32).contiguous()
        self.relation = relation.to(torch.float32).contiguous()

    @property
    def num_entities(self) -> int:
        return self.entity.shape[0]

    @property
    def device(self) -> torch.device:
        return self.entity.device

    def full(self, queries: torch.Tensor, side: int) -> torch.Tensor:
        """kgeval's scorer signature (scores.ranking.Scorer): (B, 2) (known entity, relation) → (B, |E|). For
        comparisons with today's engine at sizes where the full matrix fits."""
        return self.block(self.query(queries[:, 0], queries[:, 1], side), 0, self.num_entities)


class BilinearBlocks(_Rows):
    """DistMult-like: f(h, r, t) = Σ e_h ∘ w_r ∘ e_t. Symmetric in h and t, so a head question's query is built
    the same way as a tail question's: e_known ∘ w_r, and its scores are query @ E[lo:hi]ᵀ."""

    def to(self, device: str | torch.device) -> BilinearBlocks:
        return type(self)(self.entity.to(device), self.relation.to(device))

    def query(self, known: torch.Tensor, relation: torch.Tensor, side: int) -> torch.Tensor:
        _check_side(side)
        return self.entity[known] * self.relation[relation]

    def block(self, query: torch.Tensor, lo: int, hi: int, out: torch.Tensor | None = None) -> torch.Tensor:
        return torch.matmul(query, self.entity[lo:hi].T, out=out)

    def block_t(self, query_t: torch.Tensor, lo: int, hi: int, out: torch.Tensor | None = None) -> torch.Tensor:
        """:meth:`block` transposed, entities × questions, from the transposed queries (d × questions): the
        layout of the fused CPU pass (:mod:`.tiles`). The same bits as :meth:`block`'s cells."""
        return torch.matmul(self.entity[lo:hi], query_t, out=out)

    def some(self, query: torch.Tensor, entities: torch.Tensor) -> torch.Tensor:
        """Scores of chosen entities: row i of ``query`` against ``entities[i]`` (a (B,) or (B, m) tensor)."""
        e = self.entity[entities]
        if entities.dim() == 1:
            return (e * query).sum(-1)
        return torch.bmm(e, query[:, :, None])[:, :, 0]


class ComplExBlocks(BilinearBlocks):
    """ComplEx (Trouillon et al. 2016): f(h, r, t) = Re Σ e_h w_r conj(e_t), each vector stored as its real half
    then its imaginary half (width 2d). The score is linear in either entity's halves, so both sides' questions
    become a query row against the stored entity rows, and the blocks are the same matrix product as DistMult's:
    tail side b = e_h w_r, query [Re b | Im b]; head side a = w_r conj(e_t), query [Re a | -Im a]."""

    def __init__(self, entity: torch.Tensor, relation: torch.Tensor):
        super().__init__(entity, relation)
        if entity.shape[1] % 2:
            raise ValueError(f"ComplEx width {entity.shape[1]} is odd: real halves then imaginary halves")

    def query(self, known: torch.Tensor, relation: torch.Tensor, side: int) -> torch.Tensor:
        _check_side(side)
        e, w = self.entity[known], self.relation[relation]
        d = e.shape[1] // 2
        er, ei, wr, wi = e[:, :d], e[:, d:], w[:, :d], w[:, d:]
        if side == TAIL:
            return torch.cat([er * wr - ei * wi, er * wi + ei * wr], 1)
        return torch.cat([wr * er + wi * ei, wr * ei - wi * er], 1)


class TransEBlocks(_Rows):
    """TransE (Bordes et al. 2013): f(h, r, t) = -‖e_h + w_r - e_t‖_p. A tail question's query is e_h + w_r and
    a head question's e_t - w_r; either way the scores are minus the p-distances of the query to the entity rows
    (torch.cdist over a block)."""

    def __init__(self, entity: torch.Tensor, relation: torch.Tensor, p: float = 1.0):
        super().__init__(entity, relation)
        self.p = float(p)

    def to(self, device: str | torch.device) -> TransEBlocks:
        return TransEBlocks(self.entity.to(device), self.relation.to(device), self.p)

    def query(self, known: torch.Tensor, relation: torch.Tensor, side: int) -> torch.Tensor:
        _check_side(side)
        w = self.relation[relation]
        return self.entity[known] + w if side == TAIL else self.entity[known] - w

    def block(self, query: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
        return -torch.cdist(query, self.entity[lo:hi], p=self.p)

    def some(self, query: torch.Tensor, entities: torch.Tensor) -> torch.Tensor:
        """Scores of chosen entities: row i of ``query`` against ``entities[i]`` (a (B,) or (B, m) tensor)."""
        e = self.entity[entities]
        q = query if entities.dim() == 1 else query[:, None, :]
        return -torch.linalg.vector_norm(e - q, ord=self.p, dim=-1)
