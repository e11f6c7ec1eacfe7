"""ConvE, InteractE and CompGCN: agreement with PyKEEN's ConvE, learning on the synthetic KG, consistency of the
scoring paths, checkpoint round trips, circular correlation, the CompGCN layer and its encoder cache."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from kgeval.models import build_model
from kgeval.models.compgcn import CompGCN, CompGCNLayer, ccorr
from kgeval.models.conv import ConvE, InteractE, chequer_permutations
from kgeval.training.config import TrainConfig
from kgeval.training.trainer import Trainer

# CPU-sized configurations (d = 32 = k_h · k_w with k_h = 4)
SMALL = {
    "ConvE": {"dim": 32, "k_h": 4, "filters": 8, "kernel_size": 3},
    "InteractE": {"dim": 32, "k_h": 4, "num_permutations": 2, "filters": 8, "kernel_size": 3},
    "CompGCN": {"dim": 32, "init_dim": 16, "k_h": 4, "filters": 8, "kernel_size": 3},
}


# tiny models: on a shared two-core machine intra-op threads only contend, and one thread fixes the
# summation order
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def randomize_batch_norms(model: torch.nn.Module, seed: int = 0) -> None:
    """Non-trivial eval-mode batch norms (running statistics and affine parameters) and entity biases."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                m.weight.copy_(torch.rand(n, generator=g) + 0.5)
                m.bias.copy_(torch.randn(n, generator=g) * 0.1)
        if hasattr(model, "entity_bias"):
            model.entity_bias.copy_(torch.randn(model.entity_bias.shape, generator=g) * 0.1)


def make(name: str, kg, seed: int = 0, **extra):
    torch.manual_seed(seed)
    model = build_model(name, kg.num_entities, kg.num_relations, graph=kg.splits["train"], **{**SMALL[name],
                                                                                               **extra})
    randomize_batch_norms(model, seed)
    return model.eval()


# ---- 1. ConvE = PyKEEN's ConvE --------------------------------------------------------------------------------
def test_conve_equals_pykeen_conve():
    """PyKEEN 1.11.1's ConvE and this ConvE are the same architecture, so with copied weights they give the same
    scores (eval mode: dropouts off, batch norms on running statistics — randomised here so they matter).

    Both follow the original code (TimDettmers/ConvE ``model.py``): BN₀ on the stacked [ē_h; r̄] image (e_h and r
    reshaped to height × width each and concatenated along the height), input dropout, conv with bias, BN₁,
    ReLU, Dropout2d, FC, hidden dropout, BN₂, ReLU, product with the entity matrix, plus a per-entity bias.
    Mapping: PyKEEN ``embedding_height``/``embedding_width`` = k_h/k_w (``input_channels`` left to resolve to 1);
    PyKEEN with inverse triples numbers relation r as 2r and its inverse as 2r + 1, this model as r and r + |R|;
    PyKEEN keeps the bias as a second entity representation of shape (|E|, 1). Differences from the paper's
    code in both: no ``padding_idx=0`` on the embedding tables. Head scores: PyKEEN's ``predict_h`` with inverse
    triples scores (t, r⁻¹, ?) — the same as this model's ``score_po``.
    """
    from pykeen.datasets import Nations
    from pykeen.models import ConvE as PyKEENConvE

    tf = Nations(create_inverse_triples=True).training
    E, R = tf.num_entities, tf.real_num_relations
    pk = PyKEENConvE(triples_factory=tf, embedding_dim=32, embedding_height=4, embedding_width=8,
                     output_channels=8, kernel_height=3, kernel_width=3, random_seed=0)
    torch.manual_seed(1)
    ours = ConvE(E, R, dim=32, k_h=4, filters=8, kernel_size=3)
    randomize_batch_norms(ours, 1)
    ia = pk.interaction
    with torch.no_grad():
        pk.entity_representations[0]._embeddings.weight.copy_(ours.entity.weight)
        pk.entity_representations[1]._embeddings.weight.copy_(ours.entity_bias[:, None])
        rel = pk.relation_representations[0]._embeddings.weight
        rel[0::2].copy_(ours.relation.weight[:R])
        rel[1::2].copy_(ours.relation.weight[R:])
        for theirs, mine in [(ia.hr2d[0], ours.bn0), (ia.hr2d[2], ours.conv), (ia.hr2d[3], ours.bn1),
                             (ia.hr1d[0], ours.fc), (ia.hr1d[2], ours.bn2)]:
            theirs.load_state_dict(mine.state_dict())
    ours.eval()
    pk.eval()
    assert ours.fc_in == ia.shape_info.num_in_features == 8 * (2 * 4 - 2) * (8 - 2)
    h = torch.arange(E).repeat_interleave(R)
    r = torch.arange(R).repeat(E)
    with torch.no_grad():
        tails_pk = pk.predict_t(torch.stack([h, r], 1))
        heads_pk = pk.predict_h(torch.stack([r, h], 1))
        tails, heads = ours.score_sp(h, r), ours.score_po(r, h)
    assert tails.shape == (E * R, E)
    assert tails.abs().max() > 0.1  # not a degenerate comparison
    torch.testing.assert_close(tails, tails_pk, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(heads, heads_pk, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(tails, heads)


def test_published_shapes():
    conve = ConvE(10, 3)
    assert conve.fc_in == 9728 and conve.conv.weight.shape == (32, 1, 3, 3)
    assert conve.stack(torch.zeros(2, 200), torch.zeros(2, 200)).shape == (2, 1, 40, 10)
    ie = InteractE(10, 3)
    assert ie.fc_in == 96 * 20 * 20 and ie.conv_filter.shape == (96, 1, 9, 9)
    g = np.array([[0, 0, 1], [1, 2, 2]])
    cg = CompGCN(10, 3, graph=g)
    assert cg.fc_in == 200 * 14 * 14 and cg.init_entity.shape == (10, 100) and cg.layers[0].w_in.shape == (100, 200)
    with pytest.raises(ValueError, match="reciprocal"):
        ConvE(10, 3, reciprocal=False)
    with pytest.raises(ValueError, match="multiple"):
        InteractE(10, 3, dim=30, k_h=4)


# ---- 2. learning on the synthetic KG --------------------------------------------------------------------------
# ConvE and CompGCN with 1vsAll (LibKGE's ConvE regime): KvsAll BCE spends its first epochs pushing every score
# down and needs more steps than a test can afford. InteractE with its own regime, BCE against sampled
# non-answers, which trains through ``score_sp_some``/``score_po_some``. Lower dropouts suit the tiny models.
LOW_DROPOUT = {"input_dropout": 0.1, "feature_map_dropout": 0.1, "hidden_dropout": 0.1}
TRAIN = {
    "ConvE": ({}, TrainConfig(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=6, eval_every=6)),
    "InteractE": (LOW_DROPOUT, TrainConfig(regime="negative_sampling", loss="bce", num_negatives=50,
                                           label_smoothing=0.1, lr=0.01, batch_size=128, max_epochs=8,
                                           eval_every=8)),
    "CompGCN": ({"gcn_dropout": 0.0, "encoder_dropout": 0.1, "feature_map_dropout": 0.1, "hidden_dropout": 0.1},
                TrainConfig(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=6, eval_every=6)),
}


@pytest.mark.parametrize("name", list(SMALL))
def test_learns_above_chance(synth_kg, name):
    extra, cfg = TRAIN[name]
    res = Trainer(synth_kg, name, {**SMALL[name], **extra}, cfg, seed=0, device="cpu").fit()
    assert res.best_valid_mrr > 4 * 6.0 / synth_kg.num_entities


@pytest.mark.parametrize("name", list(SMALL))
def test_training_is_deterministic_on_cpu(synth_kg, name):
    extra, cfg = TRAIN[name]
    cfg = dataclasses.replace(cfg, max_epochs=1, eval_every=1)

    def run(seed):
        model = Trainer(synth_kg, name, {**SMALL[name], **extra}, cfg, seed=seed, device="cpu").fit().model
        return model.state_dict()

    a, b, c = run(0), run(0), run(1)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


# ---- 3. the scoring paths agree -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(SMALL))
def test_scoring_paths_agree(synth_kg, name):
    model = make(name, synth_kg)
    E = synth_kg.num_entities
    t = torch.as_tensor(synth_kg.splits["valid"][:40])
    s, p, o = t[:, 0], t[:, 1], t[:, 2]
    cand = torch.randint(0, E, (len(t), 7), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        sp, po = model.score_sp(s, p), model.score_po(p, o)
        assert sp.shape == po.shape == (len(t), E)
        torch.testing.assert_close(model.score_spo(s, p, o), sp[torch.arange(len(t)), o], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(model.score_spo(s, p, o, direction="s"), po[torch.arange(len(t)), s],
                                   atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(model.score_sp_some(s, p, cand), sp.gather(1, cand), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(model.score_po_some(p, o, cand), po.gather(1, cand), atol=1e-5, rtol=1e-5)
        # one batch scored whole or in parts: a query's scores do not depend on its batch (eval mode)
        torch.testing.assert_close(torch.cat([model.score_sp(s[:13], p[:13]), model.score_sp(s[13:], p[13:])]), sp,
                                   atol=1e-5, rtol=1e-5)
    assert sp.std() > 1e-3


# ---- 4. checkpoints round-trip --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(SMALL))
def test_state_dict_round_trip(synth_kg, name):
    model = make(name, synth_kg, seed=2)
    torch.manual_seed(5)  # the rebuilt model starts from other weights
    rebuilt = build_model(name, synth_kg.num_entities, synth_kg.num_relations, graph=synth_kg.splits["train"],
                          **model.hparams)
    if name == "InteractE":
        assert "chequer_perm" in model.state_dict()
        with torch.no_grad():
            rebuilt.chequer_perm.copy_(rebuilt.chequer_perm.flip(1))  # must come back from the checkpoint
    s = torch.arange(20) % synth_kg.num_entities
    p = torch.arange(20) % synth_kg.num_relations
    with torch.no_grad():
        before = model.score_sp(s, p)
        assert not torch.allclose(rebuilt.eval().score_sp(s, p), before)
        rebuilt.load_state_dict(model.state_dict())
        assert torch.equal(rebuilt.eval().score_sp(s, p), before)
        assert torch.equal(rebuilt.score_po(p, s), model.score_po(p, s))
    if name == "InteractE":
        assert torch.equal(rebuilt.chequer_perm, model.chequer_perm)


# ---- InteractE's chequer ----------------------------------------------------------------------------------------
def reference_chequer(ent_perm, rel_perm, d, k_h, k_w):
    """``get_chequer_perm`` of malllabiisc/InteractE, given its permutations."""
    out = []
    for k in range(len(ent_perm)):
        temp, ei, ri = [], 0, 0
        for i in range(k_h):
            for _ in range(k_w):
                ent_first = (i % 2 == 0) == (k % 2 == 0)
                pair = [ent_perm[k][ei], rel_perm[k][ri] + d] if ent_first else [rel_perm[k][ri] + d, ent_perm[k][ei]]
                temp += pair
                ei, ri = ei + 1, ri + 1
        out.append(temp)
    return torch.tensor(out)


def test_chequer_permutations():
    d, k_h, P = 24, 4, 3
    perm = chequer_permutations(d, k_h, P, seed=7)
    assert perm.shape == (P, 2 * d)
    assert torch.equal(perm, chequer_permutations(d, k_h, P, seed=7))
    assert not torch.equal(perm, chequer_permutations(d, k_h, P, seed=8))
    for k in range(P):
        assert sorted(perm[k].tolist()) == list(range(2 * d))
    ent = [row[row < d].tolist() for row in perm]
    rel = [(row[row >= d] - d).tolist() for row in perm]
    assert torch.equal(perm, reference_chequer(ent, rel, d, k_h, d // k_h))
    # no two adjacent cells come from the same embedding
    grid = (perm < d).view(P, k_h, 2 * d // k_h)
    assert bool((grid[:, 1:] != grid[:, :-1]).all()) and bool((grid[:, :, 1:] != grid[:, :, :-1]).all())
    # the model's image puts those coordinates there
    m = InteractE(5, 2, dim=d, k_h=k_h, num_permutations=P, filters=2, kernel_size=3, permutation_seed=7)
    e, r = torch.randn(1, d), torch.randn(1, d)
    img = m.chequer(e, r)
    assert torch.equal(img.flatten(2)[0], torch.cat([e, r], 1)[0][perm])


# ---- 5. CompGCN -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [7, 8])
def test_ccorr_equals_direct(d):
    g = torch.Generator().manual_seed(d)
    a, b = torch.randn(3, d, generator=g, dtype=torch.float64), torch.randn(3, d, generator=g, dtype=torch.float64)
    direct = torch.stack([sum(a[:, i] * b[:, (i + k) % d] for i in range(d)) for k in range(d)], dim=1)
    torch.testing.assert_close(ccorr(a, b), direct)


@pytest.mark.parametrize("opn", ["corr", "sub", "mult"])
def test_compgcn_layer_equals_edge_by_edge(opn):
    """The vectorised layer against the formula evaluated edge by edge, with the original's normalisation."""
    torch.manual_seed(0)
    N, R, din, dout = 6, 2, 5, 4
    graph = np.array([[0, 0, 1], [0, 1, 2], [1, 0, 2], [3, 1, 0], [2, 0, 0], [4, 1, 1], [0, 0, 4]])
    model = CompGCN(N, R, graph=graph, dim=8, init_dim=din, k_h=2, filters=2, kernel_size=1, opn=opn).double()
    layer = CompGCNLayer(din, dout, opn, bias=True).double()
    randomize_batch_norms(layer)
    with torch.no_grad():
        layer.bias.normal_()
    layer.eval()
    x, rel = torch.randn(N, din, dtype=torch.float64), torch.randn(2 * R, din, dtype=torch.float64)
    got, got_rel = layer(x, rel, model.edge_src, model.edge_dst, model.edge_type, model.edge_norm.double())

    def phi(a, b):
        return {"corr": lambda: ccorr(a, b), "sub": lambda: a - b, "mult": lambda: a * b}[opn]()

    s, r, o = graph.T
    deg_s, deg_o = np.bincount(s, minlength=N), np.bincount(o, minlength=N)

    def inv(deg, v):
        return deg[v] ** -0.5 if deg[v] else 0.0

    agg_in = torch.zeros(N, dout, dtype=torch.float64)
    agg_out = torch.zeros(N, dout, dtype=torch.float64)
    for si, ri, oi in graph:  # s gathers from o through r; o gathers from s through r⁻¹
        agg_in[si] += inv(deg_s, si) * inv(deg_s, oi) * phi(x[oi], rel[ri]) @ layer.w_in
        agg_out[oi] += inv(deg_o, oi) * inv(deg_o, si) * phi(x[si], rel[ri + R]) @ layer.w_out
    loop = phi(x, layer.loop_rel.expand(N, -1)) @ layer.w_loop
    pre = (agg_in + agg_out + loop) / 3 + layer.bias
    bn = layer.bn
    want = torch.tanh((pre - bn.running_mean) / torch.sqrt(bn.running_var + bn.eps) * bn.weight + bn.bias)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(got_rel, rel @ layer.w_rel)
    if opn == "corr":  # grouped by (destination, relation) pairs: same values and gradients
        assert len(model.edge_pairs.dst) < len(model.edge_src)  # (0, r0) gathers from two edges
        xg, rg = x.clone().requires_grad_(), rel.clone().requires_grad_()
        args = (model.edge_src, model.edge_dst, model.edge_type, model.edge_norm.double())
        grads = []
        for pairs in (None, model.edge_pairs):
            out, out_rel = layer(xg, rg, *args, pairs)
            torch.testing.assert_close(out, want)
            grads.append(torch.autograd.grad((out * torch.arange(dout)).sum() + out_rel.sum(), (xg, rg)))
        for a, b in zip(*grads):
            torch.testing.assert_close(a, b)


def test_compgcn_encoder_cache(synth_kg):
    model = make("CompGCN", synth_kg)
    s = torch.arange(30) % synth_kg.num_entities
    p = torch.arange(30) % (2 * synth_kg.num_relations)
    with torch.no_grad():
        first = model.score_sp(s, p)
        model.score_sp(s[:5], p[:5])
        again = model.score_sp(s, p)
    assert model.encoder_runs == 1  # three batches, one encoder run
    assert torch.equal(first, again)
    with torch.enable_grad():  # eval mode with autograd: no cache, and a fresh run matches
        fresh = model.score_sp(s, p)
    torch.testing.assert_close(fresh.detach(), first, atol=1e-6, rtol=1e-6)
    # an optimiser step (still in eval mode) changes the weights in place: the cache must notice
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    opt.zero_grad()
    fresh.logsumexp(1).mean().backward()
    opt.step()
    runs = model.encoder_runs
    with torch.no_grad():
        after = model.score_sp(s, p)
    assert model.encoder_runs == runs + 1
    assert not torch.allclose(after, first)
    with torch.enable_grad():
        torch.testing.assert_close(model.score_sp(s, p).detach(), after, atol=1e-6, rtol=1e-6)
    # .train() drops the cache; loading other weights changes the versions
    with torch.no_grad():
        model.score_sp(s, p)
    model.train()
    assert model._cache is None
    model.eval()
    other = make("CompGCN", synth_kg, seed=3)
    model.load_state_dict(other.state_dict())
    with torch.no_grad():
        torch.testing.assert_close(model.score_sp(s, p), other.score_sp(s, p), atol=1e-6, rtol=1e-6)
