"""HittER: learning on the synthetic KG, target-edge masking, deterministic eval scoring, rebuild from hparams,
and that the context transformer is actually used."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.data.kg import HEAD
from kgeval.models import build_model
from kgeval.models.hitter import HittER
from kgeval.training.config import TrainConfig
from kgeval.training.trainer import Trainer, evaluate_mrr

SMALL = dict(dim=64, entity_layers=1, context_layers=1, num_heads=4, ffn_dim=128, max_context=8,
             hidden_dropout=0.0, attention_dropout=0.0, embedding_dropout=0.1, context_dropout=0.1)


# tiny models: on a shared two-core machine intra-op threads only contend, and one thread fixes the
# summation order
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def trained(synth_kg):
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cfg = TrainConfig(regime="1vsAll", optimizer="adamax", lr=0.01, batch_size=128, max_epochs=8, eval_every=4,
                          lr_schedule="warmup_linear", warmup_steps=10)
        res = Trainer(synth_kg, "HittER", SMALL, cfg, seed=0, device="cpu").fit()
    finally:
        torch.set_num_threads(before)
    res.model.eval()
    return res


def questions(kg, n=64):
    t = torch.as_tensor(kg.splits["valid"][:n], dtype=torch.long)
    return t[:, 0], t[:, 1], t[:, 2]


# ---- 1. learning ---------------------------------------------------------------------------------------------
def test_trains_above_chance(trained, synth_kg):
    chance = 6.0 / synth_kg.num_entities
    assert trained.best_valid_mrr > 4 * chance
    assert evaluate_mrr(trained.model, synth_kg, "valid") == pytest.approx(trained.best_valid_mrr, abs=1e-9)
    assert trained.trace[-1]["loss"] < trained.trace[0]["loss"] - 0.5



def test_grouped_training_hides_every_answer_and_learns(synth_kg):
    """Grouped 1vsAll hands HittER all answers of each question; the model still learns (more slowly than per
    triple: no context shows a question's other answers, here MRR ~.09 against ~.14 after ~200 steps)."""
    cfg = TrainConfig(regime="1vsAll", grouped=True, optimizer="adamax", lr=0.01, batch_size=32, max_epochs=8,
                      eval_every=8, lr_schedule="warmup_linear", warmup_steps=10)
    t = Trainer(synth_kg, "HittER", SMALL, cfg, seed=0, device="cpu")
    seen = []
    context = t.model.context

    def spy(s, p, targets=None):
        seen.append((s, p, targets))
        return context(s, p, targets)

    t.model.context = spy
    t._batch_loss(t._epoch_examples(torch.Generator().manual_seed(0))[:32], torch.Generator().manual_seed(0))
    s, p, (rows, answers) = seen[0]
    tr, R = synth_kg.splits["train"], synth_kg.num_relations
    for i in range(len(s)):
        si, pi = int(s[i]), int(p[i])
        truth = (tr[(tr[:, 0] == si) & (tr[:, 1] == pi), 2] if pi < R
                 else tr[(tr[:, 2] == si) & (tr[:, 1] == pi - R), 0])
        assert sorted(answers[rows == i].tolist()) == sorted(set(truth.tolist())), i
    del t.model.context
    res = t.fit()
    assert res.best_valid_mrr > 2.5 * 6.0 / synth_kg.num_entities
    assert res.trace[-1]["loss"] < res.trace[0]["loss"] - 0.2


# ---- 2. target-edge masking ----------------------------------------------------------------------------------
# entities 0..6, relations 0..1 (inverse rows 2..3); question (0, 0, ?) with answer 1
TINY = np.array([
    [0, 0, 1],  # the target edge: in 0's context as (1, 0⁻¹) = (1, 2)
    [1, 0, 0],  # its reverse (1, 0, 0): in 0's context as (1, 0)
    [0, 1, 2],  # (2, 3)
    [3, 0, 0],  # (3, 0)
    [0, 0, 4],  # (4, 2)
    [5, 1, 0],  # (5, 1)
    [1, 1, 6],  # in 1's context as (6, 3)
])


def context_pairs(model, s, p, targets=None):
    e, r, v = model.context(torch.tensor([s]), torch.tensor([p]),
                            None if targets is None else torch.tensor([targets]))
    return [(int(a), int(b)) for a, b in zip(e[0][v[0]], r[0][v[0]])]


def tiny_model(**kw):
    hp = dict(dim=16, entity_layers=1, context_layers=1, num_heads=2, ffn_dim=32, context_dropout=0.0)
    hp.update(kw)
    return HittER(7, 2, graph=TINY, **hp)


def test_context_holds_both_edge_directions():
    m = tiny_model().eval()
    assert sorted(context_pairs(m, 0, 0)) == [(1, 0), (1, 2), (2, 3), (3, 0), (4, 2), (5, 1)]
    assert sorted(context_pairs(m, 6, 3)) == [(1, 1)]
    assert context_pairs(m, 0, 0) == context_pairs(m, 0, 1)  # eval order is fixed


def test_target_edge_is_masked_out_of_the_context():
    others = [(2, 3), (3, 0), (4, 2), (5, 1)]
    torch.manual_seed(0)
    m = tiny_model().train()
    for _ in range(20):  # every draw of a full context holds all other neighbours, never the answer's edges
        assert sorted(context_pairs(m, 0, 0, targets=1)) == others
    assert sorted(context_pairs(m.eval(), 0, 0, targets=1)) == others
    # the head question (?, 0, 1) → 0 is the tail question (1, 0⁻¹, ?): both views of (0, 0, 1) are removed
    assert context_pairs(m.eval(), 1, 2, targets=0) == [(6, 3)]
    assert sorted(context_pairs(m.train(), 1, 2, targets=0)) == [(6, 3)]
    # without a target the edge is part of the context
    assert (1, 2) in context_pairs(m.train(), 0, 0)

    # K = 2 < 4 remaining neighbours: uniform draws without replacement, never the target edge
    m = tiny_model(max_context=2).train()
    seen = set()
    for _ in range(60):
        pairs = context_pairs(m, 0, 0, targets=1)
        assert len(pairs) == 2 and len(set(pairs)) == 2
        assert all(e != 1 for e, _ in pairs)
        seen.update(pairs)
    assert sorted(seen) == others


def test_batched_context_masks_per_question():
    """A batch mixing questions: each row masks only its own answer's edge."""
    torch.manual_seed(1)
    m = tiny_model().train()
    s, p, t = torch.tensor([0, 0, 0]), torch.tensor([0, 1, 0]), torch.tensor([1, 1, 4])
    e, r, v = m.context(s, p, t)
    rows = [sorted((int(a), int(b)) for a, b in zip(e[i][v[i]], r[i][v[i]])) for i in range(3)]
    assert rows[0] == [(2, 3), (3, 0), (4, 2), (5, 1)]
    assert rows[1] == [(1, 0), (1, 2), (2, 3), (3, 0), (4, 2), (5, 1)]  # no edge (0, 1, 1): nothing to hide
    assert rows[2] == [(1, 0), (1, 2), (2, 3), (3, 0), (5, 1)]



def test_grouped_targets_mask_every_answer_of_a_question():
    """(rows, answers) pairs: question 0 = (0, 0, ?) with answers {1, 4} loses both answers' entries; question 1
    = (0, 1, ?) with answer 2 loses (2, 3); in train and eval mode, with a window smaller than the degree."""
    rows, answers = torch.tensor([0, 0, 1]), torch.tensor([1, 4, 2])
    s, p = torch.tensor([0, 0]), torch.tensor([0, 1])
    want = [[(2, 3), (3, 0), (5, 1)], [(1, 0), (1, 2), (3, 0), (4, 2), (5, 1)]]
    torch.manual_seed(2)
    for mode in ("train", "eval"):
        m = getattr(tiny_model(), mode)()
        e, r, v = m.context(s, p, (rows, answers))
        got = [sorted((int(a), int(b)) for a, b in zip(e[i][v[i]], r[i][v[i]])) for i in range(2)]
        assert got == want, mode
    m = tiny_model(max_context=2).eval()  # eval keeps the fixed order: the first two remaining entries
    full = tiny_model().eval()
    e, r, v = m.context(s, p, (rows, answers))
    fe, fr, fv = full.context(s, p, (rows, answers))
    assert torch.equal(e, fe[:, :2]) and torch.equal(r, fr[:, :2]) and bool(v.all())


def test_one_answer_per_row_pairs_equal_the_per_question_tensor():
    s, p, t = torch.tensor([0, 0, 0, 1]), torch.tensor([0, 1, 0, 2]), torch.tensor([1, 1, 4, 0])
    pairs = (torch.arange(4), t)
    for mode in ("train", "eval"):
        m = getattr(tiny_model(max_context=3, context_dropout=0.2), mode)()
        torch.manual_seed(3)
        a = m.context(s, p, t)
        torch.manual_seed(3)
        b = m.context(s, p, pairs)
        assert all(torch.equal(x, y) for x, y in zip(a, b)), mode


# ---- 3. deterministic eval scoring ---------------------------------------------------------------------------
def test_eval_scoring_is_deterministic_and_consistent(trained, synth_kg):
    m = trained.model.eval()
    s, p, o = questions(synth_kg)
    p = torch.cat([p[:32], p[32:] + synth_kg.num_relations])  # tail and (reciprocal) head questions
    with torch.no_grad():
        a, b = m.score_sp(s, p), m.score_sp(s, p)
        spo = m.score_spo(s, p, o)
        some = m.score_sp_some(s, p, torch.stack([o, s], 1))
    assert torch.equal(a, b)
    assert a.abs().max() > 1.0  # trained scores, not near-zero initial ones
    torch.testing.assert_close(spo, a[torch.arange(len(s)), o], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(some, a.gather(1, torch.stack([o, s], 1)), atol=1e-5, rtol=1e-5)
    # head questions (?, p, o) are the tail questions (o, p⁻¹, ?), also through the ranking engine's entry point
    r = p[:32]
    with torch.no_grad():
        head = m.score_po(r, o[:32])
        assert torch.equal(head, m.score_sp(o[:32], r + synth_kg.num_relations))
        assert torch.equal(m.score_questions(torch.stack([o[:32], r], 1), HEAD), head)


# ---- 4. rebuild from hparams ---------------------------------------------------------------------------------
def test_build_model_round_trip(trained, synth_kg):
    m = trained.model.eval()
    clone = build_model("HittER", synth_kg.num_entities, synth_kg.num_relations, graph=synth_kg.splits["train"],
                        **m.hparams)
    assert clone.hparams == m.hparams
    assert {k for k in clone.state_dict()} == {k for k in m.state_dict()}
    assert not any(k.startswith("nbr_") for k in m.state_dict())  # the graph is rebuilt, not stored
    clone.load_state_dict(m.state_dict())
    clone.eval()
    s, p, _ = questions(synth_kg)
    with torch.no_grad():
        assert torch.equal(clone.score_sp(s, p), m.score_sp(s, p))
    assert all(torch.equal(getattr(clone, b), getattr(m, b)) for b in ("nbr_ptr", "nbr_entity", "nbr_relation"))


# ---- 5. the context transformer matters ----------------------------------------------------------------------
def test_neighbour_embedding_changes_the_score(trained, synth_kg):
    m = build_model("HittER", synth_kg.num_entities, synth_kg.num_relations, graph=synth_kg.splits["train"],
                    **trained.model.hparams)
    m.load_state_dict(trained.model.state_dict())
    m.eval()
    E = synth_kg.num_entities
    p = torch.zeros(E, dtype=torch.long)
    ctx_e, _, valid = m.context(torch.arange(E), p)
    s = int(torch.nonzero(valid[:, 0] & (ctx_e[:, 0] != torch.arange(E)))[0])
    n = int(ctx_e[s, 0])
    has_n = ((ctx_e == n) & valid).any(1)
    s2 = int(torch.nonzero(~has_n & (torch.arange(E) != n))[0])
    q_s, q_p = torch.tensor([s, s2]), torch.tensor([0, 0])
    keep = torch.arange(E) != n  # column n moves with its own embedding; look at every other entity
    with torch.no_grad():
        before = m.score_sp(q_s, q_p)
        m.entity.weight[n] += 2.0 * torch.randn(m.dim, generator=torch.Generator().manual_seed(0))
        after = m.score_sp(q_s, q_p)
    assert (after[0, keep] - before[0, keep]).abs().max() > 1e-3  # s has n in its context
    assert torch.equal(after[1, keep], before[1, keep])  # s2 does not


# ---- construction and training-mode sampling -----------------------------------------------------------------
def test_constructor_validation_and_defaults(synth_kg):
    g = synth_kg.splits["train"]
    with pytest.raises(ValueError, match="context_layers"):
        HittER(synth_kg.num_entities, synth_kg.num_relations, graph=g, context_layers=0)
    with pytest.raises(ValueError, match="reciprocal"):
        HittER(synth_kg.num_entities, synth_kg.num_relations, graph=g, reciprocal=False)
    with pytest.raises(ValueError, match="graph"):
        HittER(synth_kg.num_entities, synth_kg.num_relations)
    m = build_model("HittER", synth_kg.num_entities, synth_kg.num_relations, graph=g)
    hp = m.hparams
    assert (hp["dim"], hp["entity_layers"], hp["context_layers"], hp["num_heads"], hp["ffn_dim"],
            hp["max_context"], hp["source_mask"], hp["reciprocal"]) == (320, 3, 6, 8, 1280, 50, 0.5, True)
    assert m.relation.weight.shape == (2 * synth_kg.num_relations, 320)
    assert len(m.entity_encoder) == 3 and len(m.context_encoder) == 6
    assert m.entity_encoder[0].linear1.weight.shape == (1280, 320)


def test_training_draws_follow_the_global_seed(synth_kg):
    m = HittER(synth_kg.num_entities, synth_kg.num_relations, graph=synth_kg.splits["train"], **SMALL).train()
    s, p, o = questions(synth_kg)

    def draw(seed):
        torch.manual_seed(seed)
        ctx = m.context(s, p, o)
        return ctx, m.score_sp(s, p, targets=o)

    (a_ctx, a), (b_ctx, b), (c_ctx, _) = draw(5), draw(5), draw(6)
    assert all(torch.equal(x, y) for x, y in zip(a_ctx, b_ctx)) and torch.equal(a, b)
    assert not torch.equal(a_ctx[0], c_ctx[0])


def test_resume_equals_uninterrupted(synth_kg, tmp_path):
    """Context draws, source masking and dropout all use the global torch RNG, which checkpoints carry."""
    hp = dict(SMALL, dim=16, ffn_dim=32, max_context=4, hidden_dropout=0.1)
    cfg = dict(regime="1vsAll", optimizer="adamax", lr=0.01, batch_size=512, max_epochs=2, eval_every=2)
    ref = Trainer(synth_kg, "HittER", hp, TrainConfig(**cfg), seed=2, device="cpu").fit()
    work = tmp_path / "work.pt"
    part = Trainer(synth_kg, "HittER", hp, TrainConfig(**cfg), seed=2, device="cpu")
    part.cfg.max_epochs = 1  # same settings hash
    part.fit(work)
    resumed = Trainer(synth_kg, "HittER", hp, TrainConfig(**cfg), seed=2, device="cpu").fit(work)
    a, b = ref.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert [t["loss"] for t in resumed.trace] == [t["loss"] for t in ref.trace]
