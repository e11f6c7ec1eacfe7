"""CompGCN: a composition-based relational GCN encoder with a ConvE-style decoder."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .base import KGEModel
from .conv import batch_norm, conv_output_size, pair, split_dim
from .hparams import DROPOUT, Bool, Choice, Int

OPERATIONS = ("corr", "sub", "mult")


def ccorr(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Circular correlation along the last dimension, [a ⋆ b]_k = Σ_i a_i b_{(i+k) mod d}, in O(d log d) via
    the FFT: irfft(conj(rfft(a)) ⊙ rfft(b)) — the ``ccorr`` of the CompGCN repository (and of HolE)."""
    d = a.shape[-1]
    return torch.fft.irfft(torch.conj(torch.fft.rfft(a, dim=-1)) * torch.fft.rfft(b, dim=-1), n=d, dim=-1)


def _xavier(*shape: int) -> nn.Parameter:
    p = nn.Parameter(torch.empty(*shape))
    nn.init.xavier_normal_(p)
    return p


class EdgePairs(nn.Module):
    """A CompGCN edge list grouped by distinct (destination, relation) pairs: ``dst`` and ``typ`` per pair, and
    the sparse (pairs × |E|) matrix of edge weights, so that a layer sums each pair's weighted neighbour inputs in
    one sparse product (FB15k-237: 150k pairs for 544k edges). Buffers are non-persistent (rebuilt from the
    graph)."""

    def __init__(self, src: torch.Tensor, dst: torch.Tensor, typ: torch.Tensor, norm: torch.Tensor,
                 num_entities: int, num_types: int):
        super().__init__()
        pair, inverse = torch.unique(dst * num_types + typ, return_inverse=True)
        self.num_entities = int(num_entities)
        self.register_buffer("dst", pair // num_types, persistent=False)
        self.register_buffer("typ", pair % num_types, persistent=False)
        m = torch.sparse_coo_tensor(torch.stack([inverse, src]), norm, (len(pair), num_entities),
                                    check_invariants=True).coalesce()
        self.register_buffer("index", m.indices(), persistent=False)
        self.register_buffer("weight", m.values(), persistent=False)

    def sum_over_edges(self, x: torch.Tensor) -> torch.Tensor:
        """(pairs, c): Σ over each pair's edges of weight · x[src], for x (|E|, c)."""
        m = torch.sparse_coo_tensor(self.index, self.weight, (len(self.dst), self.num_entities), is_coalesced=True,
                                    check_invariants=False)  # checked once at construction
        return torch.sparse.mm(m, x)


class CompGCNLayer(nn.Module):
    """One CompGCN convolution (the repository's ``CompGCNConv``), vectorised over the edge list:

        h_v' = tanh(BN(⅓ drop(Σ_{(u,r)∈in(v)} n_uv W_I φ(h_u, z_r)) + ⅓ drop(Σ_{(u,r)∈out(v)} n_uv W_O φ(h_u, z_r⁻¹))
                       + ⅓ W_S φ(h_v, z_loop) [+ bias]))
        z' = W_rel z                                         (over all 2|R| relation rows; the loop row is dropped)

    n_uv = deg(v)^-½ deg(u)^-½ with deg counted per edge direction over the aggregating node, as the original's
    ``compute_norm`` (a neighbour that never aggregates in that direction gets weight 0). Because φ is linear in
    h_u for a fixed z and W is linear, the layer aggregates Σ n φ(h_u, z) first and multiplies by W once per
    node; for φ = circular correlation the sum runs in the Fourier domain (one rfft per entity and relation
    row, one irfft per node), so no per-edge FFT and no (edges × d_out) tensor is formed. With ``pairs``
    (:class:`EdgePairs`) the edges are further grouped by (destination, relation): z_r is constant within a group,
    so Σ n φ(h_u, z_r) = z_r ⊙ Σ n h_u there (in the Fourier domain), one sparse product and one complex product
    per group instead of one per edge.
    """

    def __init__(self, in_dim: int, out_dim: int, opn: str = "corr", dropout: float = 0.1, bias: bool = False):
        super().__init__()
        if opn not in OPERATIONS:
            raise ValueError(f"CompGCN composition {opn!r} is not one of {OPERATIONS}")
        self.in_dim, self.out_dim, self.opn = in_dim, out_dim, opn
        self.w_in = _xavier(in_dim, out_dim)
        self.w_out = _xavier(in_dim, out_dim)
        self.w_loop = _xavier(in_dim, out_dim)
        self.w_rel = _xavier(in_dim, out_dim)
        self.loop_rel = _xavier(1, in_dim)
        self.bias = nn.Parameter(torch.zeros(out_dim)) if bias else None
        self.drop = nn.Dropout(dropout)
        self.bn = nn.BatchNorm1d(out_dim)

    def forward(self, x: torch.Tensor, rel: torch.Tensor, src: torch.Tensor, dst: torch.Tensor, typ: torch.Tensor,
                norm: torch.Tensor, pairs: EdgePairs | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """x (N, in), rel (2|R|, in); edges: src → dst (dst in [0, 2N): first N = "in" aggregation, then
        "out"), relation row typ, weight norm; ``pairs``: the same edges grouped by (dst, typ) (faster)."""
        n = x.shape[0]
        rel_all = torch.cat([rel, self.loop_rel], dim=0)
        loop = torch.full((n,), rel_all.shape[0] - 1, dtype=torch.long, device=x.device)
        if self.opn == "corr":
            xf, rf = torch.fft.rfft(x, dim=-1).conj(), torch.fft.rfft(rel_all, dim=-1)
            if pairs is not None:
                # Σ_edges n φ(h_src, z_typ) = Σ_pairs z_typ ⊙ (Σ_{edges of the pair} n h_src): one sparse product,
                # then one complex product per distinct (destination, relation) pair instead of per edge
                per_pair = torch.view_as_complex(pairs.sum_over_edges(torch.view_as_real(xf.resolve_conj()).flatten(1))
                                                 .unflatten(1, (-1, 2)).contiguous())
                msg, dst = per_pair * rf[pairs.typ], pairs.dst
            else:
                msg = xf[src] * rf[typ] * norm[:, None]
            agg = torch.zeros(2 * n, xf.shape[1], dtype=msg.dtype, device=x.device).index_add_(0, dst, msg)
            agg = torch.fft.irfft(agg, n=self.in_dim, dim=-1)
            self_msg = torch.fft.irfft(xf * rf[loop], n=self.in_dim, dim=-1)
        else:
            compose = torch.mul if self.opn == "mult" else torch.sub
            msg = compose(x[src], rel_all[typ]) * norm[:, None]
            agg = torch.zeros(2 * n, self.in_dim, dtype=msg.dtype, device=x.device).index_add_(0, dst, msg)
            self_msg = compose(x, rel_all[loop])
        out = (self.drop(agg[:n] @ self.w_in) + self.drop(agg[n:] @ self.w_out) + self_msg @ self.w_loop) / 3.0
        if self.bias is not None:
            out = out + self.bias
        return torch.tanh(batch_norm(self.bn, out)), rel @ self.w_rel


class CompGCN(KGEModel):
    """CompGCN (Vashishth et al. 2020, ICLR, "Composition-based Multi-Relational Graph Convolutional Networks";
    malllabiisc/CompGCN, ``CompGCN_ConvE`` with ``opn=corr``):

    Encoder: one :class:`CompGCNLayer` (``gcn_layers``; 2 supported as in the original) over the training graph
    with its inverse edges and self-loops, from initial embeddings H⁰ ∈ R^{|E|×init_dim}, Z⁰ ∈
    R^{2|R|×init_dim} (forward rows, then inverse rows) to H ∈ R^{|E|×d}, Z = Z⁰ W_rel ∈ R^{2|R|×d}
    (100 → 200), φ = circular correlation (``opn``: corr | sub | mult), then dropout on H (``encoder_dropout``).
    For a triple (s, r, o) of the graph, s aggregates φ(h_o, z_r) with W_I and o aggregates φ(h_s, z_{r⁻¹}) with
    W_O, as in the repository's ``construct_adj`` + ``MessagePassing``.

    Decoder (ConvE-style): the encoded h_s and z_r are interleaved coordinate by coordinate (h_0, z_0, h_1, z_1,
    …) and reshaped to a one-channel 2k_w × k_h image (20 × 20), then BN₀ → conv (``filters`` 200 × 7×7, no
    padding, bias only with ``bias=True``) → BN₁ → ReLU → dropout (``feature_map_dropout`` .3, elementwise) → FC
    (filters · (2k_w − k + 1) · (k_h − k + 1) → d; 39,200 → 200) → dropout (``hidden_dropout`` .3) → BN₂ → ReLU
    gives q, and f(s, r, o) = q · h_o + b_o with a per-entity bias b (``entity_bias``).

    Parameters: ``init_entity`` (|E|, init_dim), ``init_relation`` (2|R|, init_dim); per layer W_I, W_O, W_S,
    W_rel (in, out), z_loop (1, in), BN (out), optional bias; decoder bn0, conv, bn1, fc, bn2, entity bias (|E|).
    Defaults: the repository's FB15k-237 settings (init_dim 100, d = 200 = k_h·k_w with k_h 20, 1 layer, GCN
    dropout .1, dropouts .3/.3/.3, 200 filters 7×7, xavier-normal initialisation, no bias). Reciprocal relations
    are required (``supports_po = False``): head questions are tail questions of r⁻¹.

    ``needs_graph``: the constructor takes the training triples (n, 3); the edge list is kept in non-persistent
    buffers (rebuilt from ``graph``, not stored in checkpoints). In eval mode without autograd the encoder output
    is cached (keyed by every parameter's and buffer's storage and version counter, dropped by ``.train()``), so
    ranking all questions runs the GCN once; in training it runs for every batch, as in the original.

    Deviations: the original batches messages with torch_scatter over edges; this implementation aggregates the
    composed inputs before the (linear) W_I/W_O — equal up to floating-point order. For two layers the original
    applies its ConvE feature dropout rate after the second layer; so does this (``feature_map_dropout``).
    """

    name = "CompGCN"
    needs_graph = True
    supports_po = False
    HPARAMS = {"init_dim": Int(1, 100_000), "gcn_layers": Choice(1, 2), "gcn_dim": Int(1, 100_000),
               "opn": Choice(*OPERATIONS), "gcn_dropout": DROPOUT, "encoder_dropout": DROPOUT, "k_h": Int(1),
               "filters": Int(1), "kernel_size": Int(1, pair=True), "feature_map_dropout": DROPOUT,
               "hidden_dropout": DROPOUT, "bias": Bool()}

    def __init__(self, num_entities, num_relations, graph, dim=200, reciprocal=True, init_dim=100, gcn_layers=1,
                 gcn_dim=200, opn="corr", gcn_dropout=0.1, encoder_dropout=0.3, k_h=20, filters=200, kernel_size=7,
                 feature_map_dropout=0.3, hidden_dropout=0.3, bias=False, **kw):
        super().__init__(num_entities, num_relations, dim, reciprocal, init_dim=init_dim, gcn_layers=gcn_layers,
                         gcn_dim=gcn_dim, opn=opn, gcn_dropout=gcn_dropout, encoder_dropout=encoder_dropout,
                         k_h=k_h, filters=filters, kernel_size=kernel_size,
                         feature_map_dropout=feature_map_dropout, hidden_dropout=hidden_dropout, bias=bias, **kw)
        if gcn_layers not in (1, 2):
            raise ValueError("CompGCN supports 1 or 2 GCN layers")
        self.k_h, self.k_w = int(k_h), split_dim(dim, k_h)
        self.init_entity = _xavier(num_entities, init_dim)
        self.init_relation = _xavier(self.num_relation_rows, init_dim)
        dims = [init_dim, dim] if gcn_layers == 1 else [init_dim, gcn_dim, dim]
        self.layers = nn.ModuleList(CompGCNLayer(a, b, opn, gcn_dropout, bias) for a, b in zip(dims[:-1], dims[1:]))
        self.layer_drops = nn.ModuleList([nn.Dropout(encoder_dropout)]
                                         + ([nn.Dropout(feature_map_dropout)] if gcn_layers == 2 else []))
        self._set_graph(graph)
        # decoder
        kernel = pair(kernel_size)
        oh, ow = conv_output_size(2 * self.k_w, self.k_h, kernel)
        self.fc_in = filters * oh * ow
        self.bn0 = nn.BatchNorm2d(1)
        self.conv = nn.Conv2d(1, filters, kernel, stride=1, padding=0, bias=bias)
        self.bn1 = nn.BatchNorm2d(filters)
        self.feature_drop = nn.Dropout(feature_map_dropout)
        self.fc = nn.Linear(self.fc_in, dim)
        self.hidden_drop = nn.Dropout(hidden_dropout)
        self.bn2 = nn.BatchNorm1d(dim)
        self.entity_bias = nn.Parameter(torch.zeros(num_entities))
        self._cache: tuple[tuple, tuple[torch.Tensor, torch.Tensor]] | None = None
        self.encoder_runs = 0  # how often the GCN ran (the cache test counts it)

    # ---- the graph --------------------------------------------------------------------------------------------
    def _set_graph(self, graph) -> None:
        g = np.asarray(graph, dtype=np.int64).reshape(-1, 3)
        if len(g) and (g[:, [0, 2]].min() < 0 or g[:, [0, 2]].max() >= self.num_entities
                       or g[:, 1].min() < 0 or g[:, 1].max() >= self.num_relations):
            raise ValueError("CompGCN graph holds ids outside the model's entities/relations")
        s, r, o = (torch.as_tensor(g[:, i]) for i in range(3))
        n = self.num_entities

        def norm(aggregator: torch.Tensor, neighbour: torch.Tensor) -> torch.Tensor:
            deg = torch.bincount(aggregator, minlength=n).float()
            inv = deg.pow(-0.5)
            inv[torch.isinf(inv)] = 0.0
            return inv[aggregator] * inv[neighbour]

        # "in": s aggregates φ(h_o, z_r); "out": o aggregates φ(h_s, z_{r⁻¹}) (destination offset by N)
        self.register_buffer("edge_src", torch.cat([o, s]), persistent=False)
        self.register_buffer("edge_dst", torch.cat([s, o + n]), persistent=False)
        self.register_buffer("edge_type", torch.cat([r, r + self.num_relations]), persistent=False)
        self.register_buffer("edge_norm", torch.cat([norm(s, o), norm(o, s)]), persistent=False)
        # only circular correlation aggregates through (destination, relation) groups
        self.edge_pairs = (EdgePairs(self.edge_src, self.edge_dst, self.edge_type, self.edge_norm, n,
                                     2 * self.num_relations) if self.layers[0].opn == "corr" else None)

    # ---- encoder with an eval-mode cache ----------------------------------------------------------------------
    def train(self, mode: bool = True):
        self._cache = None
        return super().train(mode)

    def clear_cache(self) -> None:
        self._cache = None

    def _state_key(self) -> tuple:
        return tuple((t.device, t.data_ptr(), t._version) for t in (*self.parameters(), *self.buffers()))

    def _run_encoder(self) -> tuple[torch.Tensor, torch.Tensor]:
        self.encoder_runs += 1
        x, r = self.init_entity, self.init_relation
        for layer, drop in zip(self.layers, self.layer_drops):
            x, r = layer(x, r, self.edge_src, self.edge_dst, self.edge_type, self.edge_norm, self.edge_pairs)
            x = drop(x)
        return x, r

    def encoded(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(entity (|E|, d), relation (2|R|, d)) encoder output; cached in eval mode under ``torch.no_grad``."""
        if self.training or torch.is_grad_enabled():
            return self._run_encoder()
        key = self._state_key()
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self._run_encoder())
        return self._cache[1]

    # ---- decoder ----------------------------------------------------------------------------------------------
    def decode(self, e: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        """Query vectors (B, d) from encoded subject and relation vectors (B, d) each."""
        x = torch.stack([e, r], dim=2).reshape(-1, 1, 2 * self.k_w, self.k_h)  # e_0, r_0, e_1, r_1, …
        x = self.conv(batch_norm(self.bn0, x))
        x = self.feature_drop(F.relu(batch_norm(self.bn1, x)))
        x = self.hidden_drop(self.fc(x.flatten(1)))
        return F.relu(batch_norm(self.bn2, x))

    def entity_embeddings(self) -> torch.Tensor:
        return self.encoded()[0]

    def factors(self, s, p, o):
        return [self.init_entity[s], self.init_relation[p], self.init_entity[o]]

    def _score_spo(self, s, p, o):
        x, r = self.encoded()
        return (self.decode(x[s], r[p]) * x[o]).sum(-1) + self.entity_bias[o]

    def _score_sp(self, s, p):
        x, r = self.encoded()
        return torch.addmm(self.entity_bias[None, :], self.decode(x[s], r[p]), x.T)

    def _score_sp_some(self, s, p, o):
        x, r = self.encoded()
        q = self.decode(x[s], r[p])
        return torch.bmm(x[o], q[:, :, None]).squeeze(-1) + self.entity_bias[o]
