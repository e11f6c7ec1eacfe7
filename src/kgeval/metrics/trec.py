"""trec_eval measures, vectorised over all questions at once.

Input is a run in trec_eval's order (score descending, then docno descending) as a (Q × K) matrix of
relevance codes, one row per question:

* ``REL`` (1): judged relevant; ``NONREL`` (0): judged non-relevant;
* ``POOLED_UNJUDGED`` (−1): in the pool but not judged (trec_eval's qrels value −1, used by infAP);
* ``UNJUDGED`` (−2): not in the qrels at all;
* ``ABSENT`` (−3): no document at this position (the run has fewer than K candidates).

Each measure is one function named as trec_eval names it (``map``, ``map_cut_20``, ``P_10``, ``ndcg_cut_20``,
``recip_rank``, ``Rprec``, ``bpref``, ``infAP``, ``recall_100``, ``success_10``, ``num_ret`` …) and returns one
value per question, equal to what trec_eval (pytrec_eval) computes for that question; ``tests/test_trec.py``
checks every one against pytrec_eval on runs with ties, short runs and unjudged documents. Beyond trec_eval:
``unjudged@k`` (share of the top k with no judgment) and ``condensed_*`` variants (Sakai 2007: unjudged
documents removed from the list before measuring).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import MeasureError
from . import names

REL, NONREL, POOLED_UNJUDGED, UNJUDGED, ABSENT = 1, 0, -1, -2, -3
INFAP_EPSILON = 0.00001  # trec_eval's constant
INF = math.inf


@dataclass
class RunRelevance:
    """Relevance codes of a run, with the per-question counts some measures need."""

    codes: np.ndarray  # (Q, K) int8
    num_rel: np.ndarray  # (Q,) relevant documents in the qrels
    num_nonrel: np.ndarray  # (Q,) judged non-relevant documents in the qrels

    def __post_init__(self):
        self.codes = np.asarray(self.codes, dtype=np.int8)
        self._cache: dict = {}

    @property
    def K(self) -> int:
        return self.codes.shape[1]

    def isrel(self) -> np.ndarray:
        if "isrel" not in self._cache:
            self._cache["isrel"] = self.codes >= REL
        return self._cache["isrel"]

    def cumrel(self) -> np.ndarray:
        if "cumrel" not in self._cache:
            self._cache["cumrel"] = np.cumsum(self.isrel(), axis=1, dtype=np.int32)
        return self._cache["cumrel"]

    def rel_in_top(self, k: int) -> np.ndarray:
        if self.K == 0:
            return np.zeros(len(self.codes), np.int64)
        return self.cumrel()[:, min(k, self.K) - 1].astype(np.int64)

    def condensed(self) -> RunRelevance:
        """The same run with unjudged documents removed (the order of the judged ones kept)."""
        unj = (self.codes == UNJUDGED) | (self.codes == POOLED_UNJUDGED) | (self.codes == ABSENT)
        order = np.argsort(unj, axis=1, kind="stable")
        codes = np.take_along_axis(self.codes, order, axis=1)
        codes = np.where(np.take_along_axis(unj, order, axis=1), ABSENT, codes)
        return RunRelevance(codes, self.num_rel, self.num_nonrel)


def _div(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)


@dataclass(frozen=True)
class TrecMeasure:
    """A trec_eval measure, declared once above its function: the label (``{k}``: the cutoff), whether it takes
    a cutoff, direction, value range, family (``trec``, ``diagnostic`` or ``count``) and the further names it
    answers to (ir_measures'). :mod:`kgeval.metrics.registry` reads these; the function's name is trec_eval's."""

    function: Callable[..., np.ndarray]
    label: str
    cutoff: bool = False
    higher_is_better: bool = True
    value_range: tuple[float, float] = (0.0, 1.0)
    family: str = "trec"
    synonyms: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.function.__name__


DECLARED: dict[str, TrecMeasure] = {}  # trec_eval name -> declaration, in the order of this module
_PLAIN: names.Lookup[TrecMeasure] = names.Lookup("trec measure")
_CUT: names.Lookup[TrecMeasure] = names.Lookup("trec measure with a cutoff")


def declare(label: str, cutoff: bool = False, higher_is_better: bool = True,
            value_range: tuple[float, float] = (0.0, 1.0), family: str = "trec", synonyms: tuple[str, ...] = ()):
    """Declare the decorated function a trec measure (counts have no quality direction: "higher" keeps them
    in the orientation of num_rel_ret)."""
    def wrap(function):
        decl = TrecMeasure(function, label, cutoff, higher_is_better, value_range, family, tuple(synonyms))
        DECLARED[decl.name] = decl
        (_CUT if cutoff else _PLAIN).register(decl, (decl.name, *synonyms))
        return function
    return wrap


# ---- measures ------------------------------------------------------------------------------------------------
@declare("Retrieved", family="count", value_range=(0.0, INF), synonyms=("NumRet",))
def num_ret(run: RunRelevance, k=None) -> np.ndarray:
    """Number of documents retrieved. Range [0, K]. Source: trec_eval."""
    return (run.codes != ABSENT).sum(1).astype(float)


@declare("Relevant", family="count", value_range=(0.0, INF), synonyms=("NumRel",))
def num_rel(run: RunRelevance, k=None) -> np.ndarray:
    """Number of relevant documents in the qrels. Source: trec_eval."""
    return run.num_rel.astype(float)


@declare("Relevant retrieved", family="count", value_range=(0.0, INF), synonyms=("NumRelRet",))
def num_rel_ret(run: RunRelevance, k=None) -> np.ndarray:
    """Number of relevant documents retrieved. Source: trec_eval."""
    return run.isrel().sum(1).astype(float)


@declare("P@{k}", cutoff=True)
def P(run: RunRelevance, k: int) -> np.ndarray:
    """Precision at k: |relevant in the top k| / k (k fixed even if fewer are retrieved). Range [0, 1],
    higher is better. Source: trec_eval ``P_k``."""
    return run.rel_in_top(k) / float(k)


@declare("Recall@{k}", cutoff=True, synonyms=("R",))
def recall(run: RunRelevance, k: int) -> np.ndarray:
    """Recall at k: |relevant in the top k| / |relevant|. Range [0, 1], higher is better. Source: trec_eval."""
    return _div(run.rel_in_top(k), run.num_rel)


@declare("Success@{k}", cutoff=True)
def success(run: RunRelevance, k: int) -> np.ndarray:
    """Success at k: 1 if a relevant document is in the top k. Range {0, 1}, higher is better (the macro
    Hits@k of the study, with trec_eval's tie order). Source: trec_eval ``success_k``."""
    return (run.rel_in_top(k) > 0).astype(float)


@declare("MRR (trec_eval)", synonyms=("RR",))
def recip_rank(run: RunRelevance, k=None) -> np.ndarray:
    """Reciprocal rank of the first relevant document (0 if none is retrieved). Range [0, 1], higher is
    better. Source: trec_eval ``recip_rank`` (the macro MRR of the study, with trec_eval's tie order)."""
    isrel = run.isrel()
    has = isrel.any(1)
    first = np.argmax(isrel, axis=1)
    return np.where(has, 1.0 / (first + 1), 0.0)


def _ap_terms(run: RunRelevance, k: int | None) -> np.ndarray:
    K = run.K if k is None else min(k, run.K)
    isrel = run.isrel()[:, :K]
    prec = run.cumrel()[:, :K] / np.arange(1, K + 1)
    return np.where(isrel, prec, 0.0).sum(1)


@declare("MAP", synonyms=("AP",))
def map(run: RunRelevance, k=None) -> np.ndarray:  # noqa: A001 - trec_eval's name
    """Average precision: Σ over relevant retrieved documents of precision at their rank, / |relevant|.
    Range [0, 1], higher is better. Source: trec_eval ``map``."""
    return _div(_ap_terms(run, None), run.num_rel)


@declare("MAP@{k}", cutoff=True, synonyms=("AP", "map"))
def map_cut(run: RunRelevance, k: int) -> np.ndarray:
    """Average precision over the top k: Σ over relevant documents in the top k of precision at their rank,
    / |relevant|. Range [0, 1], higher is better. Source: trec_eval ``map_cut_k`` (MAP@20 of the study)."""
    return _div(_ap_terms(run, k), run.num_rel)


@declare("R-prec")
def Rprec(run: RunRelevance, k=None) -> np.ndarray:
    """R-precision: |relevant in the top R| / R, R = |relevant|. Range [0, 1], higher is better.
    Source: trec_eval ``Rprec``."""
    if run.K == 0:
        return np.zeros(len(run.codes))
    R = run.num_rel.astype(np.int64)
    col = np.clip(np.minimum(R, run.K) - 1, 0, None)
    hits = np.take_along_axis(run.cumrel(), col[:, None], axis=1)[:, 0]
    return _div(np.where(R > 0, hits, 0), R)


def _discounts(n: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, n + 2))


def _ndcg(run: RunRelevance, k: int | None) -> np.ndarray:
    K = run.K if k is None else min(k, run.K)
    gains = run.isrel()[:, :K]
    dcg = (gains * _discounts(K)).sum(1)
    n_ideal = run.num_rel.astype(np.int64) if k is None else np.minimum(run.num_rel.astype(np.int64), k)
    ideal_cum = np.concatenate([[0.0], np.cumsum(_discounts(int(max(n_ideal.max(initial=0), 1))))])
    return _div(dcg, ideal_cum[n_ideal])


@declare("nDCG")
def ndcg(run: RunRelevance, k=None) -> np.ndarray:
    """nDCG over the whole run, binary gains, discount 1/log2(rank+1), ideal from all relevant documents.
    Range [0, 1], higher is better. Source: trec_eval ``ndcg`` (Järvelin & Kekäläinen 2002)."""
    return _ndcg(run, None)


@declare("nDCG@{k}", cutoff=True, synonyms=("nDCG",))
def ndcg_cut(run: RunRelevance, k: int) -> np.ndarray:
    """nDCG at k: DCG of the top k over the ideal DCG of min(|relevant|, k) relevant documents.
    Range [0, 1], higher is better. Source: trec_eval ``ndcg_cut_k`` (nDCG@20 of the study)."""
    return _ndcg(run, k)


@declare("bpref")
def bpref(run: RunRelevance, k=None) -> np.ndarray:
    """bpref: 1/R Σ over relevant retrieved r of (1 − min(|judged non-relevant above r|, R) / min(R, N)),
    R = |relevant|, N = |judged non-relevant|. Range [0, 1], higher is better. Unjudged documents do not
    count. Source: Buckley & Voorhees (2004), trec_eval ``bpref``."""
    isrel = run.isrel()
    nonrel_above = np.cumsum(run.codes == NONREL, axis=1, dtype=np.int64)  # current one is relevant: same
    R = run.num_rel.astype(np.int64)[:, None]
    denom = np.minimum(R, run.num_nonrel.astype(np.int64)[:, None])
    frac = np.divide(np.minimum(nonrel_above, R), denom, out=np.zeros(isrel.shape), where=denom > 0)
    terms = np.where(isrel, np.where(nonrel_above > 0, 1.0 - frac, 1.0), 0.0)
    return _div(terms.sum(1), run.num_rel)


@declare("infAP")
def infAP(run: RunRelevance, k=None) -> np.ndarray:
    """Inferred AP (Yilmaz & Aslam 2006) as trec_eval computes it: documents not in the qrels are outside the
    pool and count as non-relevant; pooled-but-unjudged documents (qrels value −1) are assumed relevant in
    the same proportion as the judged ones above them. Range [0, 1], higher is better."""
    codes = run.codes
    isrel = run.isrel()
    rel_so_far = run.cumrel().astype(float)  # inclusive: the current document is relevant
    nonrel_so_far = np.cumsum(codes == NONREL, axis=1)
    unj_so_far = np.cumsum(codes == POOLED_UNJUDGED, axis=1)
    j = np.arange(run.K, dtype=float)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_so_far - 1 + nonrel_so_far + unj_so_far) / j) * (
            (rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON))
    term = np.where(j == 0, 1.0, term)
    return _div(np.where(isrel, term, 0.0).sum(1), run.num_rel)


@declare("Unjudged@{k}", cutoff=True, higher_is_better=False, family="diagnostic")
def unjudged(run: RunRelevance, k: int) -> np.ndarray:
    """Share of the top k with no judgment (pooled-unjudged or outside the qrels); k fixed as in P_k.
    Range [0, 1], lower means the measures rest on more judgments. Source: Sakai (2007), trec_eval ``unj``."""
    top = run.codes[:, :k]
    return ((top == UNJUDGED) | (top == POOLED_UNJUDGED)).sum(1) / float(k)


@declare("Judged@{k}", cutoff=True, family="diagnostic")
def judged(run: RunRelevance, k: int) -> np.ndarray:
    """Share of the top k that are in the qrels (relevant, judged non-relevant or pooled-unjudged), over
    min(k, |retrieved|) as ir_measures divides (0 for an empty run). Range [0, 1]. Source: ir_measures
    ``Judged@k``; its complement over k is ``unjudged`` only for runs of at least k documents."""
    top = run.codes[:, :k]
    return _div((top >= POOLED_UNJUDGED).sum(1), np.minimum((top != ABSENT).sum(1), k))


def resolve(name: str) -> tuple[TrecMeasure, int | None, bool]:
    """(declaration, cutoff, condensed) of a trec_eval name (``ndcg_cut_20``, ``condensed_map_cut_20``) or an
    ir_measures name (``nDCG@20``, ``AP``, ``RR``, ``P@10``, ``Judged@10``); case does not matter. An
    ir_measures synonym of a cut measure takes its cutoff after ``@`` (``AP@20`` is ``map_cut_20``); after
    ``_`` only trec_eval's own name does (``map_5`` is refused: trec_eval writes ``map_cut_5``)."""
    base, k = names.split(name)
    condensed = base.lower().startswith("condensed_")
    if condensed:
        base = base[len("condensed_"):]
    decl = None
    if k is not None:
        decl = _CUT.get(base)
        if decl is not None and "@" not in name and names.normalize(base) != names.normalize(decl.name):
            decl = None
    else:
        decl = _PLAIN.get(base)
    if decl is not None:
        return decl, k, condensed
    if k is not None and base in _PLAIN:
        raise MeasureError(name, f"{_PLAIN.get(base).name} takes no cutoff")
    if k is None and base in _CUT:
        raise MeasureError(name, f"needs a cutoff, e.g. {_CUT.get(base).name}_10 or {base}@10")
    raise MeasureError(name, "known: trec_eval's " + ", ".join(
        d.name + ("_k" if d.cutoff else "") for d in DECLARED.values())
        + " or ir_measures' nDCG@20, AP@20, RR, P@10, R@100, Success@10, Judged@10, Bpref, NumRet",
        what="unknown trec measure")


def parse_measure(name: str) -> tuple[Callable[..., np.ndarray], int | None, bool]:
    """``"ndcg_cut_20"`` → (ndcg_cut, 20, False); ``"condensed_map_cut_20"`` → (map_cut, 20, True); ir_measures'
    ``"nDCG@20"`` → (ndcg_cut, 20, False), ``"RR"`` → (recip_rank, None, False). An unknown name or a bad
    cutoff raises :class:`~kgeval.errors.MeasureError` (a ``ValueError``)."""
    decl, k, condensed = resolve(name)
    return decl.function, k, condensed


def column(name: str) -> str:
    """The trec_eval column a name stands for: ``nDCG@20`` → ``ndcg_cut_20``, ``RR`` → ``recip_rank``."""
    decl, k, condensed = resolve(name)
    return ("condensed_" if condensed else "") + decl.name + (f"_{k}" if k is not None else "")


def lookup(base: str, cutoff: bool) -> TrecMeasure | None:
    """The declaration a name part (no cutoff) stands for, with or without a cutoff; None if none."""
    return (_CUT if cutoff else _PLAIN).get(base)


def reciprocal_rank_at(recip_rank_values: np.ndarray, k: int) -> np.ndarray:
    """RR@k (ir_measures' ``RR@k``) from per-question ``recip_rank`` values: the reciprocal rank of the first
    relevant document when it lies within the top k, 0 beyond."""
    values = np.asarray(recip_rank_values, dtype=np.float64)
    return np.where(values >= 1.0 / k, values, 0.0)


def evaluate_run(run: RunRelevance, measures: list[str]) -> dict[str, np.ndarray]:
    """Per-question values of each named measure."""
    out = {}
    condensed = None
    for name in measures:
        func, k, cond = parse_measure(name)
        target = run
        if cond:
            condensed = condensed or run.condensed()
            target = condensed
        out[name] = func(target, k)
    return out


def pair_lookup(q: np.ndarray, entity: np.ndarray, jq: np.ndarray, jentity: np.ndarray, values: np.ndarray,
                num_entities: int, missing: int) -> np.ndarray:
    """Per (q, entity) pair (arrays of one shape), the value of the row of (jq, jentity, values) with the same
    pair; ``missing`` where there is none. One sort of the rows' keys and a binary search, no loop."""
    keys = np.asarray(jq, dtype=np.int64) * num_entities + np.asarray(jentity, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    skeys, svals = keys[order], np.asarray(values)[order]
    key = np.asarray(q, dtype=np.int64) * num_entities + np.asarray(entity, dtype=np.int64)
    out = np.full(key.shape, missing, dtype=np.result_type(svals.dtype, np.asarray(missing).dtype))
    if skeys.size:
        pos = np.minimum(np.searchsorted(skeys, key), skeys.size - 1)
        found = skeys[pos] == key
        out[found] = svals[pos[found]]
    return out


def relevance_codes(run_entity: np.ndarray, q_index: np.ndarray, qrel_q: np.ndarray, qrel_entity: np.ndarray,
                    qrel_rel: np.ndarray, num_entities: int) -> RunRelevance:
    """Build the relevance codes of a run from qrels rows (question, entity, rel ∈ {1, 0, −1}).

    ``run_entity`` is (Q', K) with −1 for absent positions, ``q_index`` the question index of each row.
    """
    present = run_entity >= 0
    codes = pair_lookup(np.broadcast_to(q_index[:, None], run_entity.shape), np.where(present, run_entity, 0),
                        qrel_q, qrel_entity, np.asarray(qrel_rel, dtype=np.int8), num_entities, UNJUDGED)
    codes = np.where(present, codes, ABSENT).astype(np.int8)
    nq = int(max(q_index.max(initial=-1), qrel_q.max(initial=-1))) + 1
    n_rel = np.bincount(qrel_q[qrel_rel >= REL], minlength=nq)[q_index]
    n_nonrel = np.bincount(qrel_q[qrel_rel == NONREL], minlength=nq)[q_index]
    return RunRelevance(codes, n_rel, n_nonrel)


DEFAULT_MEASURES = ["map", "map_cut_20", "ndcg", "ndcg_cut_10", "ndcg_cut_20", "P_1", "P_5", "P_10", "P_20",
                    "recip_rank", "Rprec", "recall_10", "recall_100", "success_1", "success_10", "bpref",
                    "infAP", "num_ret", "num_rel", "num_rel_ret"]
