"""Published test MRRs of the 13 models: the one place the model-quality table (and the README) takes them from.

Keys are the dataset names of the configuration. A dataset without an entry (the synthetic graphs) has no
published value; its ratio column stays empty.
"""

from __future__ import annotations

# Filtered test MRR as reported. FB15k-237: shared/specs/models.md (LibKGE's published checkpoints for TransE,
# DistMult, RESCAL, ComplEx; the models' papers for the rest; ConvE its paper's .325, not LibKGE's 1vsAll .339).
# WN18RR: the original papers and LibKGE, as collected in issue 15.
PUBLISHED_MRR: dict[str, dict[str, float]] = {
    "FB15k-237": {
        "TransE": 0.313, "RotatE": 0.337, "HAKE": 0.346, "AttE": 0.351, "DistMult": 0.343, "RESCAL": 0.356,
        "ComplEx": 0.348, "TuckER": 0.358, "BiQUE": 0.365, "ConvE": 0.325, "CompGCN": 0.355, "InteractE": 0.354,
        "HittER": 0.373,
    },
    "WN18RR": {
        "TransE": 0.228, "RotatE": 0.476, "HAKE": 0.497, "AttE": 0.490, "DistMult": 0.452, "RESCAL": 0.467,
        "ComplEx": 0.475, "TuckER": 0.470, "BiQUE": 0.504, "ConvE": 0.442, "CompGCN": 0.479, "InteractE": 0.463,
        "HittER": 0.503,
    },
}

SOURCES: dict[str, str] = {
    "FB15k-237": "shared/specs/models.md (models' papers; LibKGE checkpoints for TransE, DistMult, RESCAL, ComplEx)",
    "WN18RR": "original papers / LibKGE, as listed in issue 15",
}


def published_mrr(dataset: str, model: str) -> float | None:
    """The published test MRR of ``model`` on ``dataset``, or None where none is recorded."""
    return PUBLISHED_MRR.get(dataset, {}).get(model)
