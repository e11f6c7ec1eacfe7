"""PyKEEN models saved by ``PipelineResult.save_to_directory``, as kgeval scorers (optional: ``kgeval[pykeen]``).

Such a folder holds ``trained_model.pkl`` (the whole model, ``torch.save``) and ``training_triples/`` with the
label-to-id maps ``entity_to_id.tsv.gz`` and ``relation_to_id.tsv.gz``. Entities and relations are matched to the
dataset's by label, so PyKEEN's ids never need to equal kgeval's. Scores come from ``predict_h`` / ``predict_t``,
the calls PyKEEN's own ``RankBasedEvaluator`` makes (inverse relations and a final sigmoid included), so kgeval's
filtered realistic ranks equal PyKEEN's.

``trained_model.pkl`` is a pickle: loading it runs code from the file, as ``torch.load`` in PyKEEN does. kgeval
refuses it (:func:`refuse_pickle`) unless the user opts in (``kgeval evaluate --trust-pickle``, or
``trust_pickle: true`` of an ``external_systems`` entry). Load only models you trust (your own).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..data.kg import TAIL, KnowledgeGraph
from ..errors import InputError, KgevalError

MODEL_FILE = "trained_model.pkl"
LABELS = "training_triples"


class PyKEENMissingError(KgevalError):
    """PyKEEN is needed and not installed."""


TRUST_HINT = ("a PyKEEN model is a full pickle, and loading it runs any code the file holds; refused. If you "
              "trained it yourself or otherwise trust it, rerun with --trust-pickle (kgeval evaluate) or set "
              "trust_pickle: true (external_systems)")


def refuse_pickle(folder: str | Path) -> None:
    raise InputError(Path(folder) / MODEL_FILE, None, TRUST_HINT)


def is_pykeen_dir(path: str | Path) -> bool:
    path = Path(path)
    return path.is_dir() and (path / MODEL_FILE).is_file()


def _import_pykeen():
    try:
        import pykeen  # noqa: F401
    except ImportError:
        raise PyKEENMissingError('reading a PyKEEN model needs PyKEEN: pip install "kgeval[pykeen]"') from None


def _label_map(path: Path, ours: list[str], what: str) -> np.ndarray:
    """PyKEEN id of each of our ids (-1 where PyKEEN does not know the label)."""
    if not path.is_file():
        raise InputError(path, None, f"missing: the {what} labels of the PyKEEN model (save_to_directory writes them "
                                     "with save_training=True)")
    df = pd.read_csv(path, sep="\t", dtype={"label": str}, keep_default_na=False)
    if not {"label", "id"} <= set(df.columns):
        raise InputError(path, 1, "expected the columns id, label (PyKEEN's to_path_binary layout)")
    out = np.full(len(ours), -1, np.int64)
    pos = pd.Index(df["label"]).get_indexer(ours)
    out[pos >= 0] = df["id"].to_numpy()[pos[pos >= 0]]
    return out


class PyKEENScorer:
    """A PyKEEN model behind kgeval's scorer interface: ``score_questions(queries, side)`` over kgeval's ids."""

    def __init__(self, model, entity_map: np.ndarray, relation_map: np.ndarray):
        self.model = model.eval()
        self.entity_map = torch.as_tensor(entity_map)
        self.relation_map = torch.as_tensor(relation_map)

    def score_questions(self, queries: torch.Tensor, side: int) -> torch.Tensor:
        e = self.entity_map[queries[:, 0].cpu()]
        r = self.relation_map[queries[:, 1].cpu()]
        with torch.no_grad():
            if side == TAIL:
                s = self.model.predict_t(torch.stack([e, r], 1))
            else:
                s = self.model.predict_h(torch.stack([r, e], 1))
        return s[:, self.entity_map].to(queries.device)  # columns in kgeval's entity order


def load_pykeen(folder: str | Path, kg: KnowledgeGraph) -> PyKEENScorer:
    """Load a ``save_to_directory`` folder for ``kg``; every entity and relation of ``kg`` must be known to the
    model (a model trained on another graph's labels is refused, naming the first unknown label)."""
    _import_pykeen()
    folder = Path(folder)
    ent = _label_map(folder / LABELS / "entity_to_id.tsv.gz", kg.entities, "entity")
    rel = _label_map(folder / LABELS / "relation_to_id.tsv.gz", kg.relations, "relation")
    for ids, labels, what in ((ent, kg.entities, "entities"), (rel, kg.relations, "relations")):
        if (ids < 0).any():
            first = labels[int(np.flatnonzero(ids < 0)[0])]
            raise InputError(folder, None, f"the PyKEEN model does not know {int((ids < 0).sum())} of the "
                                           f"{len(labels)} {what} of {kg.name} (first: {first!r})")
    try:
        model = torch.load(folder / MODEL_FILE, map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is one line naming the file
        raise InputError(folder / MODEL_FILE, None, f"cannot load the PyKEEN model: {exc}") from None
    if not hasattr(model, "predict_t"):
        raise InputError(folder / MODEL_FILE, None, f"not a PyKEEN model ({type(model).__name__})")
    return PyKEENScorer(model, ent, rel)
