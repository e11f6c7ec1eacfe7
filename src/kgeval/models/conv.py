"""Convolutional decoders: ConvE and InteractE.

Both encode a query (s, p) into a vector q ∈ R^d with a 2-D convolution over a reshaped "image" of the subject
and relation embeddings, then score every entity with one matrix product: f(s, p, o) = q·e_o + b_o. Both exist
only with reciprocal relations (``supports_po = False``): as in the originals, a head question (?, p, o) is the
tail question (o, p⁻¹, ?) — the base class does that mapping, so ``reciprocal=True`` is required.

The CompGCN decoder (``compgcn.py``) reuses :func:`batch_norm` and :func:`conv_output_size` from here.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .base import KGEModel, init_embedding
from .hparams import DROPOUT, INIT, POSITIVE_OR_NULL, Bool, Int


def pair(k: int | Sequence[int]) -> tuple[int, int]:
    """A kernel size given as an int (square) or as (height, width)."""
    if isinstance(k, int):
        return int(k), int(k)
    kh, kw = k
    return int(kh), int(kw)


def conv_output_size(height: int, width: int, kernel: tuple[int, int], padding: tuple[int, int] = (0, 0)
                     ) -> tuple[int, int]:
    """Output height and width of a stride-1 convolution; refuses a kernel larger than the (padded) image."""
    oh = height + 2 * padding[0] - kernel[0] + 1
    ow = width + 2 * padding[1] - kernel[1] + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"kernel {kernel} does not fit a {height}×{width} image with padding {padding}")
    return oh, ow


def batch_norm(bn: nn.modules.batchnorm._BatchNorm, x: torch.Tensor) -> torch.Tensor:
    """``bn(x)``, except that a training batch with a single value per channel (a last batch of one question
    through ``BatchNorm1d``) is normalised with the running statistics instead of raising."""
    if bn.training and x.numel() == x.shape[1]:
        return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)
    return bn(x)


def split_dim(dim: int, k_h: int) -> int:
    if k_h <= 0 or dim % k_h:
        raise ValueError(f"dim {dim} is not a multiple of the reshape height k_h={k_h}")
    return dim // k_h


class _ConvKGE(KGEModel):
    """Entity/relation tables (2|R| relation rows), a per-entity bias and the scoring shared by the decoders.

    Subclasses implement ``encode(s, p) -> (B, d)``; then f(s, p, o) = encode(s, p)·e_o + b_o.
    """

    supports_po = False
    HPARAMS = {"init": INIT, "init_std": POSITIVE_OR_NULL}

    def __init__(self, num_entities, num_relations, dim, reciprocal=True, init="xavier", init_std=None, **kw):
        super().__init__(num_entities, num_relations, dim, reciprocal, init=init, init_std=init_std, **kw)
        self.entity = init_embedding(num_entities, dim, init_std, init)
        self.relation = init_embedding(self.num_relation_rows, dim, init_std, init)
        self.entity_bias = nn.Parameter(torch.zeros(num_entities))  # b_t (LibKGE: column 0 of the entity table)

    def encode(self, s: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def entity_embeddings(self) -> torch.Tensor:
        return self.entity.weight

    def factors(self, s, p, o):
        return [self.entity(s), self.relation(p), self.entity(o)]

    def _score_spo(self, s, p, o):
        return (self.encode(s, p) * self.entity(o)).sum(-1) + self.entity_bias[o]

    def _score_sp(self, s, p):
        return torch.addmm(self.entity_bias[None, :], self.encode(s, p), self.entity.weight.T)

    def _score_sp_some(self, s, p, o):
        # encode each question once; (B, n, d) candidate embeddings times its query vector
        q = self.encode(s, p)
        return torch.bmm(self.entity(o), q[:, :, None]).squeeze(-1) + self.entity_bias[o]


class ConvE(_ConvKGE):
    """ConvE (Dettmers et al. 2018, "Convolutional 2D Knowledge Graph Embeddings"; TimDettmers/ConvE):

        f(h, r, t) = ReLU(BN₂(drop_h(W · vec(drop_f(ReLU(BN₁(conv(drop_i(BN₀([ē_h; r̄]))))))) + b_W))) · e_t + b_t

    **Stacking**: e_h and r (∈ R^d) are each reshaped row-major to a k_h × k_w image (k_w = d / k_h; 20 × 10 for
    d = 200) and stacked along the height, [ē_h; r̄] ∈ R^{1 × 2k_h × k_w} (40 × 10, one channel). ``filters``
    kernels of size ``kernel_size`` (32 × 3×3, stride 1, ``padding`` 0, with bias) give
    filters × (2k_h + 2·padding − k + 1) × (k_w + 2·padding − k + 1) features (32 × 38 × 8 = 9728 for the
    published setting; computed from the shapes), projected by the fully connected layer W to R^d.

    Parameters: entity E ∈ R^{|E|×d}, relation R ∈ R^{2|R|×d} (forward rows first, then inverse), entity bias
    b ∈ R^{|E|} (``entity_bias``), conv weight (filters, 1, k, k) + bias (filters), fc (d, n_fc) + bias (d), batch
    norms bn0 (1 channel, on the stacked input), bn1 (filters), bn2 (d). Dropouts: input .2 (elementwise),
    feature map .2 (whole channels, ``Dropout2d``), hidden .3. Embeddings are initialised xavier-normal, the
    bias with zeros, as in the original.

    Deviations from the original code: no ``padding_idx=0`` on the embedding tables (in the original it freezes the
    gradient of entity/relation 0, an artefact of its padding convention); reciprocal relations are required
    (``supports_po = False``), as the original answers head questions only through inverse relations. Options
    beyond the original, default off: ``padding`` > 0 and ``input_batch_norm=False``. LibKGE's ConvE equals this
    model in eval mode with ``input_batch_norm=False`` (it has no bn0 and drops out embeddings instead of the
    stacked image), k_h = its ``emb_height``, its affine-free bn1/bn2 loaded as weight 1 and bias 0, and the
    bias taken from column 0 of its entity table (``entity_bias``; the other columns are the embeddings). Against PyKEEN's ConvE (``ConvEInteraction``) the
    architecture is the same with ``embedding_height=k_h``, ``embedding_width=k_w``, ``input_channels=1``; PyKEEN
    numbers inverse relations 2r + 1 (interleaved) where this model uses r + |R|.
    """

    name = "ConvE"
    HPARAMS = {"k_h": Int(1), "filters": Int(1), "kernel_size": Int(1, pair=True), "padding": Int(0),
               "conv_bias": Bool(), "input_batch_norm": Bool(), "input_dropout": DROPOUT,
               "feature_map_dropout": DROPOUT, "hidden_dropout": DROPOUT}

    def __init__(self, num_entities, num_relations, dim=200, reciprocal=True, k_h=20, filters=32, kernel_size=3,
                 padding=0, conv_bias=True, input_batch_norm=True, input_dropout=0.2, feature_map_dropout=0.2,
                 hidden_dropout=0.3, init="xavier", init_std=None, **kw):
        super().__init__(num_entities, num_relations, dim, reciprocal, init=init, init_std=init_std, k_h=k_h,
                         filters=filters, kernel_size=kernel_size, padding=padding, conv_bias=conv_bias,
                         input_batch_norm=input_batch_norm, input_dropout=input_dropout,
                         feature_map_dropout=feature_map_dropout, hidden_dropout=hidden_dropout, **kw)
        self.k_h, self.k_w = int(k_h), split_dim(dim, k_h)
        kernel = pair(kernel_size)
        oh, ow = conv_output_size(2 * self.k_h, self.k_w, kernel, (padding, padding))
        self.fc_in = filters * oh * ow
        self.bn0 = nn.BatchNorm2d(1) if input_batch_norm else None
        self.input_drop = nn.Dropout(input_dropout)
        self.conv = nn.Conv2d(1, filters, kernel, stride=1, padding=padding, bias=conv_bias)
        self.bn1 = nn.BatchNorm2d(filters)
        self.feature_drop = nn.Dropout2d(feature_map_dropout)
        self.fc = nn.Linear(self.fc_in, dim)
        self.hidden_drop = nn.Dropout(hidden_dropout)
        self.bn2 = nn.BatchNorm1d(dim)

    def stack(self, e: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        """[ē_h; r̄]: (B, d), (B, d) → (B, 1, 2k_h, k_w)."""
        return torch.cat([e.view(-1, 1, self.k_h, self.k_w), r.view(-1, 1, self.k_h, self.k_w)], dim=2)

    def encode(self, s, p):
        x = self.stack(self.entity(s), self.relation(p))
        if self.bn0 is not None:
            x = batch_norm(self.bn0, x)
        x = self.conv(self.input_drop(x))
        x = self.feature_drop(F.relu(batch_norm(self.bn1, x)))
        x = self.hidden_drop(self.fc(x.flatten(1)))
        return F.relu(batch_norm(self.bn2, x))


def chequer_permutations(dim: int, k_h: int, num_permutations: int, seed: int) -> torch.Tensor:
    """InteractE's chequered feature permutations: (P, 2d) indices into [e_h ‖ r] (r at offset d).

    Permutation k draws a random order π_k of e_h's and σ_k of r's coordinates (a torch generator seeded with
    ``seed``; all entity orders first, then all relation orders, as the original draws them) and lays them on a
    k_h × 2k_w grid, row-major, so that cell (i, j) holds the next entity coordinate when (i + j + k) is even and
    the next relation coordinate otherwise: no two horizontally or vertically adjacent cells come from the same
    embedding, and odd permutations start each row with the other embedding (as ``get_chequer_perm`` does).
    """
    k_w = split_dim(dim, k_h)
    g = torch.Generator().manual_seed(int(seed))
    ent = torch.stack([torch.randperm(dim, generator=g) for _ in range(num_permutations)])
    rel = torch.stack([torch.randperm(dim, generator=g) for _ in range(num_permutations)]) + dim
    i = torch.arange(k_h)[:, None]
    j = torch.arange(2 * k_w)[None, :]
    k = torch.arange(num_permutations)[:, None, None]
    is_ent = ((i + j + k) % 2 == 0).reshape(num_permutations, 2 * dim)  # each row holds exactly d entity cells
    out = torch.empty(num_permutations, 2 * dim, dtype=torch.long)
    out[is_ent] = ent.reshape(-1)  # boolean assignment fills row-major: permutation k gets π_k in order
    out[~is_ent] = rel.reshape(-1)
    return out


class InteractE(_ConvKGE):
    """InteractE (Vashishth et al. 2020, AAAI, "InteractE: Improving Convolution-based Knowledge Graph Embeddings
    by Increasing Feature Interactions"; malllabiisc/InteractE ``model.py``):

        x = [e_h ‖ r][Π] ∈ R^{P × k_h × 2k_w}         (P chequered permutations, 20 × 20 for d = 200)
        q = ReLU(BN₂(drop_h(W · vec(drop_f(ReLU(BN₁(circconv(drop_i(BN₀(x)), Ω))))) + b_W)))
        f(h, r, t) = q · e_t + b_t

    The P permutations Π (buffer ``chequer_perm``, (P, 2d), see :func:`chequer_permutations`) are drawn at
    construction from ``permutation_seed`` and saved with the weights. The convolution is depthwise
    (``groups=P``): every permutation channel is convolved with the same ``filters`` kernels Ω ∈ R^{96×1×9×9}
    (the original repeats one filter bank for every permutation), without bias, after circular padding by
    ⌊k/2⌋ on each side, so each of the P × filters feature maps keeps the image size; the FC layer has
    P · filters · k_h' · (2k_w)' inputs (38,400 for P = 1, computed from the shapes).

    Parameters: entity E ∈ R^{|E|×d}, relation R ∈ R^{2|R|×d}, entity bias b ∈ R^{|E|}, ``conv_filter``
    (filters, 1, k, k), fc (d, n_fc) + bias, bn0 (P), bn1 (P · filters), bn2 (d). Defaults are the
    FB15k-237 settings of the official repository: d = 200 (k_h = 20, k_w = 10), P = 1, 96 filters 9×9,
    dropouts input .2 / feature map .5 / hidden .5; trained with BCE (smoothing .1) against the answer plus 1,000
    sampled non-answers (``_score_sp_some`` encodes each query once). Initialisation xavier-normal (embeddings,
    filters), bias zeros.

    Deviation: the original reshapes the chequered sequence to (2k_w, k_h); this model uses (k_h, 2k_w), the
    layout the chequer was built for. Both are 20 × 20 — identical — at the published shape. Reciprocal
    relations are required (the original trains (t, r⁻¹, h) and answers head questions that way).
    """

    name = "InteractE"
    HPARAMS = {"k_h": Int(1), "num_permutations": Int(1, 1000), "filters": Int(1), "kernel_size": Int(1, pair=True),
               "input_dropout": DROPOUT, "feature_map_dropout": DROPOUT, "hidden_dropout": DROPOUT,
               "permutation_seed": Int(0)}

    def __init__(self, num_entities, num_relations, dim=200, reciprocal=True, k_h=20, num_permutations=1,
                 filters=96, kernel_size=9, input_dropout=0.2, feature_map_dropout=0.5, hidden_dropout=0.5,
                 permutation_seed=0, init="xavier", init_std=None, **kw):
        super().__init__(num_entities, num_relations, dim, reciprocal, init=init, init_std=init_std, k_h=k_h,
                         num_permutations=num_permutations, filters=filters, kernel_size=kernel_size,
                         input_dropout=input_dropout, feature_map_dropout=feature_map_dropout,
                         hidden_dropout=hidden_dropout, permutation_seed=permutation_seed, **kw)
        self.k_h, self.k_w = int(k_h), split_dim(dim, k_h)
        self.num_permutations, self.filters = int(num_permutations), int(filters)
        kernel = pair(kernel_size)
        self.pad = (kernel[1] // 2, kernel[1] // 2, kernel[0] // 2, kernel[0] // 2)  # F.pad: left, right, top, bottom
        oh, ow = conv_output_size(self.k_h, 2 * self.k_w, kernel, (kernel[0] // 2, kernel[1] // 2))
        self.fc_in = self.num_permutations * self.filters * oh * ow
        self.register_buffer("chequer_perm", chequer_permutations(dim, self.k_h, self.num_permutations,
                                                                  permutation_seed))
        self.bn0 = nn.BatchNorm2d(self.num_permutations)
        self.input_drop = nn.Dropout(input_dropout)
        self.conv_filter = nn.Parameter(torch.empty(self.filters, 1, *kernel))
        nn.init.xavier_normal_(self.conv_filter)
        self.bn1 = nn.BatchNorm2d(self.num_permutations * self.filters)
        self.feature_drop = nn.Dropout2d(feature_map_dropout)
        self.fc = nn.Linear(self.fc_in, dim)
        self.hidden_drop = nn.Dropout(hidden_dropout)
        self.bn2 = nn.BatchNorm1d(dim)

    def chequer(self, e: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        """(B, d), (B, d) → (B, P, k_h, 2k_w) chequered images."""
        x = torch.cat([e, r], dim=1)[:, self.chequer_perm]  # (B, P, 2d)
        return x.view(-1, self.num_permutations, self.k_h, 2 * self.k_w)

    def encode(self, s, p):
        x = batch_norm(self.bn0, self.chequer(self.entity(s), self.relation(p)))
        x = F.pad(self.input_drop(x), self.pad, mode="circular")
        x = F.conv2d(x, self.conv_filter.repeat(self.num_permutations, 1, 1, 1), groups=self.num_permutations)
        x = self.feature_drop(F.relu(batch_norm(self.bn1, x)))
        x = self.hidden_drop(self.fc(x.flatten(1)))
        return F.relu(batch_norm(self.bn2, x))
