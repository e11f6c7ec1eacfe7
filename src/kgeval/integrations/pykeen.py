"""kgeval's evaluation inside PyKEEN: ``pipeline(..., evaluator="kgeval")`` after ``import
kgeval.integrations.pykeen``.

    import kgeval.integrations.pykeen  # registers "kgeval" in pykeen.evaluation.evaluator_resolver
    result = pipeline(training=train, validation=valid, testing=test, model="DistMult",
                      evaluator="kgeval", evaluator_kwargs={"triples_factory": train})
    result.metric_results.get_metric("FB-Test-S-C.macro_ndcg_cut_20")

:class:`KgevalEvaluator` ranks kgeval's test sets (default FB-Test-O, FB-Test-S, FB-Test-S-C; their data are built
once when missing, as :func:`kgeval.load_testset` builds them) with the model being evaluated, through the same
scorer ``kgeval evaluate`` uses for a saved PyKEEN folder (:class:`kgeval.external.pykeen.PyKEENScorer`: entities
and relations matched by label, so the factory's ids need not equal kgeval's), kgeval's filters and realistic tie
ranks, and the same metric functions: every value equals ``kgeval evaluate`` on the same model. The keys are
``<test set>.<column>`` with the columns of ``evaluation.csv`` (``FB-Test-S-C.micro_mrr``, ``.macro_mrr``,
``.ndcg_cut_20``, ``.unjudged_10`` …), plus ``<test set>.judged_10`` (Judged@10 = 1 − unjudged@10) on a pooled
test set.

PyKEEN 1.11 has no entry-point group for evaluators (only for datasets), hence the registration on import. The
datasets group does exist: kgeval declares :class:`KgevalFB15k237` and :class:`KgevalWN18RR` there
(``pipeline(dataset="kgevalfb15k237")``), and PyKEEN imports this module to load them, which registers the evaluator
as well: in an environment where kgeval is installed, ``evaluator="kgeval"`` resolves once ``pykeen.datasets`` is
imported (as ``pykeen.pipeline`` does), with no import of kgeval.

**Early stopping.** kgeval's test sets answer only a call on the dataset's test triples (the pipeline's final
evaluation). Any other call, such as an early stopper's on the validation triples, is answered by PyKEEN's own
:class:`~pykeen.evaluation.RankBasedEvaluator` on the triples given (``hits_at_10``, ``mrr`` …), never by a
kgeval test set, and a stopper ``metric`` naming one (``FB-Test-S-C.macro_mrr``) is refused with the reason: the
judgments of FB-Test-S-C (and the answers of every test set) are test labels, and selecting a model on them
reports a test score tuned on the test set.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
from pykeen.datasets.base import EagerDataset
from pykeen.evaluation import Evaluator, MetricResults, RankBasedEvaluator, evaluator_resolver

from ..errors import KgevalError

DEFAULT_TESTSETS = ("FB-Test-O", "FB-Test-S", "FB-Test-S-C")
TEST_LABELS = ("{name}'s judgments are test labels (answers and pooled Y/N judgments of the test questions): a model "
               "selected on them by early stopping reports a test score tuned on its test set. Stop on the "
               "validation triples (PyKEEN's rank-based metrics, e.g. metric='hits_at_10'), which kgeval's "
               "evaluator answers with PyKEEN's RankBasedEvaluator")


class KgevalMetricResults(MetricResults[str]):
    """kgeval's values by ``<test set>.<column>`` (``FB-Test-S-C.macro_mrr``)."""

    metrics: Mapping = {}

    @classmethod
    def key_from_string(cls, s: str | None) -> str:
        return "FB-Test-S-C.macro_mrr" if s is None else s

    @classmethod
    def key_to_string(cls, s) -> str:
        return cls.string_or_key_to_key(s)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{test set: {column: value}}``."""
        out: dict[str, dict[str, float]] = {}
        for key, value in self.data.items():
            testset, column = key.split(".", 1)
            out.setdefault(testset, {})[column] = value
        return out

    def to_df(self):
        import pandas as pd

        rows = [(*key.split(".", 1), value) for key, value in self.data.items()]
        return pd.DataFrame(rows, columns=["TestSet", "Metric", "Value"])

    def get_metric(self, name: str) -> float:
        try:
            return self.data[self.string_or_key_to_key(name)]
        except KeyError:
            raise KgevalError(f"no kgeval metric {name!r}; keys: <test set>.<column>, e.g. "
                              f"{', '.join(list(self.data)[:4])} …") from None


class KgevalEvaluator(Evaluator[str]):
    """A PyKEEN evaluator that reports kgeval's micro and macro metrics on kgeval's test sets.

    Args:
        testsets: kgeval test sets to rank (of one dataset), e.g. ``("FB-Test-O", "FB-Test-S", "FB-Test-S-C")``.
        triples_factory: the training ``TriplesFactory`` (its ``entity_to_id`` and ``relation_to_id`` label the
            model's ids); or give ``entity_to_id`` and ``relation_to_id``.
        workdir, config: where the test sets' data are (:func:`kgeval.load_testset`).
        k: the top-k kept per question for the trec_eval measures (default: the configuration's run depth).
        name: the system's name in kgeval's tables.
    """

    metric_result_cls = KgevalMetricResults

    def __init__(self, testsets: Sequence[str] = DEFAULT_TESTSETS, triples_factory=None,
                 entity_to_id: Mapping[str, int] | None = None, relation_to_id: Mapping[str, int] | None = None,
                 workdir: str | os.PathLike = ".", config: str | os.PathLike | None = None, k: int | None = None,
                 name: str = "pykeen", batch_size: int | None = None, slice_size: int | None = None, **kwargs):
        super().__init__(filtered=True, requires_positive_mask=False, batch_size=batch_size, slice_size=slice_size,
                         **kwargs)
        if isinstance(testsets, str) or not isinstance(testsets, Sequence) or not testsets or not all(
                isinstance(t, str) for t in testsets):
            raise KgevalError(f"KgevalEvaluator testsets={testsets!r}: expected a non-empty list of kgeval test "
                              f"set names, e.g. {list(DEFAULT_TESTSETS)}")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1):
            raise KgevalError(f"KgevalEvaluator k={k!r}: expected a positive number of answers kept per question "
                              "(or None: the configuration's run depth)")
        self.testsets = list(testsets)
        if triples_factory is not None:
            if not all(isinstance(getattr(triples_factory, a, None), Mapping) for a in ("entity_to_id",
                                                                                        "relation_to_id")):
                raise KgevalError(f"KgevalEvaluator triples_factory: expected the training TriplesFactory, got "
                                  f"{type(triples_factory).__name__} {str(triples_factory)[:40]!r}")
            entity_to_id, relation_to_id = triples_factory.entity_to_id, triples_factory.relation_to_id
        if entity_to_id is None or relation_to_id is None:
            raise KgevalError("KgevalEvaluator needs the model's labels: evaluator_kwargs={'triples_factory': "
                              "<the training TriplesFactory>} (or entity_to_id and relation_to_id)")
        self.entity_to_id, self.relation_to_id = dict(entity_to_id), dict(relation_to_id)
        self.workdir, self.config, self.k, self.name = workdir, config, k, name
        self.evaluations: dict = {}  # test set -> kgeval.metrics.evaluate.Evaluation of the last evaluate()

    # the per-batch protocol: kgeval ranks whole test sets itself (evaluate), so there is nothing to accumulate
    def process_scores_(self, hrt_batch, target, scores, true_scores=None, dense_positive_mask=None) -> None:
        raise NotImplementedError("KgevalEvaluator ranks kgeval's test sets in evaluate(); it takes no batches")

    def clear(self) -> None:
        self.evaluations = {}

    def finalize(self) -> KgevalMetricResults:
        raise NotImplementedError("KgevalEvaluator ranks kgeval's test sets in evaluate()")

    def _maps(self, kg) -> tuple[np.ndarray, np.ndarray]:
        """kgeval's entity and relation ids → the model's (-1: an entity the model never saw), checked against
        the dataset: a factory of another graph, or one lacking the training entities, is refused here rather
        than producing a ranking of the wrong ids."""
        ent = np.array([self.entity_to_id.get(e, -1) for e in kg.entities], dtype=np.int64)
        rel = np.array([self.relation_to_id.get(r, -1) for r in kg.relations], dtype=np.int64)
        if (rel < 0).any():
            raise KgevalError(f"the model does not know {int((rel < 0).sum())} relations of {kg.name} (first: "
                              f"{kg.relations[int(np.flatnonzero(rel < 0)[0])]!r}): trained on another graph?")
        train = kg.splits["train"]
        unseen = np.unique(np.concatenate([train[:, 0], train[:, 2]])[ent[np.concatenate([train[:, 0],
                                                                                           train[:, 2]])] < 0])
        if unseen.size:
            raise KgevalError(f"the triples_factory lacks {unseen.size} entities of {kg.name}'s training triples "
                              f"(first: {kg.entities[int(unseen[0])]!r}): give the factory the model was trained on")
        for what, ids in (("entity", ent[ent >= 0]), ("relation", rel)):
            if np.unique(ids).size != ids.size:
                raise KgevalError(f"the triples_factory gives two {what} labels of {kg.name} the same id: "
                                  "not a factory of this dataset")
        return ent, rel

    def _split_of(self, kg, mapped_triples: torch.Tensor | None) -> str:
        """Which of the dataset's splits PyKEEN asks for: ``test`` (the final evaluation, which kgeval's test
        sets evaluate) or ``valid`` (an early stopper's, never answered with test labels). Triples that are
        neither, under the factory's labels, mean the factory is not the model's: refused, not guessed."""
        if mapped_triples is None:
            return "test"
        ent, rel = self._maps(kg)
        theirs = np.unique(mapped_triples.detach().cpu().numpy().astype(np.int64).reshape(-1, 3), axis=0)
        for split in ("test", "valid"):
            t = kg.splits[split]
            ours = np.stack([ent[t[:, 0]], rel[t[:, 1]], ent[t[:, 2]]], 1)
            ours = ours[(ours >= 0).all(1)]  # PyKEEN drops a triple whose entity its factory lacks
            if np.array_equal(np.unique(ours, axis=0), theirs):
                return split
        raise KgevalError(f"the {len(theirs)} triples PyKEEN asked to evaluate are neither the test nor the "
                          f"validation triples of {kg.name} under the triples_factory's ids: give the factory the "
                          "model was trained on (evaluator_kwargs={'triples_factory': training})")

    def evaluate(self, model, mapped_triples=None, batch_size: int | None = None, slice_size: int | None = None,
                 device=None, use_tqdm: bool = True, tqdm_kwargs=None, additional_filter_triples=None,
                 **kwargs) -> MetricResults:
        from ..api import load_testset

        collections = [load_testset(t, workdir=self.workdir, config=self.config) for t in self.testsets]
        if len({c.dataset for c in collections}) > 1:
            raise KgevalError(f"test sets of one dataset at a time: {', '.join(self.testsets)}")
        kg = collections[0].load_kg()
        if self._split_of(kg, mapped_triples) == "valid":
            return self._validation(model, mapped_triples, batch_size, slice_size, device, use_tqdm, tqdm_kwargs,
                                    additional_filter_triples, **kwargs)
        return KgevalMetricResults(self.rank(model, collections, kg))

    def rank(self, model, collections: Iterable, kg) -> dict[str, float]:
        """kgeval's metrics of ``model`` on each test collection: ``{"<test set>.<column>": value}``."""
        from ..config import run_depth
        from ..external.pykeen import PyKEENScorer
        from ..metrics.evaluate import evaluate as evaluate_dump
        from ..metrics.evaluate import qrels_at_depth
        from ..scores.dumps import load_dump
        from ..scores.steps import dump_model_scores

        ent, rel = self._maps(kg)
        was_training = model.training
        scorer = PyKEENScorer(model, ent, rel)  # sets eval mode; restored below
        out: dict[str, float] = {}
        self.evaluations = {}
        try:
            with tempfile.TemporaryDirectory(prefix="kgeval-pykeen-") as tmp:
                for tc in collections:
                    folder = Path(tmp) / tc.base
                    k = self.k or run_depth(tc.config, tc.base)
                    dump_model_scores(scorer, kg, str(tc.files["tsv"]), str(tc.files["questions"]), folder,
                                      self.name, tc.base, k=k, meta={"source": "pykeen"})
                    dump = load_dump(folder)
                    ev = evaluate_dump(dump, qrels_at_depth(dump, tc.depth), kg.relation_category,
                                       list(tc.config["evaluation"]["trec_measures"]), families=True)
                    self.evaluations[tc.name] = ev
                    for column, value in ev.summary.items():
                        if isinstance(value, int | float | np.floating | np.integer):
                            out[f"{tc.name}.{column}"] = float(value)
                    if f"{tc.name}.unjudged_10" in out:
                        out[f"{tc.name}.judged_10"] = 1.0 - out[f"{tc.name}.unjudged_10"]
        finally:
            model.train(was_training)
        return out

    def _validation(self, model, mapped_triples, batch_size, slice_size, device, use_tqdm, tqdm_kwargs,
                    additional_filter_triples, **kwargs) -> MetricResults:
        inner = RankBasedEvaluator(filtered=True)
        results = inner.evaluate(model, mapped_triples, batch_size=batch_size, slice_size=slice_size,
                                 device=device, use_tqdm=use_tqdm, tqdm_kwargs=tqdm_kwargs,
                                 additional_filter_triples=additional_filter_triples, **kwargs)
        self.batch_size, self.slice_size = inner.batch_size, inner.slice_size
        testsets = list(self.testsets)

        class ValidationResults(type(results)):
            def get_metric(self, name):
                if isinstance(name, str):
                    for t in testsets:
                        if name.startswith(t + "."):
                            raise KgevalError(f"early stopping on {name}: " + TEST_LABELS.format(name=t))
                return super().get_metric(name)

        results.__class__ = ValidationResults
        return results


class _KgevalDataset:
    """A kgeval dataset as a PyKEEN dataset (``pipeline(dataset="kgevalfb15k237")``): its train, valid and test
    splits as kgeval builds them (``load_testset``), with kgeval's entity and relation order as ids, so PyKEEN's
    ids equal kgeval's; the evaluator gets the labels from ``dataset.training``."""

    testset = "FB-Test-O"

    def __init__(self, create_inverse_triples: bool = False, workdir: str | os.PathLike = ".",
                 config: str | os.PathLike | None = None, **kwargs):
        from pykeen.triples import TriplesFactory

        from ..api import load_testset

        kg = load_testset(self.testset, workdir=workdir, config=config).load_kg()
        ids = {"entity_to_id": {e: i for i, e in enumerate(kg.entities)},
               "relation_to_id": {r: i for i, r in enumerate(kg.relations)}}
        splits = {s: TriplesFactory.from_labeled_triples(np.array(kg.decode(kg.splits[s]), dtype=str),
                                                         create_inverse_triples=create_inverse_triples, **ids)
                  for s in ("train", "valid", "test")}
        super().__init__(training=splits["train"], testing=splits["test"], validation=splits["valid"],
                         metadata={"source": f"kgeval {kg.name}"}, **kwargs)


class KgevalFB15k237(_KgevalDataset, EagerDataset):
    """FB15k-237 as kgeval builds it (its test split is FB-Test-O). Entry point ``pykeen.datasets``:
    ``kgevalfb15k237``."""

    testset = "FB-Test-O"


class KgevalWN18RR(_KgevalDataset, EagerDataset):
    """WN18RR as kgeval builds it. Entry point ``pykeen.datasets``: ``kgevalwn18rr``."""

    testset = "WN18RR"


def register() -> None:
    """Make ``evaluator="kgeval"`` resolve to :class:`KgevalEvaluator` (idempotent)."""
    if evaluator_resolver.lookup_dict.get("kgeval") is not KgevalEvaluator:
        evaluator_resolver.register(KgevalEvaluator, raise_on_conflict=False)


register()
