"""TransE, RotatE, HAKE and AttE: agreement with PyKEEN, learning, consistency of the scoring paths, rebuild
from hparams, hand-computed scores and published defaults."""

from __future__ import annotations

import math

import pytest
import torch

from kgeval.models import build_model
from kgeval.models.atte import AttE
from kgeval.models.hake import HAKE
from kgeval.models.translational import RotatE, TransE
from kgeval.training.config import TrainConfig
from kgeval.training.trainer import Trainer

ATOL = 1e-5


# tiny models: on a shared two-core machine intra-op threads only contend, and one thread fixes the
# summation order
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def randomize(model: torch.nn.Module, seed: int = 0, scale: float = 1.0) -> None:
    """Move every parameter away from its initialisation (HAKE's biases then hit both clamps)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=gen))
        if isinstance(model, HAKE):  # keep the trainable weights positive, as in training
            model.modulus_weight.fill_(1.3)
            model.phase_weight.fill_(0.7)


def spy_chunks(model) -> list[slice]:
    """Record the entity slices that ``model.chunked`` evaluates."""
    calls: list[slice] = []
    orig = model.chunked

    def chunked(fn, batch, width):
        def wrapped(sl):
            calls.append(sl)
            return fn(sl)
        return orig(wrapped, batch, width)

    model.chunked = chunked
    return calls


def spy_blocks(model) -> list[tuple[slice, slice]]:
    """Record the (rows, entities) blocks that ``model.blocked`` evaluates."""
    calls: list[tuple[slice, slice]] = []
    orig = model.blocked

    def blocked(kernel, batch, width, like):
        def wrapped(rs, es):
            calls.append((rs, es))
            return kernel(rs, es)
        return orig(wrapped, batch, width, like)

    model.blocked = blocked
    return calls


# ---- 1. agreement with PyKEEN 1.11 ------------------------------------------------------------------------------


def kgeval_scores(model, hrt):
    s, p, o = hrt.T
    return model.score_spo(s, p, o), model.score_sp(s, p), model.score_po(p, o)


def pykeen_scores(model, hrt):
    return model.score_hrt(hrt)[:, 0], model.score_t(hrt[:, :2]), model.score_h(hrt[:, 1:])


@pytest.mark.parametrize("norm", [1, 2])
def test_transe_equals_pykeen(nations_batch, norm):
    from pykeen.models import TransE as PkTransE

    tf, hrt = nations_batch
    ours = TransE(tf.num_entities, tf.num_relations, dim=12, norm=norm, gamma=9.0, chunk_budget_mb=0.001).eval()
    randomize(ours)
    pk = PkTransE(triples_factory=tf, embedding_dim=12, scoring_fct_norm=norm, random_seed=0).eval()
    with torch.no_grad():
        pk.entity_representations[0]._embeddings.weight.copy_(ours.entity.weight)
        pk.relation_representations[0]._embeddings.weight.copy_(ours.relation.weight)
        # PyKEEN's TransE has no γ: ours = γ − ‖h + r − t‖ = γ + PyKEEN's score
        for a, b in zip(kgeval_scores(ours, hrt), pykeen_scores(pk, hrt)):
            torch.testing.assert_close(a - 9.0, b, atol=ATOL, rtol=0)


def to_pykeen_complex(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    """PyKEEN stores a complex embedding as interleaved (Re₀, Im₀, Re₁, Im₁, …); kgeval as [Re ‖ Im]."""
    return torch.stack([re, im], -1).flatten(-2)


def test_rotate_equals_pykeen(nations_batch):
    """PyKEEN's RotatE scores −‖h ∘ r − t‖₂ (complex 2-norm, no γ): equal to ours with ``norm=2`` up to γ. With
    the paper's ``norm=1`` our score is γ minus the sum of PyKEEN's interaction over single complex dimensions."""
    from pykeen.models import RotatE as PkRotatE
    from pykeen.nn.modules import RotatEInteraction

    tf, hrt = nations_batch
    k, E = 6, tf.num_entities
    ours = RotatE(E, tf.num_relations, dim=k, norm=2, gamma=9.0, chunk_budget_mb=0.001).eval()
    randomize(ours)
    pk = PkRotatE(triples_factory=tf, embedding_dim=k, random_seed=0).eval()
    theta = ours.relation.weight * ours.phase_scale
    with torch.no_grad():
        ent = ours.entity.weight
        pk.entity_representations[0]._embeddings.weight.copy_(to_pykeen_complex(ent[:, :k], ent[:, k:]))
        pk.relation_representations[0]._embeddings.weight.copy_(to_pykeen_complex(torch.cos(theta),
                                                                                  torch.sin(theta)))
        for a, b in zip(kgeval_scores(ours, hrt), pykeen_scores(pk, hrt)):
            torch.testing.assert_close(a - 9.0, b, atol=ATOL, rtol=0)

        # the paper's sum of moduli (norm=1) through PyKEEN's interaction, one complex dimension at a time
        l1 = RotatE(E, tf.num_relations, dim=k, norm=1, gamma=9.0, chunk_budget_mb=0.001).eval()
        l1.load_state_dict(ours.state_dict())
        h_c = pk.entity_representations[0](indices=hrt[:, 0])
        r_c = pk.relation_representations[0](indices=hrt[:, 1])
        t_c = pk.entity_representations[0](indices=hrt[:, 2])
        all_c = pk.entity_representations[0](indices=None)
        interaction = RotatEInteraction()
        spo = sum(interaction(h_c[:, i:i + 1], r_c[:, i:i + 1], t_c[:, i:i + 1]) for i in range(k))
        sp = sum(interaction(h_c[:, None, i:i + 1], r_c[:, None, i:i + 1], all_c[None, :, i:i + 1])
                 for i in range(k))
        po = sum(interaction(all_c[None, :, i:i + 1], r_c[:, None, i:i + 1], t_c[:, None, i:i + 1])
                 for i in range(k))
        for a, b in zip(kgeval_scores(l1, hrt), (spo, sp, po)):
            torch.testing.assert_close(a - 9.0, b, atol=ATOL, rtol=0)


# ---- 2. learning on the synthetic KG ----------------------------------------------------------------------------
NS = dict(regime="negative_sampling", loss="self_adversarial", num_negatives=32, lr=0.03, batch_size=128,
          max_epochs=8, eval_every=8)
TRAIN = {
    "TransE": ({"dim": 16, "gamma": 3.0, "norm": 1}, NS),
    "RotatE": ({"dim": 16, "gamma": 3.0}, NS),
    "HAKE": ({"dim": 16, "gamma": 3.0}, NS),
    "AttE": ({"dim": 16, "reciprocal": True},
             dict(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=8, eval_every=8)),
}


@pytest.mark.parametrize("name", list(TRAIN))
def test_learns_on_synthetic_kg(synth_kg, name):
    hparams, cfg = TRAIN[name]
    res = Trainer(synth_kg, name, hparams, TrainConfig(**cfg), seed=0, device="cpu").fit()
    chance = 6.0 / synth_kg.num_entities
    assert res.best_valid_mrr > 4 * chance, (name, res.best_valid_mrr)
    assert res.trace[-1]["loss"] < res.trace[0]["loss"]


# ---- 3. the scoring paths agree ---------------------------------------------------------------------------------
E, R = 40, 5
CASES = [
    ("TransE", {"dim": 8, "norm": 1}),
    ("TransE", {"dim": 8, "norm": 2}),
    ("TransE", {"dim": 8, "norm": 2, "reciprocal": True}),
    ("RotatE", {"dim": 8}),
    ("RotatE", {"dim": 8, "norm": 2}),
    ("RotatE", {"dim": 8, "reciprocal": True, "phase_scale": 1.0}),
    ("HAKE", {"dim": 8}),
    ("HAKE", {"dim": 8, "reciprocal": True}),
    ("AttE", {"dim": 8}),
    ("AttE", {"dim": 8, "reciprocal": False}),
]
CHUNKED = {("RotatE", 1), ("HAKE", None), ("AttE", False)}


@pytest.mark.parametrize("name, hp", CASES, ids=[f"{n}-{'-'.join(f'{k}{v}' for k, v in h.items())}"
                                                  for n, h in CASES])
def test_all_entity_and_some_scores_match_spo(name, hp):
    torch.manual_seed(0)
    model = build_model(name, E, R, chunk_budget_mb=0.005, **hp).eval()
    randomize(model, scale=0.7)
    calls = spy_chunks(model)
    blocks = spy_blocks(model)
    gen = torch.Generator().manual_seed(1)
    B, n = 6, 7
    s, o = torch.randint(0, E, (B,), generator=gen), torch.randint(0, E, (B,), generator=gen)
    p = torch.randint(0, R, (B,), generator=gen)
    cand = torch.randint(0, E, (B, n), generator=gen)
    every = torch.arange(E).repeat(B)
    with torch.no_grad():
        sp, po = model.score_sp(s, p), model.score_po(p, o)
        assert sp.shape == po.shape == (B, E)
        ref_sp = model.score_spo(s.repeat_interleave(E), p.repeat_interleave(E), every).view(B, E)
        ref_po = model.score_spo(every, p.repeat_interleave(E), o.repeat_interleave(E), direction="s").view(B, E)
        torch.testing.assert_close(sp, ref_sp, atol=ATOL, rtol=1e-6)
        torch.testing.assert_close(po, ref_po, atol=ATOL, rtol=1e-6)
        some_o = model.score_sp_some(s, p, cand)
        some_s = model.score_po_some(p, o, cand)
        ref_o = model.score_spo(s.repeat_interleave(n), p.repeat_interleave(n), cand.reshape(-1)).view(B, n)
        ref_s = model.score_spo(cand.reshape(-1), p.repeat_interleave(n), o.repeat_interleave(n),
                                direction="s").view(B, n)
        torch.testing.assert_close(some_o, ref_o, atol=ATOL, rtol=1e-6)
        torch.testing.assert_close(some_s, ref_s, atol=ATOL, rtol=1e-6)
    key = (name, hp.get("norm", 1) if name == "RotatE" else hp.get("reciprocal", True) if name == "AttE" else None)
    if key in CHUNKED:  # several entity chunks covering every entity once per all-entity call
        per_call = 2 if name != "AttE" else 1
        if name == "AttE":
            covered = sorted(i for sl in calls for i in range(sl.start, sl.stop))
            assert covered == sorted(list(range(E)) * per_call) and len(calls) >= 2 * per_call
        else:  # CPU inference runs in (row × entity) blocks instead, each cell once per call
            cells = sorted((b, i) for rs, es in blocks for b in range(rs.start, rs.stop) for i in range(es.start, es.stop))
            assert cells == sorted([(b, i) for b in range(B) for i in range(E)] * per_call) and not calls


@pytest.mark.parametrize("name, hp", [("RotatE", {"norm": 1}), ("HAKE", {})])
def test_inference_blocks_equal_autograd_chunks(name, hp, monkeypatch):
    """The in-place block path (CPU inference) gives the scores of the autograd chunk path; 70 rows make two
    row blocks and a small block budget many entity blocks."""
    import kgeval.models.base as base

    monkeypatch.setattr(base, "BLOCK_ELEMENTS", 64 * 8 * 5)
    torch.manual_seed(2)
    model = build_model(name, E, R, dim=8, chunk_budget_mb=0.01, **hp).eval()
    randomize(model, scale=0.7)
    blocks = spy_blocks(model)
    s, p = torch.randint(0, E, (70,)), torch.randint(0, R, (70,))
    with torch.no_grad():
        fast_sp, fast_po = model.score_sp(s, p), model.score_po(p, s)
    assert len({rs.start for rs, _ in blocks}) == 2 and len({es.start for _, es in blocks}) == 8
    n_blocks = len(blocks)
    slow_sp, slow_po = model.score_sp(s, p), model.score_po(p, s)  # autograd on: the chunk path
    assert slow_sp.requires_grad and len(blocks) == n_blocks
    torch.testing.assert_close(fast_sp, slow_sp.detach(), atol=1e-5, rtol=1e-6)
    torch.testing.assert_close(fast_po, slow_po.detach(), atol=1e-5, rtol=1e-6)


def test_gradients_flow_through_chunks():
    model = HAKE(E, R, dim=8, chunk_budget_mb=0.002)
    calls = spy_chunks(model)
    loss = model.score_sp(torch.tensor([0, 1]), torch.tensor([2, 3])).logsumexp(1).sum()
    loss.backward()
    assert len(calls) > 1
    assert model.entity.weight.grad is not None and torch.isfinite(model.entity.weight.grad).all()
    assert model.entity.weight.grad[:, :8].abs().sum() > 0  # phases of candidate entities get gradients
    assert model.phase_weight.grad is not None and model.modulus_weight.grad is not None


# ---- 4. rebuild from hparams ------------------------------------------------------------------------------------
ROUNDTRIP = [
    ("TransE", {"dim": 6, "norm": 2, "gamma": 4.0, "entity_dropout": 0.1, "init": "normal", "init_std": 0.3}),
    ("RotatE", {"dim": 6, "gamma": 4.0, "norm": 2, "init_range": 0.5, "phase_scale": 1.0, "reciprocal": True}),
    ("HAKE", {"dim": 6, "gamma": 5.0, "modulus_weight": 2.0, "phase_weight": 0.5, "init_range": 0.4}),
    ("AttE", {"dim": 6, "reciprocal": False, "init_size": 0.01}),
]


@pytest.mark.parametrize("name, hp", ROUNDTRIP, ids=[n for n, _ in ROUNDTRIP])
def test_rebuild_from_hparams(name, hp):
    torch.manual_seed(3)
    model = build_model(name, E, R, **hp).eval()
    again = build_model(name, E, R, **model.hparams)
    again.load_state_dict(model.state_dict())
    again.eval()
    assert type(again) is type(model) and again.hparams == model.hparams
    s, p, o = torch.tensor([0, 5, 9]), torch.tensor([0, 1, 4]), torch.tensor([3, 3, 39])
    with torch.no_grad():
        for a, b in [(model.score_spo(s, p, o), again.score_spo(s, p, o)),
                     (model.score_sp(s, p), again.score_sp(s, p)),
                     (model.score_po(p, o), again.score_po(p, o))]:
            assert torch.equal(a, b)
    # the same seed builds the same weights (CPU determinism)
    torch.manual_seed(3)
    twin = build_model(name, E, R, **hp)
    assert all(torch.equal(v, twin.state_dict()[k]) for k, v in model.state_dict().items())


# ---- 5. hand-computed scores ------------------------------------------------------------------------------------
def test_rotate_hand_computed():
    # h = (1, i), θ = (π/2, π): h ∘ r = (i, −i); t = (i, 1): |i − i| = 0, |−i − 1| = √2
    m = RotatE(2, 1, dim=2, gamma=9.0)
    with torch.no_grad():
        m.entity.weight.copy_(torch.tensor([[1.0, 0.0, 0.0, 1.0],  # Re (1, 0), Im (0, 1)
                                            [0.0, 1.0, 1.0, 0.0]]))  # Re (0, 1), Im (1, 0)
        m.relation.weight.copy_(torch.tensor([[math.pi / 2, math.pi]]) / m.phase_scale)
    expected = 9.0 - math.sqrt(2.0)
    s, p, o = torch.tensor([0]), torch.tensor([0]), torch.tensor([1])
    with torch.no_grad():
        assert m.score_spo(s, p, o).item() == pytest.approx(expected, abs=1e-6)
        assert m.score_sp(s, p)[0, 1].item() == pytest.approx(expected, abs=1e-6)
        assert m.score_po(p, o)[0, 0].item() == pytest.approx(expected, abs=1e-6)
        # the initial phases are uniform in [−π, π] through the original's scaling
        assert m.phase_scale == pytest.approx(math.pi / ((9.0 + 2.0) / 2))


def test_hake_hand_computed():
    d = 2
    m = HAKE(2, 1, dim=d, gamma=9.0)  # λ_m = 3.5, λ_p = 1.0 × range, range = (9 + 2)/2 = 5.5
    rng = (9.0 + 2.0) / d
    to_raw = rng / math.pi  # phases are stored scaled by range / π
    with torch.no_grad():
        m.entity.weight.copy_(torch.tensor([
            [math.pi / 2 * to_raw, 0.0, 1.0, 2.0],  # head: phase (π/2, 0), modulus (1, 2)
            [0.0, -math.pi / 3 * to_raw, 3.0, 0.5],  # tail: phase (0, −π/3), modulus (3, 0.5)
        ]))
        # relation: phase (π/2, π/3), modulus (2, −1) → |m_r| = (2, 1), bias (−5, 3) → clamped to (−2, 1)
        m.relation.weight.copy_(torch.tensor([[math.pi / 2 * to_raw, math.pi / 3 * to_raw, 2.0, -1.0, -5.0, 3.0]]))
    # modulus: m_h ∘ (|m_r| + b) − m_t ∘ (1 − b) = (1·0, 2·2) − (3·3, 0.5·0) = (−9, 4) → √97
    # phase: p_h + p_r − p_t = (π, 2π/3) → |sin(π/2)| + |sin(π/3)| = 1 + √3/2
    expected = 9.0 - (3.5 * math.sqrt(97.0) + 1.0 * rng * (1.0 + math.sqrt(3.0) / 2))
    s, p, o = torch.tensor([0]), torch.tensor([0]), torch.tensor([1])
    with torch.no_grad():
        assert m.modulus_weight.item() == pytest.approx(3.5)
        assert m.phase_weight.item() == pytest.approx(rng)
        assert m.score_spo(s, p, o).item() == pytest.approx(expected, abs=1e-5)
        assert m.score_sp(s, p)[0, 1].item() == pytest.approx(expected, abs=1e-5)
        assert m.score_po(p, o)[0, 0].item() == pytest.approx(expected, abs=1e-5)


def test_atte_hand_computed():
    m = AttE(2, 1, dim=2, reciprocal=False)
    with torch.no_grad():
        m.entity.weight.copy_(torch.tensor([[1.0, 0.0], [1.0, 2.0]]))
        m.rotation.weight.copy_(torch.tensor([[0.0, 3.0]]))  # (c, s) = (0, 1): Rot(1, 0) = (0, 1)
        m.reflection.weight.copy_(torch.tensor([[2.0, 0.0]]))  # (c, s) = (1, 0): Ref(1, 0) = (1, 0)
        m.context.weight.zero_()  # equal attention: q = ½(0, 1) + ½(1, 0) + (1, 1) = (1.5, 1.5)
        m.translation.weight.copy_(torch.tensor([[1.0, 1.0]]))
        m.head_bias.weight.copy_(torch.tensor([[0.25], [0.0]]))
        m.tail_bias.weight.copy_(torch.tensor([[0.0], [-1.0]]))
        # −‖(1.5, 1.5) − (1, 2)‖² + 0.25 − 1 = −0.5 − 0.75
        s, p, o = torch.tensor([0]), torch.tensor([0]), torch.tensor([1])
        assert m.score_spo(s, p, o).item() == pytest.approx(-1.25, abs=1e-6)
        assert m.score_sp(s, p)[0, 1].item() == pytest.approx(-1.25, abs=1e-6)
        assert m.score_po(p, o)[0, 0].item() == pytest.approx(-1.25, abs=1e-6)


# ---- published defaults -----------------------------------------------------------------------------------------
def test_defaults_are_the_published_settings():
    transe, rotate, hake, atte = TransE(3, 2), RotatE(3, 2), HAKE(3, 2), AttE(3, 2)
    assert (transe.dim, transe.norm, transe.gamma) == (1000, 1, 9.0)
    assert rotate.entity.weight.shape == (3, 2000) and rotate.relation.weight.shape == (2, 1000)
    assert rotate.gamma == 9.0 and rotate.entity.weight.abs().max() <= 11.0 / 1000
    assert rotate.relation.weight.mul(rotate.phase_scale).abs().max() <= math.pi
    assert hake.entity.weight.shape == (3, 2000) and hake.relation.weight.shape == (2, 3000)
    assert hake.modulus_weight.item() == pytest.approx(3.5)
    assert hake.phase_weight.item() == pytest.approx(1.0 * 11.0 / 1000)
    assert torch.all(hake.relation.weight[:, 1000:2000] == 1) and torch.all(hake.relation.weight[:, 2000:] == 0)
    assert atte.dim == 500 and atte.reciprocal and atte.rotation.weight.shape == (4, 500)
    assert atte.head_bias.weight.shape == atte.tail_bias.weight.shape == (3, 1)
    with pytest.raises(TypeError):
        RotatE(3, 2, not_a_parameter=1)


def test_modulus_sum_gradient_matches_autograd():
    """The fused RotatE distance has autograd's gradient (float64 gradcheck, broadcast query, and a zero
    modulus whose gradient is 0 as with the clamped square root)."""
    from kgeval.models.distances import modulus_sum

    torch.manual_seed(4)
    q = torch.randn(3, 1, 10, dtype=torch.float64, requires_grad=True)
    c = torch.randn(3, 5, 10, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(modulus_sum, (q, c))
    assert torch.autograd.gradcheck(modulus_sum, (c.detach()[:, :2].clone().requires_grad_(), c[:, 2:4]))
    d = q - c
    ref = (d[..., :5] ** 2 + d[..., 5:] ** 2).sqrt().sum(-1)
    torch.testing.assert_close(modulus_sum(q, c), ref)
    z = torch.zeros(1, 4, requires_grad=True)
    modulus_sum(z, torch.zeros(1, 4)).sum().backward()
    assert torch.equal(z.grad, torch.zeros(1, 4))


def test_hake_distances_gradient_matches_autograd():
    """HAKE's fused distance terms: values and float64 gradcheck against the plain formula, for candidate rows
    (B, n, 2d) against broadcast queries and for one row per query."""
    from kgeval.models.distances import hake_distances

    torch.manual_seed(5)
    for shape_q, shape_c in [((2, 1, 4), (2, 3, 8)), ((3, 4), (3, 8))]:
        x_ph, x_m, y_m = (torch.randn(*shape_q, dtype=torch.float64, requires_grad=True) for _ in range(3))
        cand = torch.randn(*shape_c, dtype=torch.float64, requires_grad=True)
        for sign in (-1.0, 1.0):
            assert torch.autograd.gradcheck(lambda *a, sign=sign: hake_distances(*a, sign, 0.7),
                                            (x_ph, x_m, y_m, cand))
            phase, mod = hake_distances(x_ph, x_m, y_m, cand, sign, 0.7)
            torch.testing.assert_close(phase, torch.sin((x_ph + sign * 0.7 * cand[..., :4]) / 2).abs().sum(-1))
            torch.testing.assert_close(mod, (x_m - y_m * cand[..., 4:]).norm(dim=-1))


@pytest.mark.parametrize("name, hp", [("TransE", {"dim": 6, "norm": 1}), ("TransE", {"dim": 6, "norm": 2}),
                                      ("RotatE", {"dim": 3}), ("HAKE", {"dim": 3})])
def test_compiled_training_distances_equal_eager(name, hp, monkeypatch):
    """train.compile: the negative-sampling scores and their gradients through torch.compile equal the eager
    fused functions' (to float32 rounding: the generated loops add in another order), and evaluation with
    autograd off keeps the eager code exactly."""
    from kgeval.models import compiled as compiled_module

    monkeypatch.setattr(compiled_module, "MIN_ENTITY_VALUES", 0)  # these toy models are far below the threshold

    torch.manual_seed(11)
    model = build_model(name, 9, 4, **hp)
    s, p = torch.tensor([0, 3, 5, 8]), torch.tensor([0, 1, 2, 3])
    cand = torch.randint(0, 9, (4, 6))

    def run(flag):
        model.compile_distances = flag
        model.zero_grad(set_to_none=True)
        out = torch.cat([model.score_sp_some(s, p, cand), model.score_po_some(p, s, cand)], 1)
        (out * torch.linspace(-1, 1, out.shape[1])).sum().backward()
        return out.detach(), [prm.grad.clone() for prm in model.parameters()]

    eager, g_eager = run(False)
    comp, g_comp = run(True)
    assert compiled_module._compiled, "nothing was compiled"
    assert all(fn is not None for fn in compiled_module._compiled.values()), "torch.compile failed here"
    torch.testing.assert_close(comp, eager, rtol=1e-5, atol=1e-5)
    for a, b in zip(g_comp, g_eager):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    with torch.no_grad():
        model.compile_distances = True
        on = model.score_sp_some(s, p, cand)
        model.compile_distances = False
        assert torch.equal(on, model.score_sp_some(s, p, cand))


def test_compile_failure_falls_back_to_eager(monkeypatch, caplog):
    """A platform where torch.compile fails (no C++ compiler) trains with the eager code after one warning."""
    from kgeval.models import compiled as compiled_module

    def broken(*args, **kwargs):
        raise RuntimeError("no C++ compiler found")

    monkeypatch.setattr(compiled_module, "MIN_ENTITY_VALUES", 0)

    monkeypatch.setattr(compiled_module, "_compiled", {})
    monkeypatch.setattr(torch, "compile", broken)
    torch.manual_seed(2)
    model = build_model("RotatE", 9, 4, dim=3)
    s, p, cand = torch.tensor([0, 1]), torch.tensor([0, 1]), torch.randint(0, 9, (2, 5))
    model.compile_distances = True
    with caplog.at_level("WARNING"):
        a = model.score_sp_some(s, p, cand)
        b = model.score_sp_some(s, p, cand)
    model.compile_distances = False
    assert torch.equal(a, model.score_sp_some(s, p, cand)) and torch.equal(a, b)
    warnings = [r for r in caplog.records if "torch.compile failed" in r.getMessage()]
    assert len(warnings) == 1 and "no C++ compiler found" in warnings[0].getMessage()


@pytest.mark.parametrize("name, hp", [("TransE", {"dim": 6, "norm": 1}), ("RotatE", {"dim": 3}),
                                      ("HAKE", {"dim": 3})])
def test_compiled_all_entity_scores_equal_eager(name, hp, monkeypatch):
    """evaluation.compile: the all-entity scores of an evaluation (no autograd) through torch.compile equal the
    eager blocked code's to float32 rounding, on both sides, and a model without the flag keeps the eager code."""
    from kgeval.models import compiled as compiled_module

    monkeypatch.setattr(compiled_module, "MIN_ENTITY_VALUES", 0)

    torch.manual_seed(12)
    model = build_model(name, 11, 4, **hp).eval()
    s, p = torch.tensor([0, 3, 5, 8, 10]), torch.tensor([0, 1, 2, 3, 1])
    with torch.no_grad():
        model.compile_distances = False
        eager = torch.cat([model.score_sp(s, p), model.score_po(p, s)], 1)
        model.compile_distances = True
        comp = torch.cat([model.score_sp(s, p), model.score_po(p, s)], 1)
    assert any(k.startswith(name) and "all-entity" in k and fn is not None
               for k, fn in compiled_module._compiled.items()), "the all-entity path was not compiled"
    torch.testing.assert_close(comp, eager, rtol=1e-5, atol=1e-5)
    assert comp.shape == (5, 22)


def test_small_models_keep_the_eager_code(monkeypatch):
    """Below MIN_ENTITY_VALUES (the synthetic CI graphs) nothing is compiled even with the flag set: compiling
    would cost each job more than the job itself."""
    from kgeval.models import compiled as compiled_module

    monkeypatch.setattr(compiled_module, "_compiled", {})
    model = build_model("RotatE", 9, 4, dim=3)
    model.compile_distances = True
    s, p, cand = torch.tensor([0, 1]), torch.tensor([0, 1]), torch.randint(0, 9, (2, 5))
    model.score_sp_some(s, p, cand).sum().backward()
    with torch.no_grad():
        model.eval().score_sp(s, p)
    assert compiled_module._compiled == {}
    assert compiled_module.worth_compiling(True, 14541 * 200) and not compiled_module.worth_compiling(False, 10**9)
