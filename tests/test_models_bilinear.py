"""The bilinear models (DistMult, RESCAL, ComplEx, TuckER) and BiQUE: agreement with PyKEEN on copied weights,
learning on the synthetic KG, consistency of the scoring forms, rebuilding from hparams, biquaternion algebra."""

from __future__ import annotations

import inspect

import pytest
import torch

from kgeval.models import build_model, model_class
from kgeval.models.quaternion import adjoint_factor, biquaternion_modulus, complex_mul, hamilton_product
from kgeval.training.config import TrainConfig
from kgeval.training.losses import regularization
from kgeval.training.trainer import Trainer

# (model, reciprocal) settings each model supports; TuckER only exists with reciprocal relations
SETTINGS = [("DistMult", False), ("DistMult", True), ("RESCAL", False), ("RESCAL", True), ("ComplEx", False),
            ("ComplEx", True), ("TuckER", True), ("BiQUE", False), ("BiQUE", True)]
# small architectures with initial scores of order 1 (the published initialisations of ComplEx/BiQUE give scores
# of order 1e-9, which would make a 1e-5 agreement check vacuous)
SMALL = {
    "DistMult": {"dim": 8},
    "RESCAL": {"dim": 6},
    "ComplEx": {"dim": 8, "init_std": 0.5},
    "TuckER": {"dim": 6, "relation_dim": 4},
    "BiQUE": {"dim": 16, "init_std": 0.5},
}
NE, NR = 30, 5


# tiny models: on a shared two-core machine intra-op threads only contend, and one thread fixes the
# summation order
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def small_model(name: str, reciprocal: bool, seed: int = 0, num_entities: int = NE, num_relations: int = NR):
    torch.manual_seed(seed)
    model = build_model(name, num_entities, num_relations, **{**SMALL[name], "reciprocal": reciprocal})
    if name == "TuckER":  # non-trivial batch-norm statistics and affine parameters
        with torch.no_grad():
            for bn in (model.bn0, model.bn1):
                bn.running_mean.uniform_(-0.5, 0.5)
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.uniform_(-0.5, 0.5)
    return model.eval()


def batch(n: int = 11, seed: int = 1, num_entities: int = NE, num_relations: int = NR):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, num_entities, (n,), generator=g), torch.randint(0, num_relations, (n,), generator=g),
            torch.randint(0, num_entities, (n,), generator=g))


# ---- 1. agreement with PyKEEN 1.11.1 on copied weights ------------------------------------------------------------
@pytest.fixture(scope="module")
def nations():
    datasets = pytest.importorskip("pykeen.datasets")  # only the PyKEEN comparison needs PyKEEN
    return {False: datasets.Nations(), True: datasets.Nations(create_inverse_triples=True)}


def _interleaved_rows(ours: torch.Tensor, pk: torch.Tensor, reciprocal: bool) -> None:
    """Copy PyKEEN relation rows into ours: PyKEEN keeps the inverse of relation r at row 2r + 1 (forward at 2r),
    we keep forward relations first and their inverses at r + |R|."""
    if reciprocal:
        R = ours.shape[0] // 2
        ours[:R] = pk[0::2]
        ours[R:] = pk[1::2]
    else:
        ours.copy_(pk)


def pykeen_pair(name: str, reciprocal: bool, tf):
    """A PyKEEN model and ours with the same weights, both in eval mode."""
    from pykeen import models as pkm

    E, R = tf.num_entities, tf.real_num_relations
    torch.manual_seed(0)
    if name == "DistMult":
        pk = pkm.DistMult(triples_factory=tf, embedding_dim=8, random_seed=0)
        ours = build_model("DistMult", E, R, dim=8, reciprocal=reciprocal)
    elif name == "RESCAL":
        pk = pkm.RESCAL(triples_factory=tf, embedding_dim=6, random_seed=0)
        ours = build_model("RESCAL", E, R, dim=6, reciprocal=reciprocal)
    elif name == "ComplEx":
        pk = pkm.ComplEx(triples_factory=tf, embedding_dim=4, random_seed=0)  # rank 4 = 8 real columns
        ours = build_model("ComplEx", E, R, dim=8, reciprocal=reciprocal)
    else:
        pk = pkm.TuckER(triples_factory=tf, embedding_dim=6, relation_dim=4, random_seed=0)
        ours = build_model("TuckER", E, R, dim=6, relation_dim=4, reciprocal=reciprocal)
    pk.eval()
    ours.eval()
    pe = pk.entity_representations[0]._embeddings.weight.detach()
    pr = pk.relation_representations[0]._embeddings.weight.detach()
    if name == "ComplEx":
        # PyKEEN stores a complex vector interleaved (re_1, im_1, re_2, …); we store [re ‖ im]
        pe = torch.cat([pe[:, 0::2], pe[:, 1::2]], 1)
        pr = torch.cat([pr[:, 0::2], pr[:, 1::2]], 1)
    with torch.no_grad():
        ours.entity.weight.copy_(pe)
        _interleaved_rows(ours.relation.weight, pr, reciprocal)
        if name == "TuckER":
            it = pk.interaction
            # both keep the core as (d_e, d_r, d_e) indexed (head, relation, tail)
            ours.core.copy_(it.core_tensor)
            for pk_bn, our_bn in ((it.head_batch_norm, ours.bn0), (it.head_relation_batch_norm, ours.bn1)):
                # non-trivial running statistics and affine parameters, identical in both
                pk_bn.running_mean.uniform_(-0.5, 0.5)
                pk_bn.running_var.uniform_(0.5, 2.0)
                pk_bn.weight.uniform_(0.5, 1.5)
                pk_bn.bias.uniform_(-0.5, 0.5)
                our_bn.load_state_dict(pk_bn.state_dict())
    assert not pk.predict_with_sigmoid
    return pk, ours


@pytest.mark.peer
@pytest.mark.parametrize("name, reciprocal", [s for s in SETTINGS if s[0] != "BiQUE"])
def test_scores_equal_pykeen(nations, name, reciprocal):
    """PyKEEN and kgeval give the same scores on the same weights. Differences configured away: TuckER's batch
    norm is compared in eval mode (running statistics; in training mode both use the batch statistics, but
    PyKEEN's head questions normalise over all B × |E| candidate heads where ours answers them as tail questions
    of the inverse relation) and all dropouts are off (eval mode). With reciprocal relations PyKEEN's
    ``predict_h`` answers head questions through the inverse relation, as ours does."""
    tf = nations[reciprocal].training
    pk, ours = pykeen_pair(name, reciprocal, tf)
    s, p, o = batch(17, num_entities=tf.num_entities, num_relations=tf.real_num_relations)
    with torch.no_grad():
        # public PyKEEN prediction API: maps relation ids to its internal (interleaved) ids when inverse triples
        pk_spo = pk.predict_hrt(torch.stack([s, p, o], 1)).squeeze(1)
        pk_sp = pk.predict_t(torch.stack([s, p], 1))
        pk_po = pk.predict_h(torch.stack([p, o], 1))
        ours_spo = ours.score_spo(s, p, o)
        ours_sp = ours.score_sp(s, p)
        ours_po = ours.score_po(p, o)
    assert ours_sp.shape == (17, tf.num_entities) and ours_po.shape == (17, tf.num_entities)
    assert pk_sp.abs().max() > 1e-2  # not a vacuous comparison
    torch.testing.assert_close(ours_spo, pk_spo, atol=1e-5, rtol=0)
    torch.testing.assert_close(ours_sp, pk_sp, atol=1e-5, rtol=0)
    torch.testing.assert_close(ours_po, pk_po, atol=1e-5, rtol=0)
    if reciprocal:  # the head-direction triple score is PyKEEN's score of the inverse triple (t, r⁻¹, h)
        with torch.no_grad():
            pk_inv = pk.score_hrt(torch.stack([o, 2 * p + 1, s], 1)).squeeze(1)
            torch.testing.assert_close(ours.score_spo(s, p, o, direction="s"), pk_inv, atol=1e-5, rtol=0)


# ---- 2. learning on the synthetic KG --------------------------------------------------------------------------------
TRAIN = {
    "DistMult": ({"dim": 32, "reciprocal": True},
                 dict(regime="1vsAll", optimizer="adam", lr=0.01, batch_size=128, max_epochs=10)),
    "RESCAL": ({"dim": 16, "reciprocal": False, "entity_dropout": 0.1, "relation_dropout": 0.1},
               dict(regime="1vsAll", optimizer="adam", lr=0.01, batch_size=128, max_epochs=10)),
    "ComplEx": ({"dim": 32, "reciprocal": True},
                dict(regime="1vsAll", optimizer="adagrad", lr=0.1, batch_size=128, max_epochs=10, regularizer="n3",
                     regularization_weight=5e-3)),
    "TuckER": ({"dim": 16, "relation_dim": 16, "input_dropout": 0.1, "hidden_dropout1": 0.1,
                "hidden_dropout2": 0.1},
               dict(regime="KvsAll", loss="bce", optimizer="adam", lr=0.03, batch_size=32, max_epochs=10,
                    label_smoothing=0.1)),
    "BiQUE": ({"dim": 32, "reciprocal": True},
              dict(regime="1vsAll", optimizer="adagrad", lr=0.1, batch_size=128, max_epochs=10, regularizer="n3",
                   regularization_weight=5e-3)),
}


@pytest.mark.parametrize("name", list(TRAIN))
def test_learns_on_synthetic_kg(synth_kg, name):
    hp, cfg = TRAIN[name]
    res = Trainer(synth_kg, name, hp, TrainConfig(eval_every=5, **cfg), seed=0, device="cpu").fit()
    chance = 6.0 / synth_kg.num_entities  # about H_N / N
    assert res.best_valid_mrr > 4 * chance, (name, res.best_valid_mrr)


# ---- 3. the scoring forms agree -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, reciprocal", SETTINGS)
def test_scoring_forms_agree(name, reciprocal):
    model = small_model(name, reciprocal)
    s, p, o = batch()
    rows = torch.arange(len(s))
    with torch.no_grad():
        spo = model.score_spo(s, p, o)
        spo_head = model.score_spo(s, p, o, direction="s")
        sp, po = model.score_sp(s, p), model.score_po(p, o)
        assert sp.shape == po.shape == (len(s), NE)
        assert spo.abs().max() > 1e-2
        torch.testing.assert_close(sp[rows, o], spo, atol=1e-5, rtol=0)
        torch.testing.assert_close(po[rows, s], spo_head, atol=1e-5, rtol=0)
        if not reciprocal:
            torch.testing.assert_close(spo_head, spo, atol=1e-5, rtol=0)
        # the whole all-entity matrices against triple scores
        all_e = torch.arange(NE)
        every_o = model.score_spo(s.repeat_interleave(NE), p.repeat_interleave(NE), all_e.repeat(len(s)))
        torch.testing.assert_close(sp, every_o.view(len(s), NE), atol=1e-5, rtol=0)
        every_s = model.score_spo(all_e.repeat(len(s)), p.repeat_interleave(NE), o.repeat_interleave(NE),
                                  direction="s")
        torch.testing.assert_close(po, every_s.view(len(s), NE), atol=1e-5, rtol=0)
        # sampled candidates
        cand = torch.randint(0, NE, (len(s), 7), generator=torch.Generator().manual_seed(5))
        some_o = model.score_sp_some(s, p, cand)
        some_s = model.score_po_some(p, o, cand)
        torch.testing.assert_close(some_o, sp.gather(1, cand), atol=1e-5, rtol=0)
        torch.testing.assert_close(some_s, po.gather(1, cand), atol=1e-5, rtol=0)
        ref_s = model.score_spo(cand.reshape(-1), p.repeat_interleave(7), o.repeat_interleave(7), direction="s")
        torch.testing.assert_close(some_s, ref_s.view(len(s), 7), atol=1e-5, rtol=0)


def test_tucker_needs_reciprocal_relations():
    with pytest.raises(ValueError, match="reciprocal"):
        build_model("TuckER", NE, NR, dim=4, reciprocal=False)
    model = build_model("TuckER", NE, NR, dim=4)
    assert model.reciprocal and model.relation.weight.shape == (2 * NR, 4) and model.core.shape == (4, 4, 4)


def test_dropout_is_active_in_training_and_deterministic():
    s, p, o = batch()
    for name, hp in [("RESCAL", {}), ("ComplEx", {"entity_dropout": 0.5, "init_std": 0.5}), ("TuckER", {})]:
        torch.manual_seed(0)
        model = build_model(name, NE, NR, **{**SMALL[name], **hp})
        model.train()
        torch.manual_seed(3)
        a = model.score_sp(s, p)
        torch.manual_seed(3)
        b = model.score_sp(s, p)
        c = model.score_sp(s, p)
        assert torch.equal(a, b), name
        assert not torch.equal(a, c), name
        model.eval()
        assert torch.equal(model.score_sp(s, p), model.score_sp(s, p))


def test_tucker_chunked_encoding_equals_whole():
    """Questions are encoded in chunks within the memory budget; the result does not depend on the chunking."""
    model = small_model("TuckER", True)
    s, p, o = batch()
    whole = model.score_sp(s, p)
    model.chunk_budget_mb = 2 * 6 * 6 * 4 * 3 / 2**20  # three questions per chunk
    torch.testing.assert_close(model.score_sp(s, p), whole, atol=1e-6, rtol=0)


def test_tucker_single_question_batch_trains():
    model = small_model("TuckER", True).train()
    model.score_sp(torch.tensor([1]), torch.tensor([2])).sum().backward()
    assert model.core.grad is not None


# ---- 4. rebuilding from hparams ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, reciprocal", SETTINGS)
def test_rebuild_from_hparams(name, reciprocal):
    model = small_model(name, reciprocal, seed=0)
    # every constructor argument is recorded
    params = set(inspect.signature(model_class(name).__init__).parameters) - {"self", "num_entities",
                                                                             "num_relations", "kw"}
    assert params <= set(model.hparams), params - set(model.hparams)
    clone = build_model(name, NE, NR, **model.hparams)
    torch.manual_seed(123)
    other = build_model(name, NE, NR, **model.hparams).eval()
    assert any(not torch.equal(a, b) for a, b in zip(other.state_dict().values(), model.state_dict().values()))
    clone.load_state_dict(model.state_dict())
    clone.eval()
    s, p, o = batch()
    with torch.no_grad():
        assert torch.equal(clone.score_sp(s, p), model.score_sp(s, p))
        assert torch.equal(clone.score_po(p, o), model.score_po(p, o))
        assert torch.equal(clone.score_spo(s, p, o), model.score_spo(s, p, o))


def test_published_defaults():
    m = build_model("RESCAL", NE, NR)
    assert (m.dim, m.reciprocal, m.hparams["entity_dropout"], m.hparams["relation_dropout"]) == (128, False, .43, .16)
    assert m.relation.weight.shape == (NR, 128 * 128)
    m = build_model("ComplEx", NE, NR)
    assert (m.dim, m.rank, m.reciprocal) == (2000, 1000, True)
    assert abs(m.entity.weight.std().item() - 1e-3) < 1e-4
    m = build_model("TuckER", NE, NR)
    assert (m.dim, m.relation_dim, m.reciprocal) == (200, 200, True)
    assert (m.input_drop.p, m.hidden_drop1.p, m.hidden_drop2.p) == (.3, .4, .5)
    assert m.core.shape == (200, 200, 200) and -1 <= m.core.min() < -0.99 and 0.99 < m.core.max() <= 1
    m = build_model("BiQUE", NE, NR)
    assert (m.dim, m.rank, m.reciprocal) == (1024, 128, True)
    assert m.entity.weight.shape == (NE, 8 * 128) and m.relation.weight.shape == (2 * NR, 16 * 128)


# ---- regularisation factors ---------------------------------------------------------------------------------------------
def test_complex_factors_are_moduli():
    model = small_model("ComplEx", True)
    s, p, o = batch()
    k = model.rank
    as_complex = [torch.complex(x[:, :k], x[:, k:]) for x in (model.entity(s), model.relation(p), model.entity(o))]
    for f, z in zip(model.factors(s, p, o), as_complex):
        torch.testing.assert_close(f, z.abs())


def test_bique_factors_give_weighted_n3():
    """The official weighted N3: λ (2 Σ|e_h + r_add|³ + ½ Σ|r_mul|³ + 2 Σ|e_t|³) / B, moduli over the 8 reals."""
    model = small_model("BiQUE", True)
    s, p, o = batch()
    d, k = model.dim, model.rank
    rel = model.relation(p)
    mul, add = rel[:, :d], rel[:, d:]

    def norm8(x):  # the official get_norm(x, 8): split into 8 chunks of k columns
        return torch.sqrt(sum(c**2 for c in torch.split(x, k, dim=-1)))

    h, r, t = norm8(model.entity(s) + add), norm8(mul), norm8(model.entity(o))
    expected = 0.07 * (2 * (h**3).sum() + 0.5 * (r**3).sum() + 2 * (t**3).sum()) / len(s)
    got = regularization(model.factors(s, p, o), "n3", 0.07)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(biquaternion_modulus(mul), r)


# ---- 5. biquaternion algebra ---------------------------------------------------------------------------------------------
def bq(w=0j, x=0j, y=0j, z=0j) -> torch.Tensor:
    """A rank-1 biquaternion w + x i + y j + z k with complex coefficients, in our [w ‖ x ‖ y ‖ z], [re ‖ im]
    layout."""
    return torch.tensor([[c.real, c.imag] for c in map(complex, (w, x, y, z))], dtype=torch.float64).reshape(1, 8)


def test_hamilton_product_units():
    one, i, j, k, I = bq(w=1), bq(x=1), bq(y=1), bq(z=1), bq(w=1j)  # noqa: E741
    assert torch.equal(hamilton_product(i, j), k)
    assert torch.equal(hamilton_product(j, i), -k)
    assert torch.equal(hamilton_product(j, k), i)
    assert torch.equal(hamilton_product(k, j), -i)
    assert torch.equal(hamilton_product(k, i), j)
    assert torch.equal(hamilton_product(i, k), -j)
    for u in (i, j, k):
        assert torch.equal(hamilton_product(u, u), -one)
        assert torch.equal(hamilton_product(one, u), u) and torch.equal(hamilton_product(u, one), u)
    # the complex unit I squares to −1 and commutes with i, j, k
    assert torch.equal(hamilton_product(I, I), -one)
    assert torch.equal(hamilton_product(I, i), bq(x=1j)) and torch.equal(hamilton_product(i, I), bq(x=1j))
    assert torch.equal(hamilton_product(bq(x=1j), bq(y=1j)), -k)  # (I i)(I j) = I² k = −k
    # a worked case: (1 + 2i)(3j) = 3j + 6k; (2 + I) i · (1 − I) j = (2 + I)(1 − I) k = (3 − I) k
    assert torch.equal(hamilton_product(bq(w=1, x=2), bq(y=3)), bq(y=3, z=6))
    assert torch.equal(hamilton_product(bq(x=2 + 1j), bq(y=1 - 1j)), bq(z=3 - 1j))
    torch.testing.assert_close(complex_mul(torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0])),
                               torch.tensor([5.0, 5.0]))  # (1 + 2I)(3 − I) = 5 + 5I


def test_hamilton_product_algebra():
    g = torch.Generator().manual_seed(0)
    a, b, c = (torch.randn(5, 24, generator=g, dtype=torch.float64) for _ in range(3))  # rank 3
    # associative, not commutative
    torch.testing.assert_close(hamilton_product(hamilton_product(a, b), c), hamilton_product(a, hamilton_product(b, c)))
    assert not torch.allclose(hamilton_product(a, b), hamilton_product(b, a))

    # the complex quadratic form N(q) = w² + x² + y² + z² is multiplicative
    def form(q):
        parts = [torch.complex(u[:, :3], u[:, 3:]) for u in q.chunk(4, dim=-1)]
        return sum(u * u for u in parts)

    torch.testing.assert_close(form(hamilton_product(a, b)), form(a) * form(b))
    # the adjoint of right multiplication: ⟨a ⊗ q, t⟩ = ⟨a, t ⊗ q̃⟩
    torch.testing.assert_close((hamilton_product(a, b) * c).sum(-1), (a * hamilton_product(c, adjoint_factor(b))).sum(-1))


def test_bique_score_against_complex_arithmetic():
    """f = ⟨(e_h + r_add) ⊗ r_mul, e_t⟩ recomputed with torch complex numbers from the stored layout."""
    model = small_model("BiQUE", True)
    s, p, o = batch()
    d, k = model.dim, model.rank

    def comps(x):  # (B, 8k) → 4 complex (B, k) components
        return [torch.complex(u[:, :k], u[:, k:]) for u in x.chunk(4, dim=-1)]

    rel = model.relation(p)
    aw, ax, ay, az = comps(model.entity(s) + rel[:, d:])
    bw, bx, by, bz = comps(rel[:, :d])
    prod = [aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw]
    expected = sum((u * v.conj()).real.sum(-1) for u, v in zip(prod, comps(model.entity(o))))
    torch.testing.assert_close(model.score_spo(s, p, o), expected)


# ---- CUDA -------------------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("name, reciprocal", SETTINGS)
def test_cuda_matches_cpu(name, reciprocal):
    model = small_model(name, reciprocal)
    s, p, o = batch()
    with torch.no_grad():
        cpu = (model.score_sp(s, p), model.score_po(p, o), model.score_spo(s, p, o))
        model.cuda()
        gpu = (model.score_sp(s.cuda(), p.cuda()), model.score_po(p.cuda(), o.cuda()),
               model.score_spo(s.cuda(), p.cuda(), o.cuda()))
    for a, b in zip(cpu, gpu):
        assert b.is_cuda
        torch.testing.assert_close(b.cpu(), a, atol=1e-4, rtol=1e-4)
