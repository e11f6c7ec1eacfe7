"""The training loop: one model, one dataset, one seed.

Regimes (``TrainConfig.regime``):

* ``1vsAll``: every training triple gives a tail question (s, p, ?) → o and a head question (?, p, o) → s
  (with reciprocal relations: the tail question (o, p⁻¹, ?) → s); softmax cross-entropy over all entities.
  With ``grouped`` the same objective is computed per distinct question (the sum of its answers' losses), so
  each question is scored once per epoch: 3.6× fewer score rows on FB15k-237 (a context model, HittER, then
  hides every answer of the question from its context, not only the one being predicted, so for it the
  objective differs from the per-triple one);
* ``KvsAll``: every distinct question of the training graph against all its known answers; binary
  cross-entropy with label smoothing (ConvE, TuckER, CompGCN);
* ``negative_sampling``: every triple against ``num_negatives`` uniformly corrupted tails and heads, with a
  self-adversarial, softmax, BCE or margin loss (TransE/RotatE/HAKE, InteractE).

Regularisation (N3 or L2 of ``model.factors``) applies to each question as asked in 1vsAll (a head question of a
reciprocal model through its inverse relation, as kbc does) and to the forward triple in negative sampling;
KvsAll questions have no single answer and are not regularised (TuckER, ConvE and CompGCN use dropout).

Optimisers Adam, Adagrad, Adamax (and SGD); N3 or L2 regularisation of ``model.factors``; learning-rate
schedules: reduce-on-plateau of validation MRR, or linear warm-up then linear decay. Every ``eval_every``
epochs the validation MRR (filtered with train ∪ valid, realistic ranks) is computed with the ranking engine;
the best weights are kept and training stops after ``patience`` evaluations without improvement.

Determinism: the shuffling and negative sampling of epoch e use a generator seeded with (seed, e), and the
global RNG state (dropout) is saved in every checkpoint, so a run resumed from its last checkpoint on CPU
produces the same weights as an uninterrupted one.
"""

from __future__ import annotations

import copy
import logging
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..data.judged import Judged
from ..data.kg import HEAD, TAIL, KnowledgeGraph
from ..data.questions import AnswerIndex, Questions, triple_questions, unique_questions
from ..data.testsets import TestSet
from ..errors import CorruptFileError
from ..io import pause_point
from ..models import build_model
from ..models.base import KGEModel, Targets
from ..models.checkpoint import load_checkpoint, resolve_device, save_checkpoint, without_timings
from ..progress import Progress
from ..scores.ranking import docno_ranks, judged_entities, rank_questions
from .config import TrainConfig, config_hash, train_settings
from .losses import k_vs_all, negative_sampling, one_vs_all, one_vs_all_grouped, regularization

log = logging.getLogger(__name__)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - third-party code may draw from the legacy global RNG
    torch.manual_seed(seed)


@dataclass
class TrainResult:
    model: KGEModel
    trace: list[dict[str, Any]]
    best_valid_mrr: float
    best_epoch: int
    epochs: int
    steps: int
    seconds: float
    snapshots: list[dict[str, Any]] = field(default_factory=list)


def evaluate_mrr(model: KGEModel, kg: KnowledgeGraph, split: str = "valid", max_triples: int | None = None,
                 seed: int = 0, memory_budget_mb: float = 512) -> float:
    """Filtered (train ∪ valid ∪ split), realistic micro MRR of ``model`` on a split."""
    return evaluate_ranking(model, kg, split, max_triples, seed, memory_budget_mb)["mrr"]


def evaluate_ranking(model: KGEModel, kg: KnowledgeGraph, split: str = "valid", max_triples: int | None = None,
                     seed: int = 0, memory_budget_mb: float = 512, hits: tuple[int, ...] = (1, 10)
                     ) -> dict[str, float]:
    """Filtered (train ∪ valid ∪ split), realistic micro MRR and Hits@k of ``model`` on a split, from one
    ranking: ``{"mrr": …, "hits@1": …, "hits@10": …}``."""
    return ranking_of(model, ranking_inputs(kg, split, max_triples, seed), memory_budget_mb, hits)


@dataclass(frozen=True)
class RankingInputs:
    """What a split's filtered ranking needs besides the model: its questions, their judged answers, the filter
    index and the entities' docno order. The same for every evaluation of a training, so the trainer builds them
    once instead of once per epoch."""

    questions: Questions
    judged: Judged
    known: AnswerIndex
    docnos: np.ndarray


def ranking_inputs(kg: KnowledgeGraph, split: str = "valid", max_triples: int | None = None,
                   seed: int = 0) -> RankingInputs:
    """The inputs of :func:`evaluate_ranking` for a split (its first ``max_triples`` of a seeded draw)."""
    triples = kg.splits[split]
    if max_triples is not None and len(triples) > max_triples:
        idx = np.sort(np.random.default_rng(seed).choice(len(triples), max_triples, replace=False))
        triples = triples[idx]
    ts = TestSet(split, triples, np.ones(len(triples), np.int8), np.zeros(len(triples), np.int16))
    questions = ts.questions(kg)
    filter_splits = ("train",) if split == "valid" else ("train", "valid")
    return RankingInputs(questions, judged_entities(ts, questions),
                         AnswerIndex(kg.known(filter_splits), kg.num_entities, kg.num_relations),
                         docno_ranks(kg.entities))


def ranking_of(model: KGEModel, inputs: RankingInputs, memory_budget_mb: float = 512,
               hits: tuple[int, ...] = (1, 10)) -> dict[str, float]:
    """:func:`evaluate_ranking` from prepared inputs."""
    from ..metrics.ranks import micro_ranks

    questions, judged, known = inputs.questions, inputs.judged, inputs.known
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        r = rank_questions(model.score_questions, questions, judged, known, inputs.docnos, k=0,
                           memory_budget_mb=memory_budget_mb, device=device, model_name=type(model).__name__)
    finally:
        model.train(was_training)
    ranks = micro_ranks(judged.q, r.score, r.n_gt, r.n_eq, r.n_candidates, judged.label == 1)
    out = {"mrr": float(np.mean(1.0 / ranks.realistic))}
    out.update({f"hits@{k}": float(np.mean(ranks.realistic <= k)) for k in hits})
    return out


class Trainer:
    def __init__(self, kg: KnowledgeGraph, model_name: str, model_hparams: dict[str, Any], cfg: TrainConfig,
                 seed: int = 0, device: str | None = "auto"):
        self.kg, self.model_name, self.model_hparams, self.cfg, self.seed = kg, model_name, model_hparams, cfg, seed
        self.device = resolve_device(device)
        self.hash = config_hash({"model": model_name, "hparams": model_hparams, "train": train_settings(cfg),
                                 "seed": seed})
        seed_everything(seed)
        self.model = build_model(model_name, kg.num_entities, kg.num_relations, graph=kg.splits["train"],
                                 **model_hparams).to(self.device)
        self.model.compile_distances = cfg.compile
        self.optimizer = self._optimizer()
        self.train_triples = torch.as_tensor(kg.splits["train"], dtype=torch.long)
        self._kvsall: tuple[torch.Tensor, AnswerIndex] | None = None
        self._valid_inputs: RankingInputs | None = None

    # ---- setup --------------------------------------------------------------------------------------------
    def _optimizer(self) -> torch.optim.Optimizer:
        params = [p for p in self.model.parameters() if p.requires_grad]
        c = self.cfg
        if c.optimizer == "adam":
            return torch.optim.Adam(params, lr=c.lr, weight_decay=c.weight_decay)
        if c.optimizer == "adagrad":
            return torch.optim.Adagrad(params, lr=c.lr, weight_decay=c.weight_decay)
        if c.optimizer == "adamax":
            return torch.optim.Adamax(params, lr=c.lr, weight_decay=c.weight_decay)
        return torch.optim.SGD(params, lr=c.lr, weight_decay=c.weight_decay)

    def _lr_at(self, step: int, total: int) -> float:
        c = self.cfg
        if c.lr_schedule != "warmup_linear":
            return c.lr
        if c.warmup_steps and step < c.warmup_steps:
            return c.lr * (step + 1) / c.warmup_steps
        span = max(1, total - c.warmup_steps)
        frac = min(1.0, (step - c.warmup_steps) / span)
        return c.lr * (1.0 - frac * (1.0 - c.lr_factor))

    def steps_per_epoch(self) -> int:
        n = self._num_examples()
        full = (n + self.cfg.batch_size - 1) // self.cfg.batch_size
        return min(full, self.cfg.max_batches_per_epoch or full)

    def _num_examples(self) -> int:
        if self.cfg.regime == "KvsAll" or self.cfg.grouped:
            return len(self._kvsall_questions()[0])
        if self.cfg.regime == "1vsAll":
            return 2 * len(self.train_triples)
        return len(self.train_triples)

    def _kvsall_questions(self) -> tuple[torch.Tensor, AnswerIndex]:
        if self._kvsall is None:
            train = self.kg.splits["train"]
            side, known, rel, _ = triple_questions(train)
            q = unique_questions(side, known, rel, self.kg.num_entities, self.kg.num_relations)
            self._kvsall = (torch.as_tensor(q, dtype=torch.long),
                            AnswerIndex(train, self.kg.num_entities, self.kg.num_relations))
        return self._kvsall

    # ---- one batch ------------------------------------------------------------------------------------------
    def _scores_for_questions(self, side: torch.Tensor, known: torch.Tensor, rel: torch.Tensor,
                              answer: Targets | None = None) -> torch.Tensor:
        """(B, |E|) scores of mixed head/tail questions; ``answer`` lets context models mask the target edges."""
        m = self.model
        if m.reciprocal:
            r = torch.where(side == HEAD, rel + m.num_relations, rel)
            return m.score_sp(known, r, targets=answer)
        if answer is not None and not torch.is_tensor(answer):
            raise ValueError(f"{self.model_name}: grouped answer masking needs reciprocal relations")
        tail = side == TAIL
        parts = []
        if tail.any():
            parts.append((tail, m.score_sp(known[tail], rel[tail],
                                           targets=None if answer is None else answer[tail])))
        if (~tail).any():
            parts.append((~tail, m.score_po(rel[~tail], known[~tail],
                                            targets=None if answer is None else answer[~tail])))
        if len(parts) == 1:
            return parts[0][1]
        out = torch.empty(len(side), m.num_entities, device=known.device, dtype=parts[0][1].dtype)
        for mask, values in parts:
            out[mask] = values
        return out

    def _batch_loss(self, batch: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        c, m, dev = self.cfg, self.model, self.device
        if c.regime == "1vsAll" and not c.grouped:
            # batch rows: (side, known, relation, answer)
            b = batch.to(dev)
            scores = self._scores_for_questions(b[:, 0], b[:, 1], b[:, 2], b[:, 3])
            loss = one_vs_all(scores, b[:, 3], c.label_smoothing)
            if not c.regularizer:
                return loss
            if m.reciprocal:  # regularise the question as asked: a head question uses the inverse relation
                r = torch.where(b[:, 0] == HEAD, b[:, 2] + m.num_relations, b[:, 2])
                factors = m.factors(b[:, 1], r, b[:, 3])
            else:
                s = torch.where(b[:, 0] == TAIL, b[:, 1], b[:, 3])
                o = torch.where(b[:, 0] == TAIL, b[:, 3], b[:, 1])
                factors = m.factors(s, b[:, 2], o)
            return loss + regularization(factors, c.regularizer, c.regularization_weight)
        if c.regime == "KvsAll" or c.grouped:
            q, index = self._kvsall_questions()
            b = batch.to(dev)
            keys = (b[:, 0].cpu().numpy() * self.kg.num_relations + b[:, 2].cpu().numpy()) * self.kg.num_entities \
                + b[:, 1].cpu().numpy()
            rows, ans = index.lookup(keys)
            rows_t, ans_t = torch.as_tensor(rows, device=dev), torch.as_tensor(ans, device=dev)
            # a context model (HittER) must not see any answer of a grouped question among its inputs
            answers = (rows_t, ans_t) if m.uses_targets else None
            scores = self._scores_for_questions(b[:, 0], b[:, 1], b[:, 2], answers)
            if c.regime == "KvsAll":
                labels = torch.zeros_like(scores)
                labels[rows_t, ans_t] = 1.0
                return k_vs_all(scores, labels, c.label_smoothing)
            loss = one_vs_all_grouped(scores, rows_t, ans_t, c.label_smoothing)
            if not c.regularizer:
                return loss
            known, rel = b[rows_t, 1], b[rows_t, 2]
            if m.reciprocal:
                factors = m.factors(known, torch.where(b[rows_t, 0] == HEAD, rel + m.num_relations, rel), ans_t)
            else:
                tail = b[rows_t, 0] == TAIL
                factors = m.factors(torch.where(tail, known, ans_t), rel, torch.where(tail, ans_t, known))
            return loss + regularization(factors, c.regularizer, c.regularization_weight)
        # negative sampling: batch rows are triples (s, p, o); corrupt tails and heads
        b = batch.to(dev)
        s, p, o = b[:, 0], b[:, 1], b[:, 2]
        n = c.num_negatives
        neg_o = torch.randint(0, self.kg.num_entities, (len(b), n), generator=gen).to(dev)
        neg_s = torch.randint(0, self.kg.num_entities, (len(b), n), generator=gen).to(dev)
        # the answer first, then its negatives, in one call: an encoder model encodes each question once
        tail = m.score_sp_some(s, p, torch.cat([o[:, None], neg_o], 1))
        head = m.score_po_some(p, o, torch.cat([s[:, None], neg_s], 1))
        loss_t = negative_sampling(tail[:, 0], tail[:, 1:], c.loss, c.adversarial_temperature, c.margin,
                                   c.label_smoothing)
        loss_h = negative_sampling(head[:, 0], head[:, 1:], c.loss, c.adversarial_temperature, c.margin,
                                   c.label_smoothing)
        return (loss_t + loss_h) / 2 + regularization(m.factors(s, p, o), c.regularizer, c.regularization_weight)

    def _epoch_examples(self, gen: torch.Generator) -> torch.Tensor:
        c = self.cfg
        if c.regime == "1vsAll" and not c.grouped:
            t = self.train_triples
            tail = torch.stack([torch.full((len(t),), TAIL), t[:, 0], t[:, 1], t[:, 2]], 1)
            head = torch.stack([torch.full((len(t),), HEAD), t[:, 2], t[:, 1], t[:, 0]], 1)
            ex = torch.cat([tail, head])
        elif c.regime == "KvsAll" or c.grouped:
            ex = self._kvsall_questions()[0]
        else:
            ex = self.train_triples
        return ex[torch.randperm(len(ex), generator=gen)]

    # ---- the loop -------------------------------------------------------------------------------------------
    def fit(self, work_checkpoint: str | Path | None = None, snapshot_dir: str | Path | None = None) -> TrainResult:
        c, m = self.cfg, self.model
        start_epoch, step, trace = 0, 0, []
        best = {"valid_mrr": -1.0, "epoch": -1, "state_dict": None}
        bad_evals = 0
        plateau = (torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, mode="max", factor=c.lr_factor,
                                                              patience=c.lr_patience)
                   if c.lr_schedule == "plateau" else None)
        snapshots: list[dict[str, Any]] = []
        st = None
        if work_checkpoint is not None and Path(work_checkpoint).is_file():
            try:
                st = load_checkpoint(work_checkpoint, self.hash, self.kg.fingerprint(), map_location=self.device)
            except CorruptFileError as exc:  # a half-written work checkpoint: set aside, train from the start
                log.warning("%s; training %s seed %d from the start", exc, self.model_name, self.seed)
        if st is not None:
            m.load_state_dict(st["state_dict"])
            self.optimizer.load_state_dict(st["optimizer"])
            if plateau is not None and st.get("scheduler"):
                plateau.load_state_dict(st["scheduler"])
            torch.set_rng_state(st["rng_torch"])
            start_epoch, step, trace = st["epoch"], st["step"], st["trace"]
            best = st["best"]
            bad_evals = st["bad_evals"]
            snapshots = st.get("snapshots", [])
            log.info("resumed %s seed %d from %s at epoch %d", self.model_name, self.seed, work_checkpoint,
                     start_epoch)
        total_steps = c.max_steps or c.max_epochs * self.steps_per_epoch()
        t_start = time.perf_counter()
        stop = bool(trace and trace[-1].get("stop"))
        epoch = start_epoch
        epoch_steps = self.steps_per_epoch()
        progress = Progress(total_steps, f"{self.model_name} seed {self.seed}", unit="batches", logger=log,
                            initial=min(step, total_steps))
        while not stop and epoch < c.max_epochs and (c.max_steps is None or step < c.max_steps):
            m.train()
            if c.lr_schedule == "step":  # a function of the epoch alone, so a resumed run continues it exactly
                cuts = sum(1 for e in c.lr_milestones if e <= epoch)
                for group in self.optimizer.param_groups:
                    group["lr"] = c.lr * c.lr_factor ** cuts
            gen = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            examples = self._epoch_examples(gen)
            t0 = time.perf_counter()
            total, batches = 0.0, 0
            # epoch_steps batches: the whole epoch, or its first max_batches_per_epoch
            for b0 in range(0, epoch_steps * c.batch_size, c.batch_size):
                if c.max_steps is not None and step >= c.max_steps:
                    break
                for group in self.optimizer.param_groups:
                    if c.lr_schedule == "warmup_linear":
                        group["lr"] = self._lr_at(step, total_steps)
                self.optimizer.zero_grad(set_to_none=True)
                # bf16 autocast (opt-in): the forward pass's matrix products in bfloat16, the backward pass follows
                with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=c.autocast == "bf16"):
                    loss = self._batch_loss(examples[b0:b0 + c.batch_size], gen)
                if not torch.isfinite(loss):
                    raise FloatingPointError(f"{self.model_name}: non-finite loss at epoch {epoch}, step {step}")
                loss.backward()
                if c.grad_clip:
                    torch.nn.utils.clip_grad_norm_(m.parameters(), c.grad_clip)
                self.optimizer.step()
                total += float(loss.detach())
                batches += 1
                step += 1
                progress.update(1, epoch=f"{epoch + 1}/{c.max_epochs}", batch=f"{batches}/{epoch_steps}",
                                loss=total / batches)
            epoch += 1
            entry = {"epoch": epoch, "step": step, "loss": total / max(batches, 1),
                     "seconds": time.perf_counter() - t0, "lr": self.optimizer.param_groups[0]["lr"]}
            last = epoch >= c.max_epochs or (c.max_steps is not None and step >= c.max_steps)
            if epoch % c.eval_every == 0 or last:
                t1 = time.perf_counter()
                if self._valid_inputs is None:
                    self._valid_inputs = ranking_inputs(self.kg, "valid", c.valid_max_triples, self.seed)
                mrr = ranking_of(m, self._valid_inputs)["mrr"]
                entry.update(valid_mrr=mrr, eval_seconds=time.perf_counter() - t1)
                log.info("%s seed %d epoch %d: validation MRR %.4f in %.1f s (best so far %.4f)", self.model_name,
                         self.seed, epoch, mrr, entry["eval_seconds"], max(mrr, best["valid_mrr"]))
                if plateau is not None:
                    plateau.step(mrr)
                if mrr > best["valid_mrr"]:
                    best = {"valid_mrr": mrr, "epoch": epoch,
                            "state_dict": {k: v.detach().cpu().clone() for k, v in m.state_dict().items()}}
                    bad_evals = 0
                else:
                    bad_evals += 1
                if c.snapshots and snapshot_dir is not None:
                    snap = Path(snapshot_dir) / f"epoch{epoch:04d}.pt"
                    save_checkpoint(self._state(epoch, step, trace + [entry], best, bad_evals, snapshots, light=True),
                                    snap)
                    snapshots.append({"epoch": epoch, "valid_mrr": mrr, "path": snap.name})
                if c.patience is not None and bad_evals >= c.patience:
                    entry["stop"] = True
                    stop = True
            trace.append(entry)
            log.info("%s seed %d epoch %d: %s", self.model_name, self.seed, epoch,
                     {k: round(v, 4) if isinstance(v, float) else v for k, v in entry.items()})
            if work_checkpoint is not None:
                save_checkpoint(self._state(epoch, step, trace, best, bad_evals, snapshots, plateau=plateau),
                                work_checkpoint, {"valid_mrr": best["valid_mrr"]})
                pause_point("train_after_checkpoint")
        progress.close()
        if best["state_dict"] is not None:
            m.load_state_dict(best["state_dict"])
        return TrainResult(m, trace, best["valid_mrr"], best["epoch"], epoch, step,
                           time.perf_counter() - t_start, snapshots)

    def _state(self, epoch, step, trace, best, bad_evals, snapshots, plateau=None, light=False) -> dict[str, Any]:
        state = {
            "model_name": self.model_name, "model_hparams": self.model_hparams, "train_config": train_settings(self.cfg),
            "config_hash": self.hash, "dataset": self.kg.name, "dataset_fingerprint": self.kg.fingerprint(),
            "seed": self.seed, "epoch": epoch, "step": step, "trace": trace,
            "state_dict": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
        }
        if light:  # a snapshot, an output: no wall-clock times (the work checkpoint keeps them for a resume)
            state["trace"] = without_timings(trace)
            return state
        state.update(optimizer=self.optimizer.state_dict(), scheduler=plateau.state_dict() if plateau else None,
                     rng_torch=torch.get_rng_state(), best=best, bad_evals=bad_evals, snapshots=snapshots)
        return state


def model_state(model_name: str, hparams: dict[str, Any], kg: KnowledgeGraph, result: TrainResult, cfg_hash: str,
                extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The checkpoint of a finished model (best weights)."""
    return {"model_name": model_name, "model_hparams": hparams, "config_hash": cfg_hash, "dataset": kg.name,
            "dataset_fingerprint": kg.fingerprint(), "epoch": result.best_epoch, "step": result.steps,
            "trace": without_timings(result.trace), "valid_mrr": result.best_valid_mrr,
            "state_dict": {k: v.detach().cpu() for k, v in result.model.state_dict().items()}, **(extra or {})}


def copy_config(d: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(d)
