"""Expected cost of a training job, for scheduling only: the longest trainings should start first.

In the first complete default run the two longest trainings (FB15k-237 RotatE and HAKE, about 25 minutes each)
were started only after 70 minutes, so one core idled while they finished. The workflow gives ``train_model`` a
Snakemake ``priority`` equal to this estimate. It orders jobs and nothing else: a wrong estimate costs wall time,
never changes a result.
"""

from __future__ import annotations

from typing import Any

from .config import TrainConfig

# Seconds per epoch of each model under its default regime on FB15k-237 (one thread, validation included):
# the default run's training wall times over its epochs (docs/results.md).
# They set the models' relative costs; a model not listed counts as the median.
EPOCH_SECONDS = {
    "TransE": 81, "RotatE": 254, "HAKE": 310, "AttE": 80, "DistMult": 62, "RESCAL": 81, "ComplEx": 55,
    "TuckER": 66, "BiQUE": 73, "ConvE": 107, "CompGCN": 185, "InteractE": 121, "HittER": 240,
}
_MEDIAN = sorted(EPOCH_SECONDS.values())[len(EPOCH_SECONDS) // 2]


def expected_train_seconds(model: str, train: dict[str, Any]) -> int:
    """Estimated wall time of one training job: epochs (the configured maximum) times the model's epoch cost."""
    epochs = train.get("max_epochs", TrainConfig.max_epochs)
    return int(round(epochs * EPOCH_SECONDS.get(model, _MEDIAN)))
