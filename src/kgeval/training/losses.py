"""Loss functions of the training regimes."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def one_vs_all(scores: torch.Tensor, targets: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """1vsAll: softmax cross-entropy of each question's scores over all entities against its answer."""
    return F.cross_entropy(scores.float(), targets, label_smoothing=label_smoothing)


def one_vs_all_grouped(scores: torch.Tensor, rows: torch.Tensor, answers: torch.Tensor,
                       label_smoothing: float = 0.0) -> torch.Tensor:
    """1vsAll over distinct questions: Σ over each question's answers of −log softmax(scores)[answer], averaged
    over the (question, answer) pairs. Equal to the mean 1vsAll loss over the training triples of these
    questions, with one score row per question instead of one per triple."""
    # .float(): under bf16 autocast (train.autocast) the scores are bfloat16, whose 8-bit mantissa cannot hold a
    # softmax over thousands of entities; a float32 tensor passes through unchanged (no copy)
    logp = torch.log_softmax(scores.float(), dim=1)
    picked = logp[rows, answers]
    if label_smoothing:
        picked = (1.0 - label_smoothing) * picked + label_smoothing * logp.mean(dim=1)[rows]
    return -picked.mean()


def k_vs_all(scores: torch.Tensor, labels: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """KvsAll: binary cross-entropy against all known answers; smoothing as in ConvE/TuckER:
    y ← (1 − ε) y + 1/|E|."""
    if label_smoothing:
        labels = (1.0 - label_smoothing) * labels + 1.0 / labels.shape[1]
    return F.binary_cross_entropy_with_logits(scores.float(), labels.float())


def negative_sampling(pos: torch.Tensor, neg: torch.Tensor, loss: str, temperature: float = 1.0,
                      margin: float = 1.0, label_smoothing: float = 0.0) -> torch.Tensor:
    """Losses over a positive score (B,) and its negatives (B, n).

    * ``self_adversarial`` (RotatE): −log σ(f⁺) − Σ_i w_i log σ(−f⁻_i), w = softmax(α f⁻) without gradient;
    * ``softmax``: cross-entropy of the positive against [positive, negatives] (LibKGE's NS + CE);
    * ``bce``: binary cross-entropy, 1 for the positive and 0 for negatives, with label smoothing
      (InteractE's sampled non-answers);
    * ``margin``: pairwise hinge max(0, γ − f⁺ + f⁻) (classic TransE).
    """
    pos, neg = pos.float(), neg.float()
    if loss == "self_adversarial":
        w = torch.softmax(temperature * neg, dim=1).detach()
        return (-F.logsigmoid(pos) - (w * F.logsigmoid(-neg)).sum(1)).mean()
    if loss == "softmax":
        logits = torch.cat([pos[:, None], neg], dim=1)
        return F.cross_entropy(logits, torch.zeros(len(pos), dtype=torch.long, device=pos.device))
    if loss == "bce":
        logits = torch.cat([pos[:, None], neg], dim=1)
        labels = torch.zeros_like(logits)
        labels[:, 0] = 1.0
        if label_smoothing:
            labels = (1.0 - label_smoothing) * labels + 1.0 / logits.shape[1]
        return F.binary_cross_entropy_with_logits(logits, labels)
    if loss == "margin":
        return F.relu(margin - pos[:, None] + neg).mean()
    raise ValueError(f"unknown negative-sampling loss {loss!r}")


def regularization(factors: list[torch.Tensor], kind: str | None, weight: float) -> torch.Tensor | float:
    """N3 (Lacroix et al. 2018): w Σ_f Σ |f|³ / B; L2: w Σ_f Σ f² / B."""
    if not kind or not weight or not factors:
        return 0.0
    B = factors[0].shape[0]
    power = 3 if kind == "n3" else 2
    return weight * sum(f.abs().pow(power).sum() for f in factors) / B
