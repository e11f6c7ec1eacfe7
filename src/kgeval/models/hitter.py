"""HittER (Chen et al. 2021): hierarchical Transformers over a source entity's relational context."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..data.questions import unique_triples
from .base import KGEModel, Targets
from .hparams import DROPOUT, Choice, Float, Int


def _encoder_layers(n: int, dim: int, heads: int, ffn: int, dropout: float, attention_dropout: float,
                    activation: str) -> nn.ModuleList:
    layers = nn.ModuleList()
    for _ in range(n):
        layer = nn.TransformerEncoderLayer(dim, heads, ffn, dropout=dropout, activation=activation,
                                           batch_first=True, norm_first=False)
        layer.self_attn.dropout = float(attention_dropout)  # attention-probability dropout (float attribute)
        layers.append(layer)
    return layers


class HittER(KGEModel):
    """HittER: Hierarchical Transformers for Knowledge Graph Embeddings (Chen, Liu, Gao, Jiao, Zhang, Ji;
    EMNLP 2021, arXiv:2008.12813). Reference implementation: github.com/microsoft/HittER (``kge/model/trme.py``,
    ``kge/indexing.py``, ``config/trmeh-fb15k237-best.yaml``); the defaults here are that configuration.

    **Architecture** (d = ``dim``; the question is the tail question (s, p, ?), head questions use the
    reciprocal relation p + |R|, so ``reciprocal=True`` is required):

    1. *Entity transformer* (``entity_layers``, default 3): for an entity-relation pair (e, r) the sequence
       [CLS, e, r] + pair-position embeddings → dropout(``embedding_dropout``) → LayerNorm → post-LN Transformer
       encoder; the CLS output is the pair vector pair(e, r) ∈ R^d.
    2. *Context transformer* (``context_layers``, default 6): the sequence
       [GCLS, pair(s, p), pair(n_1, r_1), …, pair(n_K, r_K)] + segment embeddings (one for GCLS, one for the
       query pair, one shared by all context pairs) → dropout(``hidden_dropout``) → LayerNorm → post-LN
       Transformer encoder with a key-padding mask over absent context slots (K ≤ ``max_context``, default 50).
    3. Score: the GCLS output h(s, p) ∈ R^d dotted with every entity embedding, f(s, p, o) = h(s, p)·e_o; all
       entities at once as one (B × d) @ (d × |E|) product. Entity embeddings are shared between the inputs and
       the output layer.

    Both encoders: ``num_heads`` (8) heads, FFN width ``ffn_dim`` (1280), GELU, dropout ``hidden_dropout`` (.1)
    and attention dropout ``attention_dropout`` (.1). Initialisation as in the original: every embedding,
    special token and Linear weight ~ N(0, ``init_std``=0.02), biases 0, LayerNorms (1, 0).

    **Parameter shapes**: ``entity.weight`` |E| × d; ``relation.weight`` 2|R| × d (forward rows first);
    ``cls``, ``gcls``, ``mask`` d; ``pair_type`` 3 × d; ``segment_type`` 3 × d; ``pair_norm``,
    ``context_norm`` LayerNorm(d); each encoder layer: ``self_attn.in_proj_weight`` 3d × d (+ bias),
    ``self_attn.out_proj`` d × d (+ bias), ``linear1`` ffn × d, ``linear2`` d × ffn (+ biases), ``norm1``,
    ``norm2`` LayerNorm(d).

    **Context**: built once from ``graph`` (the training triples, de-duplicated) as a CSR adjacency
    (buffers ``nbr_ptr``, ``nbr_entity``, ``nbr_relation``; not saved in the state dict, rebuilt from the graph).
    As in the reference ``index_neighbor``, every edge is seen from both ends and a context pair (n, r) always
    reads "(n, r, source) holds": a neighbour reached by an outgoing edge (s, r, n) is stored with the inverse
    relation r + |R|, one reached by an incoming edge (n, r, s) with r. Within each entity the neighbours are
    kept in a random order drawn once at construction from ``context_seed``.

    * training mode: K = min(deg, ``max_context``) neighbours are drawn uniformly without replacement per
      question (random keys from the torch global RNG, one segmented sort over the batch's adjacency entries;
      no Python loop), then each drawn slot is dropped with probability ``context_dropout`` (.3);
    * eval mode: the first ``max_context`` neighbours in the fixed order, so scoring is deterministic;
    * target masking (whenever ``targets`` is given, i.e. in 1vsAll training): for a question (s, p, ?) with
      answer o, every context entry (o, r) with r ≡ p (mod |R|) is removed before drawing, i.e. the target edge
      (s, p, o) itself (stored as (o, p⁻¹)) and its inverse view (o, p) — which also hides a reverse edge
      (o, p, s) should one exist (the reference removes only (o, p⁻¹)). Grouped 1vsAll training (one row per
      distinct question, ``train.grouped``) passes all answers of a question and removes the entries of every
      one of them, so a question's context never shows another of its training answers; the per-triple regime
      shows them (as evaluation does, where all training edges are context);
    * source masking (training only): the source entity's embedding in the query pair is replaced by the
      learned [MASK] embedding with probability ``source_mask`` (.5; the reference's ``self_dropout`` .5 with
      ``mlm_mask`` 1.0).

    Dropouts as the reference: ``embedding_dropout`` (.6, its ``output_dropout``) on the entity-transformer
    input and on the entity matrix of the output product, ``hidden_dropout`` (.1) on the context-transformer
    input and inside both encoders, ``attention_dropout`` (.1), ``context_dropout`` (.3).

    **Deviations from the reference implementation**

    * No masked-entity-prediction (MLM) auxiliary loss: the model interface returns scores only. The FB15k-237
      best configuration has ``add_mlm_loss: false`` (it is on for WN18RR, weight self_dropout/(1+self_dropout),
      cross-entropy of the source-pair output against the source entity). Likewise the "replace the source by
      a random entity" variant (``mlm_replace``, inactive when ``mlm_mask`` = 1) is not implemented.
    * Neighbours are drawn from the full adjacency, not from a random subset of at most 300 per entity; parallel
      edges between the same two entities are all kept (the reference's ``nx.DiGraph`` keeps only the last).
    * The target edge is removed before the K neighbours are drawn (the reference draws first, then masks, so
      its context can hold K − 1 pairs).
    * Both encoders use ``torch.nn.TransformerEncoderLayer`` (post-LN); the reference's entity encoder is a BERT
      encoder whose FFN has no inner dropout; its context encoder (RAT-SQL layers) matches this layout.
    * The number of entity-transformer layers is its own setting (the reference ties it to ``nlayer // 2``).
    """

    name = "HittER"
    needs_graph = True
    uses_targets = True
    supports_po = False
    HPARAMS = {"entity_layers": Int(1, 100), "context_layers": Int(1, 100), "num_heads": Int(1, 1000),
               "ffn_dim": Int(1, 1_000_000), "max_context": Int(1, 100_000), "hidden_dropout": DROPOUT,
               "attention_dropout": DROPOUT, "embedding_dropout": DROPOUT, "context_dropout": DROPOUT,
               "source_mask": Float(0, 1), "init_std": Float(0, lo_open=True), "activation": Choice("gelu", "relu"),
               "context_seed": Int(0)}

    def __init__(self, num_entities: int, num_relations: int, dim: int = 320, reciprocal: bool = True,
                 graph: np.ndarray | None = None, entity_layers: int = 3, context_layers: int = 6,
                 num_heads: int = 8, ffn_dim: int = 1280, max_context: int = 50, hidden_dropout: float = 0.1,
                 attention_dropout: float = 0.1, embedding_dropout: float = 0.6, context_dropout: float = 0.3,
                 source_mask: float = 0.5, init_std: float = 0.02, activation: str = "gelu",
                 context_seed: int = 0, **kw: Any):
        super().__init__(num_entities, num_relations, dim, reciprocal, entity_layers=entity_layers,
                         context_layers=context_layers, num_heads=num_heads, ffn_dim=ffn_dim,
                         max_context=max_context, hidden_dropout=hidden_dropout,
                         attention_dropout=attention_dropout, embedding_dropout=embedding_dropout,
                         context_dropout=context_dropout, source_mask=source_mask, init_std=init_std,
                         activation=activation, context_seed=context_seed, **kw)
        if int(context_layers) < 1:
            raise ValueError("HittER needs context_layers >= 1: without its context transformer it is a plain "
                             "entity transformer, not HittER")
        if int(entity_layers) < 1:
            raise ValueError("HittER needs entity_layers >= 1")
        if int(max_context) < 1:
            raise ValueError("HittER needs max_context >= 1 (the number of sampled neighbours)")
        if dim % num_heads:
            raise ValueError(f"dim {dim} is not divisible by num_heads {num_heads}")
        for key, value in (("hidden_dropout", hidden_dropout), ("attention_dropout", attention_dropout),
                           ("embedding_dropout", embedding_dropout), ("context_dropout", context_dropout),
                           ("source_mask", source_mask)):
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{key} must lie in [0, 1), got {value}")
        if graph is None:
            raise ValueError("HittER needs the training graph (graph=(n, 3) triples)")
        self.max_context = int(max_context)
        self.embedding_dropout = float(embedding_dropout)
        self.hidden_dropout = float(hidden_dropout)
        self.context_dropout = float(context_dropout)
        self.source_mask = float(source_mask)

        std = float(init_std)
        self.entity = nn.Embedding(num_entities, dim)
        self.relation = nn.Embedding(self.num_relation_rows, dim)
        self.cls = nn.Parameter(torch.empty(dim))
        self.gcls = nn.Parameter(torch.empty(dim))
        self.mask = nn.Parameter(torch.empty(dim))
        self.pair_type = nn.Parameter(torch.empty(3, dim))  # positions CLS, entity, relation
        self.segment_type = nn.Parameter(torch.empty(3, dim))  # GCLS, query pair, context pair
        self.pair_norm = nn.LayerNorm(dim, eps=1e-12)
        self.context_norm = nn.LayerNorm(dim, eps=1e-12)
        self.entity_encoder = _encoder_layers(int(entity_layers), dim, num_heads, ffn_dim, hidden_dropout,
                                              attention_dropout, activation)
        self.context_encoder = _encoder_layers(int(context_layers), dim, num_heads, ffn_dim, hidden_dropout,
                                               attention_dropout, activation)
        for prm in (self.entity.weight, self.relation.weight, self.cls, self.gcls, self.mask, self.pair_type,
                    self.segment_type):
            nn.init.normal_(prm, std=std)
        for layer in (*self.entity_encoder, *self.context_encoder):
            nn.init.normal_(layer.self_attn.in_proj_weight, std=std)
            nn.init.zeros_(layer.self_attn.in_proj_bias)
            for lin in (layer.self_attn.out_proj, layer.linear1, layer.linear2):
                nn.init.normal_(lin.weight, std=std)
                nn.init.zeros_(lin.bias)

        ptr, nbr_e, nbr_r = self._adjacency(graph, num_entities, num_relations, int(context_seed))
        self.register_buffer("nbr_ptr", ptr, persistent=False)
        self.register_buffer("nbr_entity", nbr_e, persistent=False)
        self.register_buffer("nbr_relation", nbr_r, persistent=False)

    # ---- the context ------------------------------------------------------------------------------------
    @staticmethod
    def _adjacency(graph: np.ndarray, num_entities: int, num_relations: int,
                   seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """CSR adjacency over both edge directions: source → (neighbour, relation), with (neighbour, relation,
        source) true; entries of one source in a seeded random order."""
        g = np.asarray(graph, dtype=np.int64).reshape(-1, 3)
        if len(g) and (g[:, [0, 2]].min() < 0 or g[:, [0, 2]].max() >= num_entities
                       or g[:, 1].min() < 0 or g[:, 1].max() >= num_relations):
            raise ValueError("graph holds entity or relation ids out of range")
        g = unique_triples(g, num_entities, num_relations)  # np.unique(g, axis=0), 50x faster with numpy 2.4
        h, r, t = g[:, 0], g[:, 1], g[:, 2]
        src = np.concatenate([h, t])
        nbr = np.concatenate([t, h])
        rel = np.concatenate([r + num_relations, r])  # outgoing edge: inverse relation (reference convention)
        keys = np.random.default_rng(seed).random(len(src))
        order = np.lexsort((keys, src))
        ptr = np.zeros(num_entities + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=num_entities), out=ptr[1:])
        return torch.from_numpy(ptr), torch.from_numpy(nbr[order]), torch.from_numpy(rel[order])

    def _is_target(self, e: torch.Tensor, r: torch.Tensor, p: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return (e == t) & (r % self.num_relations == p % self.num_relations)

    def _hits(self, seg: torch.Tensor, e: torch.Tensor, r: torch.Tensor, p: torch.Tensor,
              targets: Targets) -> torch.Tensor:
        """Which flat context entries (question ``seg``, neighbour e, relation r) are an answer's edge."""
        if torch.is_tensor(targets):
            return self._is_target(e, r, p[seg], targets[seg])
        rows, answers = targets
        same_relation = r % self.num_relations == p[seg] % self.num_relations
        return same_relation & torch.isin(seg * self.num_entities + e, rows * self.num_entities + answers)

    def context(self, s: torch.Tensor, p: torch.Tensor,
                targets: Targets | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The context of each question (s, p, ?): neighbour entities (B, K), relations (B, K) and a validity
        mask (B, K), left-packed. Random in training mode (global torch RNG), fixed in eval mode. ``targets``
        removes answer edges: a (B,) tensor of one answer per question, or ``(rows, answers)`` pairs giving
        every answer of question ``rows[i]`` (grouped training)."""
        B, K, dev = s.shape[0], self.max_context, s.device
        out_e = torch.zeros(B, K, dtype=torch.long, device=dev)
        out_r = torch.zeros(B, K, dtype=torch.long, device=dev)
        valid = torch.zeros(B, K, dtype=torch.bool, device=dev)
        if self.nbr_entity.numel() == 0 or B == 0:
            return out_e, out_r, valid
        start = self.nbr_ptr[s]
        deg = self.nbr_ptr[s + 1] - start
        if not self.training and (targets is None or torch.is_tensor(targets)):
            # the first K (K + 2 when the answer's up to two entries may be removed) in the fixed order
            width = K + (2 if targets is not None else 0)
            offs = torch.arange(width, device=dev)
            ok = offs < deg[:, None]
            pos = torch.where(ok, start[:, None] + offs, 0)
            e, r = self.nbr_entity[pos], self.nbr_relation[pos]
            if targets is not None:
                ok &= ~self._is_target(e, r, p[:, None], targets[:, None])
                # left-pack the remaining entries, keeping their order
                order = torch.sort((~ok).to(torch.int32), dim=1, stable=True).indices
                ok, e, r = ok.gather(1, order), e.gather(1, order), r.gather(1, order)
            return torch.where(ok[:, :K], e[:, :K], 0), torch.where(ok[:, :K], r[:, :K], 0), ok[:, :K]
        # all adjacency entries of the batch's sources (a flat segmented list), keyed randomly in training and by
        # position in eval mode (where a question may have more answer entries than fit a fixed-width window)
        total = int(deg.sum())
        if total == 0:
            return out_e, out_r, valid
        seg = torch.repeat_interleave(torch.arange(B, device=dev), deg, output_size=total)
        seg_start = torch.cumsum(deg, 0) - deg
        offset = torch.arange(total, device=dev) - seg_start[seg]
        pos = start[seg] + offset
        e, r = self.nbr_entity[pos], self.nbr_relation[pos]
        key = torch.rand(total, device=dev) if self.training else offset.to(torch.float64) / (int(deg.max()) + 1)
        keep = torch.ones(total, dtype=torch.bool, device=dev)
        if targets is not None:
            hit = self._hits(seg, e, r, p, targets)
            key = key + 2.0 * hit  # removed entries sort last in their segment
            keep = ~hit
        # sort by (segment, key): the K smallest keys of a segment are a uniform draw without replacement. One sort
        # of segment + key/4 (key < 3; float64 holds both exactly) instead of a sort by key and a stable sort by
        # segment: the same order, since keys within a segment are distinct, at half the sorting cost
        perm = torch.argsort(seg.to(torch.float64) + key.to(torch.float64) / 4.0)
        seg_p = seg[perm]
        rank = torch.arange(total, device=dev) - seg_start[seg_p]
        sel = perm[(rank < K) & keep[perm]]
        rank_sel = rank[(rank < K) & keep[perm]]
        rows = seg[sel]
        out_e[rows, rank_sel] = e[sel]
        out_r[rows, rank_sel] = r[sel]
        valid[rows, rank_sel] = True
        if self.training and self.context_dropout > 0:
            valid &= torch.rand(B, K, device=dev) >= self.context_dropout
        return out_e, out_r, valid

    # ---- the encoders -----------------------------------------------------------------------------------
    def _pairs(self, ent: torch.Tensor, rel: torch.Tensor, masked: torch.Tensor | None) -> torch.Tensor:
        """Entity transformer: pair vectors (N, d) for pairs (ent, rel); rows in ``masked`` use [MASK]."""
        if not self.training:
            # eval: every distinct pair once (no dropout, so identical to encoding each occurrence)
            rows = self.num_relation_rows
            keys, inverse = torch.unique(ent * rows + rel, return_inverse=True)
            return self._encode_pairs(self.entity(keys // rows), self.relation(keys % rows))[inverse]
        e = self.entity(ent)
        if masked is not None:
            e = torch.where(masked[:, None], self.mask.to(e.dtype), e)
        return self._encode_pairs(e, self.relation(rel))

    def _encode_pairs(self, e: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        x = torch.stack([self.cls.expand_as(e), e, r], dim=1) + self.pair_type
        x = self.pair_norm(F.dropout(x, self.embedding_dropout, self.training))
        for layer in self.entity_encoder:
            x = layer(x)
        return x[:, 0]

    def encode(self, s: torch.Tensor, p: torch.Tensor, targets: Targets | None = None) -> torch.Tensor:
        """The GCLS output h(s, p) (B, d) of the context transformer."""
        ce, cr, valid = self.context(s, p, targets)
        B, K = ce.shape
        ids_e = torch.cat([s[:, None], ce], 1)
        ids_r = torch.cat([p[:, None], cr], 1)
        present = torch.cat([torch.ones(B, 1, dtype=torch.bool, device=s.device), valid], 1)
        masked = None
        if self.training and self.source_mask > 0:
            src_masked = torch.rand(B, device=s.device) < self.source_mask
            masked = torch.cat([src_masked[:, None], torch.zeros_like(valid)], 1)[present]
        vec = self._pairs(ids_e[present], ids_r[present], masked)
        pairs = vec.new_zeros(B, K + 1, self.dim)
        pairs[present] = vec
        seq = torch.cat([self.gcls.to(vec.dtype).expand(B, 1, self.dim), pairs], 1)
        segment = torch.cat([self.segment_type[:2], self.segment_type[2:].expand(K, self.dim)], 0)
        seq = self.context_norm(F.dropout(seq + segment, self.hidden_dropout, self.training))
        pad = ~torch.cat([torch.ones(B, 1, dtype=torch.bool, device=s.device), present], 1)
        for layer in self.context_encoder:
            seq = layer(seq, src_key_padding_mask=pad)
        return seq[:, 0]

    def _out(self, e: torch.Tensor) -> torch.Tensor:
        return F.dropout(e, self.embedding_dropout, self.training)

    # ---- KGEModel -----------------------------------------------------------------------------------------
    def _score_sp(self, s, p, targets=None):
        return self.encode(s, p, targets) @ self._out(self.entity.weight).T

    def _score_spo(self, s, p, o):
        return (self.encode(s, p) * self._out(self.entity(o))).sum(-1)

    def _score_sp_some(self, s, p, o):
        h = self.encode(s, p)
        return torch.einsum("bd,bnd->bn", h, self._out(self.entity(o)))

    def entity_embeddings(self) -> torch.Tensor:
        return self.entity.weight
