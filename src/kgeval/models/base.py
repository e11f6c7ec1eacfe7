"""The model interface (LibKGE-style) shared by all 13 models.

A model scores triples (s, p, o), higher = more plausible, in three ways:

* ``score_spo(s, p, o)`` → (B,): one score per triple;
* ``score_sp(s, p)`` → (B, |E|): every entity as the object of (s, p, ?) — a tail question;
* ``score_po(p, o)`` → (B, |E|): every entity as the subject of (?, p, o) — a head question.

The all-entity forms are computed as matrix products wherever the scoring function allows (bilinear and
Euclidean-distance models, decoders that end in a product with the entity matrix), otherwise in entity chunks
bounded by ``chunk_budget_mb`` so that no (batch × |E| × d) tensor is ever materialised.

**Reciprocal relations**: with ``reciprocal=True`` the model holds 2|R| relation rows (forward first, then
inverse) and answers a head question (?, p, o) as the tail question (o, p + |R|, ?). Subclasses then only
implement the tail direction. Without it they implement ``_score_po`` as well.

Subclasses implement ``_score_spo``, ``_score_sp`` (and ``_score_po`` when not reciprocal) and may override
``factors`` (the embeddings an N3/L2 regulariser acts on). ``hparams`` records every constructor argument so
that checkpoints can rebuild the model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import torch
from torch import nn

from ..data.kg import HEAD, TAIL
from .hparams import BASE, HParam

# answers handed to a ``uses_targets`` model in training: one per question as a (B,) tensor, or every answer of
# each question as ``(rows, answers)`` pairs (grouped 1vsAll: question rows[i] has answer answers[i])
Targets = torch.Tensor | tuple[torch.Tensor, torch.Tensor]

BLOCK_ELEMENTS = 1 << 19  # floats in one inference block of an elementwise all-entity score (see ``blocked``)


class KGEModel(nn.Module):
    name: ClassVar[str] = "model"
    needs_graph: ClassVar[bool] = False  # True: the constructor takes ``graph`` (training triples)
    uses_targets: ClassVar[bool] = False  # True: training passes each question's answer (HittER masks that edge)
    supports_po: ClassVar[bool] = True  # False: the scoring function only exists with reciprocal relations
    HPARAMS: ClassVar[dict[str, HParam]] = BASE  # type and bounds of each constructor argument (see hparams)
    # set by the trainer from train.compile: training-time distances through torch.compile (models.compiled)
    compile_distances: bool = False

    def __init__(self, num_entities: int, num_relations: int, dim: int, reciprocal: bool = False,
                 chunk_budget_mb: float = 256.0, **kwargs: Any):
        super().__init__()
        if not self.supports_po and not reciprocal:
            raise ValueError(f"{self.name} needs reciprocal relations (set reciprocal: true)")
        self.num_entities = int(num_entities)
        self.num_relations = int(num_relations)
        self.dim = int(dim)
        self.reciprocal = bool(reciprocal)
        self.chunk_budget_mb = float(chunk_budget_mb)
        self.hparams: dict[str, Any] = {"dim": dim, "reciprocal": reciprocal, **kwargs}

    @property
    def num_relation_rows(self) -> int:
        return 2 * self.num_relations if self.reciprocal else self.num_relations

    # ---- to implement -------------------------------------------------------------------------------------
    def _score_spo(self, s: torch.Tensor, p: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _score_sp(self, s: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _score_po(self, p: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _score_sp_some(self, s: torch.Tensor, p: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        """Scores of (s, p, o_ij) for candidate objects o (B, n) → (B, n). Models with an expensive query
        encoder override this to encode each (s, p) once."""
        B, n = o.shape
        return self._score_spo(s[:, None].expand(B, n).reshape(-1), p[:, None].expand(B, n).reshape(-1),
                               o.reshape(-1)).view(B, n)

    def _score_po_some(self, p: torch.Tensor, o: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        """Scores of (s_ij, p, o) for candidate subjects s (B, n) → (B, n) (non-reciprocal models)."""
        B, n = s.shape
        return self._score_spo(s.reshape(-1), p[:, None].expand(B, n).reshape(-1),
                               o[:, None].expand(B, n).reshape(-1)).view(B, n)

    def factors(self, s: torch.Tensor, p: torch.Tensor, o: torch.Tensor) -> list[torch.Tensor]:
        """Embeddings of a batch that N3/L2 regularisation acts on (one row per triple)."""
        return []

    # ---- public API ---------------------------------------------------------------------------------------
    def score_spo(self, s: torch.Tensor, p: torch.Tensor, o: torch.Tensor, direction: str = "o") -> torch.Tensor:
        """Score triples; ``direction="s"`` scores them as head predictions (matters for reciprocal models)."""
        if direction == "s" and self.reciprocal:
            return self._score_spo(o, p + self.num_relations, s)
        return self._score_spo(s, p, o)

    def score_sp(self, s: torch.Tensor, p: torch.Tensor, targets: Targets | None = None) -> torch.Tensor:
        """(B, |E|) scores of every entity as object of (s, p, ?). During training ``targets`` holds each
        question's answer(s) (see ``Targets``); only models with ``uses_targets`` (HittER: mask the target
        edges) look at it."""
        if self.uses_targets:
            return self._score_sp(s, p, targets=targets)
        return self._score_sp(s, p)

    def score_po(self, p: torch.Tensor, o: torch.Tensor, targets: Targets | None = None) -> torch.Tensor:
        """(B, |E|) scores of every entity as subject of (?, p, o)."""
        if self.reciprocal:
            return self.score_sp(o, p + self.num_relations, targets=targets)
        if self.uses_targets:
            return self._score_po(p, o, targets=targets)
        return self._score_po(p, o)

    def score_sp_some(self, s: torch.Tensor, p: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        """Scores of (s, p, o_ij) for given candidate objects o (B, n), e.g. sampled negatives."""
        return self._score_sp_some(s, p, o)

    def score_po_some(self, p: torch.Tensor, o: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        """Scores of (s_ij, p, o) for given candidate subjects s (B, n)."""
        if self.reciprocal:
            return self._score_sp_some(o, p + self.num_relations, s)
        return self._score_po_some(p, o, s)

    def score_questions(self, queries: torch.Tensor, side: int) -> torch.Tensor:
        """The ranking engine's scorer: queries (B, 2) of (known entity, relation) → (B, |E|)."""
        if side == TAIL:
            return self.score_sp(queries[:, 0], queries[:, 1])
        if side == HEAD:
            return self.score_po(queries[:, 1], queries[:, 0])
        raise ValueError(f"unknown side {side}")

    def entity_embeddings(self) -> torch.Tensor:
        """The entity embedding matrix (|E| × d) used by embedding-based baselines (conicity, vector length)."""
        raise NotImplementedError

    # ---- helpers for subclasses ---------------------------------------------------------------------------
    def chunked(self, fn: Callable[[slice], torch.Tensor], batch: int, width: int) -> torch.Tensor:
        """Evaluate ``fn`` over entity slices so that batch × chunk × width floats fit the chunk budget."""
        per_entity = max(1, batch * width * 4 * 3)  # the difference tensor and two temporaries
        chunk = max(1, int(self.chunk_budget_mb * 2**20 // per_entity))
        if chunk >= self.num_entities:
            return fn(slice(0, self.num_entities))
        return torch.cat([fn(slice(i, min(i + chunk, self.num_entities)))
                          for i in range(0, self.num_entities, chunk)], dim=1)

    @staticmethod
    def use_blocks(x: torch.Tensor) -> bool:
        """Whether an all-entity elementwise score of ``x`` should run through ``blocked`` (CPU inference)."""
        return x.device.type == "cpu" and not (torch.is_grad_enabled() and x.requires_grad)

    def blocked(self, kernel: Callable[[slice, slice], torch.Tensor], batch: int, width: int,
                like: torch.Tensor) -> torch.Tensor:
        """(batch, |E|) scores from ``kernel(rows, entities)`` → (rows × entities), over 2-D blocks whose
        (rows × entities × ``width``) temporaries hold about ``BLOCK_ELEMENTS`` floats; for inference only (no
        autograd), where the kernel may work in place.

        Why blocks: an elementwise distance makes several passes over its (rows × entities × width) temporary;
        at about 2 MiB that temporary stays in the CPU cache, so the passes are not bound by memory bandwidth
        (several times faster than entity chunks of the memory budget, which spill out of the cache).
        On CUDA, or with autograd on, use ``chunked`` instead (see ``use_blocks``).
        """
        rows = max(1, min(batch, 64))
        cols = max(1, BLOCK_ELEMENTS // max(1, rows * width))
        out = like.new_empty(batch, self.num_entities)
        for j in range(0, batch, rows):
            rs = slice(j, min(j + rows, batch))
            for i in range(0, self.num_entities, cols):
                es = slice(i, min(i + cols, self.num_entities))
                out[rs, es] = kernel(rs, es)
        return out


def init_embedding(num: int, dim: int, std: float | None = None, kind: str = "normal") -> nn.Embedding:
    emb = nn.Embedding(num, dim)
    if kind == "normal":
        nn.init.normal_(emb.weight, std=std if std is not None else 1.0 / dim**0.5)
    elif kind == "xavier":
        nn.init.xavier_normal_(emb.weight)
    elif kind == "uniform":
        bound = std if std is not None else 1.0
        nn.init.uniform_(emb.weight, -bound, bound)
    else:
        raise ValueError(f"unknown initialisation {kind!r}")
    return emb
