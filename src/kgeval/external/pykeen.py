"""PyKEEN models saved by ``PipelineResult.save_to_directory``, as kgeval scorers (optional: ``kgeval[pykeen]``).

Such a folder holds ``trained_model.pkl`` (the whole model, ``torch.save``) and ``training_triples/`` with the
label-to-id maps ``entity_to_id.tsv.gz`` and ``relation_to_id.tsv.gz``. Entities and relations are matched to the
dataset's by label, so PyKEEN's ids never need to equal kgeval's. Scores come from ``predict_h`` / ``predict_t``,
the calls PyKEEN's own ``RankBasedEvaluator`` makes (inverse relations and a final sigmoid included), so kgeval's
filtered realistic ranks equal PyKEEN's.

**Entities the model does not know** (a model trained on a factory built from the training split alone does not
know the entities that occur only in validation or test triples) are evaluated, not refused: the model gives
them no score, so kgeval gives each a score below every score of the row (the row's lowest score minus
max(1, its magnitude)); they tie at the bottom of every ranking and an answer among them gets the realistic rank of
that tie (the mean of its optimistic and pessimistic rank), as every tie in kgeval. A question *about* an unknown
entity cannot be scored at all: every candidate gets the same score, so its answers get the realistic rank of a
tie of all candidates. :func:`unknown_answers` counts the answers affected; ``kgeval evaluate`` states it in its
output and ``summary.md``. (PyKEEN's own evaluation drops such triples without a word.) An unknown relation is
still refused.

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
from ..limits import read_csv as bounded_read_csv
from ..models.checkpoint import load_refusal

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
    df = bounded_read_csv(path, sep="\t", dtype={"label": str}, keep_default_na=False)
    if not {"label", "id"} <= set(df.columns):
        raise InputError(path, 1, "expected the columns id, label (PyKEEN's to_path_binary layout)")
    out = np.full(len(ours), -1, np.int64)
    pos = pd.Index(df["label"]).get_indexer(ours)
    out[pos >= 0] = df["id"].to_numpy()[pos[pos >= 0]]
    return out


UNKNOWN_POLICY = ("entities unknown to a PyKEEN model score below every other candidate of the row and tie there "
                  "(realistic rank of the tie: the mean of its optimistic and pessimistic rank); a question about an "
                  "unknown entity gives every candidate the same score (all tie)")


class PyKEENScorer:
    """A PyKEEN model behind kgeval's scorer interface: ``score_questions(queries, side)`` over kgeval's ids.
    ``unknown``: kgeval's entities the model does not know (scored below every known one; module docstring)."""

    def __init__(self, model, entity_map: np.ndarray, relation_map: np.ndarray):
        self.model = model.eval()
        entity_map = np.asarray(entity_map)
        self.unknown = entity_map < 0
        self.known_cols = torch.as_tensor(np.flatnonzero(~self.unknown))
        self.entity_map = torch.as_tensor(np.where(self.unknown, 0, entity_map))  # 0: a valid id, masked below
        self.unknown_t = torch.as_tensor(self.unknown)
        self.relation_map = torch.as_tensor(relation_map)

    def score_questions(self, queries: torch.Tensor, side: int) -> torch.Tensor:
        qe = queries[:, 0].cpu()
        e = self.entity_map[qe]
        r = self.relation_map[queries[:, 1].cpu()]
        with torch.no_grad():
            if side == TAIL:
                s = self.model.predict_t(torch.stack([e, r], 1))
            else:
                s = self.model.predict_h(torch.stack([r, e], 1))
        s = s[:, self.entity_map].to(torch.float32)  # columns in kgeval's entity order
        if self.unknown.any():
            low = s[:, self.known_cols].min(dim=1, keepdim=True).values
            floor = low - torch.clamp(low.abs(), min=1.0)
            s = torch.where(self.unknown_t[None, :], floor, s)
            s[self.unknown_t[qe]] = 0.0  # a question about an unknown entity: no score, every candidate ties
        return s.to(queries.device)


def unknown_answers(unknown: np.ndarray, dump, per_answer: pd.DataFrame) -> int:
    """Answers whose entity, or whose question's entity, the model does not know (``unknown``: a mask over
    kgeval's entity ids)."""
    if not unknown.any() or not len(per_answer):
        return 0
    qpos = pd.Index(np.asarray(dump.questions.qid, dtype=object)).get_indexer(per_answer["qid"].to_numpy())
    asked = np.asarray(dump.questions.entity)[qpos]
    return int((unknown[per_answer["entity"].to_numpy()] | unknown[asked]).sum())


def load_pykeen(folder: str | Path, kg: KnowledgeGraph) -> PyKEENScorer:
    """Load a ``save_to_directory`` folder for ``kg``. Entities of ``kg`` the model does not know are scored
    below every known one (module docstring); an unknown relation is refused, naming the first."""
    _import_pykeen()
    folder = Path(folder)
    ent = _label_map(folder / LABELS / "entity_to_id.tsv.gz", kg.entities, "entity")
    rel = _label_map(folder / LABELS / "relation_to_id.tsv.gz", kg.relations, "relation")
    if (ent < 0).all():
        raise InputError(folder, None, f"the PyKEEN model knows none of the {len(ent)} entities of {kg.name}: "
                                       "trained on another graph?")
    if (rel < 0).any():
        first = kg.relations[int(np.flatnonzero(rel < 0)[0])]
        raise InputError(folder, None, f"the PyKEEN model does not know {int((rel < 0).sum())} of the "
                                       f"{len(rel)} relations of {kg.name} (first: {first!r})")
    try:
        model = torch.load(folder / MODEL_FILE, map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is one line naming the file
        raise InputError(folder / MODEL_FILE, None, f"cannot load the PyKEEN model: {load_refusal(exc)}") from None
    if not hasattr(model, "predict_t"):
        raise InputError(folder / MODEL_FILE, None, f"not a PyKEEN model ({type(model).__name__})")
    return PyKEENScorer(model, ent, rel)
