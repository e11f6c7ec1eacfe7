"""The training core: learning on the synthetic KG, determinism, resume, checkpoint checks."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kgeval.errors import CorruptFileError
from kgeval.models.checkpoint import CheckpointMismatch, load_checkpoint, load_model, save_checkpoint
from kgeval.training.config import TrainConfig
from kgeval.training.trainer import Trainer, evaluate_mrr, model_state

CFG = dict(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=4, eval_every=2)


def weights(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("regime, loss", [("1vsAll", "ce"), ("KvsAll", "bce"),
                                          ("negative_sampling", "self_adversarial"),
                                          ("negative_sampling", "softmax"), ("negative_sampling", "bce"),
                                          ("negative_sampling", "margin")])
def test_regimes_learn_above_chance(synth_kg, regime, loss):
    cfg = TrainConfig(regime=regime, loss=loss, lr=0.01, batch_size=128, max_epochs=15, eval_every=15,
                      num_negatives=32, label_smoothing=0.1 if regime == "KvsAll" else 0.0)
    res = Trainer(synth_kg, "DistMult", {"dim": 32, "reciprocal": regime != "KvsAll"}, cfg, seed=0,
                  device="cpu").fit()
    chance = 6.0 / synth_kg.num_entities  # about H_N / N
    assert res.best_valid_mrr > 4 * chance
    assert evaluate_mrr(res.model, synth_kg, "test") > 4 * chance


def test_same_seed_same_weights_other_seed_differs(synth_kg):
    cfg = TrainConfig(**CFG)
    a = weights(Trainer(synth_kg, "DistMult", {"dim": 16, "reciprocal": True}, cfg, seed=3, device="cpu").fit().model)
    b = weights(Trainer(synth_kg, "DistMult", {"dim": 16, "reciprocal": True}, cfg, seed=3, device="cpu").fit().model)
    c = weights(Trainer(synth_kg, "DistMult", {"dim": 16, "reciprocal": True}, cfg, seed=4, device="cpu").fit().model)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_resume_equals_uninterrupted(synth_kg, tmp_path):
    hp = {"dim": 16, "reciprocal": True, "entity_dropout": 0.2}
    full = Trainer(synth_kg, "DistMult", hp, TrainConfig(**CFG), seed=1, device="cpu")
    ref = full.fit()
    # interrupt: train 2 epochs into a work checkpoint, then resume with the full budget
    work = tmp_path / "work.pt"
    part_cfg = TrainConfig(**CFG)
    part = Trainer(synth_kg, "DistMult", hp, part_cfg, seed=1, device="cpu")
    part.cfg.max_epochs = 2  # same hash: the settings object is mutated after the hash is taken
    part.fit(work)
    resumed = Trainer(synth_kg, "DistMult", hp, TrainConfig(**CFG), seed=1, device="cpu").fit(work)
    assert resumed.epochs == ref.epochs == 4
    a, b = weights(ref.model), weights(resumed.model)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert [t["loss"] for t in resumed.trace] == [t["loss"] for t in ref.trace]


def test_checkpoint_refused_for_other_settings_or_dataset(synth_kg, tmp_path):
    work = tmp_path / "w.pt"
    t = Trainer(synth_kg, "DistMult", {"dim": 8}, TrainConfig(**{**CFG, "max_epochs": 1}), seed=0, device="cpu")
    t.fit(work)
    with pytest.raises(CheckpointMismatch, match="settings hash"):
        Trainer(synth_kg, "DistMult", {"dim": 8}, TrainConfig(**{**CFG, "lr": 0.5}), seed=0, device="cpu").fit(work)
    with pytest.raises(CheckpointMismatch, match="written for dataset"):
        load_checkpoint(work, dataset_fingerprint="0" * 64)


def test_corrupted_checkpoint_is_named(synth_kg, tmp_path):
    t = Trainer(synth_kg, "DistMult", {"dim": 8}, TrainConfig(**{**CFG, "max_epochs": 1}), seed=0, device="cpu")
    res = t.fit()
    path = tmp_path / "model.pt"
    save_checkpoint(model_state("DistMult", {"dim": 8}, synth_kg, res, t.hash), path)
    assert load_model(path, synth_kg, device="cpu") is not None
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 100])
    with pytest.raises(CorruptFileError, match=r"model.pt: SHA-256 .* truncated or corrupted.*set aside"):
        load_model(path, synth_kg, device="cpu")
    # set aside with its sidecar, so that a rerun rebuilds it instead of failing on it again
    assert not path.exists() and (tmp_path / "model.pt.corrupt").read_bytes() == data[: len(data) - 100]
    assert (tmp_path / "model.pt.json.corrupt").is_file()
    save_checkpoint(model_state("DistMult", {"dim": 8}, synth_kg, res, t.hash), path)
    Path(str(path) + ".json").unlink()
    with pytest.raises(CorruptFileError, match="sidecar"):
        load_model(path, synth_kg, device="cpu")


def test_grouped_one_vs_all_equals_per_triple_objective(synth_kg):
    """Grouped 1vsAll computes the same loss as 1vsAll over all triples of the same questions."""
    import numpy as np

    from kgeval.data.kg import HEAD, TAIL

    cfg = TrainConfig(regime="1vsAll", grouped=True, batch_size=10**6)
    t = Trainer(synth_kg, "DistMult", {"dim": 8, "reciprocal": True}, cfg, seed=0, device="cpu")
    gen = torch.Generator().manual_seed(0)
    questions = t._epoch_examples(gen)
    grouped = t._batch_loss(questions, gen)
    tr = synth_kg.splits["train"]
    rows = np.concatenate([np.stack([np.full(len(tr), TAIL), tr[:, 0], tr[:, 1], tr[:, 2]], 1),
                           np.stack([np.full(len(tr), HEAD), tr[:, 2], tr[:, 1], tr[:, 0]], 1)])
    t.cfg = TrainConfig(regime="1vsAll", batch_size=10**6)
    per_triple = t._batch_loss(torch.as_tensor(rows), gen)
    assert float(grouped) == pytest.approx(float(per_triple), rel=1e-6)
    assert len(questions) < len(rows)


def test_max_batches_per_epoch_caps_every_epoch(synth_kg):
    cfg = TrainConfig(regime="1vsAll", lr=0.01, batch_size=64, max_epochs=3, eval_every=1, max_batches_per_epoch=2)
    trainer = Trainer(synth_kg, "DistMult", {"dim": 16, "reciprocal": True}, cfg, seed=0, device="cpu")
    full = (2 * len(synth_kg.splits["train"]) + 63) // 64
    assert full > 2 and trainer.steps_per_epoch() == 2
    res = trainer.fit()
    # two optimiser steps per epoch, a validation MRR after each of the three epochs
    assert [t["step"] for t in res.trace] == [2, 4, 6]
    assert all("valid_mrr" in t for t in res.trace)


def test_step_schedule_cuts_at_the_milestones_and_resumes(synth_kg, tmp_path):
    """lr_schedule step: epoch e trains at lr · factor^(milestones ≤ e − 1), and a run resumed from its work
    checkpoint continues the schedule exactly."""
    cfg = dict(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=5, lr_schedule="step", lr_factor=0.2,
               lr_milestones=[2, 4])
    hp = {"dim": 16, "reciprocal": True}
    ref = Trainer(synth_kg, "DistMult", hp, TrainConfig(**cfg), seed=2, device="cpu").fit()
    assert [t["lr"] for t in ref.trace] == pytest.approx([0.01, 0.01, 0.002, 0.002, 0.0004])
    work = tmp_path / "work.pt"
    part = Trainer(synth_kg, "DistMult", hp, TrainConfig(**cfg), seed=2, device="cpu")
    part.cfg.max_epochs = 3
    part.fit(work)
    resumed = Trainer(synth_kg, "DistMult", hp, TrainConfig(**cfg), seed=2, device="cpu").fit(work)
    a, b = weights(ref.model), weights(resumed.model)
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("bad, message", [({"lr_schedule": "step"}, "needs train.lr_milestones"),
                                          ({"lr_schedule": "step", "lr_milestones": [3, 2]}, "increasing"),
                                          ({"lr_schedule": "step", "lr_milestones": [0]}, "increasing")])
def test_step_schedule_settings_are_checked(bad, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**bad)


def test_train_seed_runs_the_configured_threads_whatever_the_caller_set(synth_kg, tmp_path):
    """train.threads fixes torch's thread count inside the job (the workflow's --cores must not change the bytes):
    a job configured for 2 threads runs 2 even when the caller (Snakemake capped by --cores 1) set 1, and two
    such runs write the same weights."""
    from kgeval.training.steps import train_seed

    kg_path = tmp_path / "kg.npz"
    synth_kg.save(kg_path)
    train = {"regime": "1vsAll", "lr": 0.01, "batch_size": 128, "max_epochs": 1, "threads": 2}
    before = torch.get_num_threads()
    seen = []
    try:
        for i in range(2):
            torch.set_num_threads(1)
            train_seed(kg_path, "DistMult", {"dim": 16, "reciprocal": True}, train, 0, tmp_path / f"m{i}.pt",
                       tmp_path / f"work{i}", device="cpu")
            seen.append(torch.get_num_threads())
    finally:
        torch.set_num_threads(before)
    assert seen == [2, 2]
    a = load_checkpoint(tmp_path / "m0.pt")["state_dict"]
    b = load_checkpoint(tmp_path / "m1.pt")["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    with pytest.raises(ValueError, match="threads"):
        TrainConfig(threads=0)


def test_evaluate_ranking_hits_and_mrr_equal_a_brute_force_filtered_ranking(synth_kg):
    """evaluate_ranking (the KP early-stopping metrics) against an independent loop: each test triple ranked
    among all entities, both sides, every other known triple filtered out, ties counted half."""
    import numpy as np
    import torch

    from kgeval.models import build_model
    from kgeval.training.trainer import evaluate_ranking

    torch.manual_seed(0)
    model = build_model("DistMult", synth_kg.num_entities, synth_kg.num_relations, dim=8).eval()
    got = evaluate_ranking(model, synth_kg, "test")
    known = {tuple(t) for t in synth_kg.known().tolist()}
    ranks = []
    with torch.no_grad():
        for h, r, t in synth_kg.splits["test"].tolist():
            for side, scores in (("t", model.score_sp(torch.tensor([h]), torch.tensor([r]))[0]),
                                 ("h", model.score_po(torch.tensor([r]), torch.tensor([t]))[0])):
                s = scores.numpy()
                target = t if side == "t" else h
                other = [(h, r, e) if side == "t" else (e, r, t) for e in range(len(s))]
                keep = np.array([e == target or o not in known for e, o in enumerate(other)])
                gt, eq = (s[keep] > s[target]).sum(), (s[keep] == s[target]).sum() - 1
                ranks.append(1 + gt + eq / 2)
    ranks = np.array(ranks)
    assert got["mrr"] == pytest.approx(np.mean(1 / ranks), rel=1e-6)
    assert got["hits@1"] == pytest.approx(np.mean(ranks <= 1)) and got["hits@10"] == pytest.approx(np.mean(ranks <= 10))
    assert got["mrr"] == evaluate_mrr(model, synth_kg, "test")
