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

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

REL, NONREL, POOLED_UNJUDGED, UNJUDGED, ABSENT = 1, 0, -1, -2, -3
INFAP_EPSILON = 0.00001  # trec_eval's constant


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


# ---- measures ------------------------------------------------------------------------------------------------
def num_ret(run: RunRelevance, k=None) -> np.ndarray:
    """Number of documents retrieved. Range [0, K]. Source: trec_eval."""
    return (run.codes != ABSENT).sum(1).astype(float)


def num_rel(run: RunRelevance, k=None) -> np.ndarray:
    """Number of relevant documents in the qrels. Source: trec_eval."""
    return run.num_rel.astype(float)


def num_rel_ret(run: RunRelevance, k=None) -> np.ndarray:
    """Number of relevant documents retrieved. Source: trec_eval."""
    return run.isrel().sum(1).astype(float)


def P(run: RunRelevance, k: int) -> np.ndarray:
    """Precision at k: |relevant in the top k| / k (k fixed even if fewer are retrieved). Range [0, 1],
    higher is better. Source: trec_eval ``P_k``."""
    return run.rel_in_top(k) / float(k)


def recall(run: RunRelevance, k: int) -> np.ndarray:
    """Recall at k: |relevant in the top k| / |relevant|. Range [0, 1], higher is better. Source: trec_eval."""
    return _div(run.rel_in_top(k), run.num_rel)


def success(run: RunRelevance, k: int) -> np.ndarray:
    """Success at k: 1 if a relevant document is in the top k. Range {0, 1}, higher is better (the macro
    Hits@k of the study, with trec_eval's tie order). Source: trec_eval ``success_k``."""
    return (run.rel_in_top(k) > 0).astype(float)


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


def map(run: RunRelevance, k=None) -> np.ndarray:  # noqa: A001 - trec_eval's name
    """Average precision: Σ over relevant retrieved documents of precision at their rank, / |relevant|.
    Range [0, 1], higher is better. Source: trec_eval ``map``."""
    return _div(_ap_terms(run, None), run.num_rel)


def map_cut(run: RunRelevance, k: int) -> np.ndarray:
    """Average precision over the top k: Σ over relevant documents in the top k of precision at their rank,
    / |relevant|. Range [0, 1], higher is better. Source: trec_eval ``map_cut_k`` (MAP@20 of the study)."""
    return _div(_ap_terms(run, k), run.num_rel)


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


def ndcg(run: RunRelevance, k=None) -> np.ndarray:
    """nDCG over the whole run, binary gains, discount 1/log2(rank+1), ideal from all relevant documents.
    Range [0, 1], higher is better. Source: trec_eval ``ndcg`` (Järvelin & Kekäläinen 2002)."""
    return _ndcg(run, None)


def ndcg_cut(run: RunRelevance, k: int) -> np.ndarray:
    """nDCG at k: DCG of the top k over the ideal DCG of min(|relevant|, k) relevant documents.
    Range [0, 1], higher is better. Source: trec_eval ``ndcg_cut_k`` (nDCG@20 of the study)."""
    return _ndcg(run, k)


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


def unjudged(run: RunRelevance, k: int) -> np.ndarray:
    """Share of the top k with no judgment (pooled-unjudged or outside the qrels); k fixed as in P_k.
    Range [0, 1], lower means the measures rest on more judgments. Source: Sakai (2007), trec_eval ``unj``."""
    top = run.codes[:, :k]
    return ((top == UNJUDGED) | (top == POOLED_UNJUDGED)).sum(1) / float(k)


def judged(run: RunRelevance, k: int) -> np.ndarray:
    """Share of the top k that are in the qrels (relevant, judged non-relevant or pooled-unjudged), over
    min(k, |retrieved|) as ir_measures divides (0 for an empty run). Range [0, 1]. Source: ir_measures
    ``Judged@k``; its complement over k is ``unjudged`` only for runs of at least k documents."""
    top = run.codes[:, :k]
    return _div((top >= POOLED_UNJUDGED).sum(1), np.minimum((top != ABSENT).sum(1), k))


# name -> (function, takes a cutoff)
MEASURES: dict[str, tuple[Callable[..., np.ndarray], bool]] = {
    "num_ret": (num_ret, False), "num_rel": (num_rel, False), "num_rel_ret": (num_rel_ret, False),
    "P": (P, True), "recall": (recall, True), "success": (success, True), "recip_rank": (recip_rank, False),
    "map": (map, False), "map_cut": (map_cut, True), "Rprec": (Rprec, False), "ndcg": (ndcg, False),
    "ndcg_cut": (ndcg_cut, True), "bpref": (bpref, False), "infAP": (infAP, False),
    "unjudged": (unjudged, True), "judged": (judged, True),
}
# ir_measures' names (``nDCG@20``, ``AP@20``, ``RR``, ``P@10``, ``Judged@10`` …) -> trec_eval's bases; a measure
# keeps the name it was asked by, so a table's column reads as the user wrote it
IR_MEASURES_ALIASES = {"nDCG": "ndcg", "AP": "map", "RR": "recip_rank", "R": "recall", "Success": "success",
                       "Bpref": "bpref", "Rprec": "Rprec", "infAP": "infAP", "NumRet": "num_ret",
                       "NumRel": "num_rel", "NumRelRet": "num_rel_ret", "Judged": "judged", "P": "P"}
_CUT_BASE = {"ndcg": "ndcg_cut", "map": "map_cut"}  # trec_eval names cut-off versions apart
_NAME = re.compile(r"^(?P<condensed>condensed_)?(?P<base>[A-Za-z_]+?)(?:[_@](?P<k>\d+))?$")


def parse_measure(name: str) -> tuple[Callable[..., np.ndarray], int | None, bool]:
    """``"ndcg_cut_20"`` → (ndcg_cut, 20, False); ``"condensed_map_cut_20"`` → (map_cut, 20, True); ir_measures'
    ``"nDCG@20"`` → (ndcg_cut, 20, False), ``"RR"`` → (recip_rank, None, False)."""
    m = _NAME.match(name)
    base = m["base"] if m else None
    k = int(m["k"]) if m and m["k"] else None
    if base in IR_MEASURES_ALIASES:
        base = IR_MEASURES_ALIASES[base]
        if k is not None and "@" in name:  # nDCG@20 is trec_eval's ndcg_cut_20, not ndcg
            base = _CUT_BASE.get(base, base)
    if base not in MEASURES:
        raise ValueError(f"unknown trec measure {name!r}; known: {sorted(MEASURES)} or ir_measures' "
                         f"{sorted(IR_MEASURES_ALIASES)} (nDCG@20, AP@20, RR, P@10, Judged@10)")
    func, needs_k = MEASURES[base]
    if needs_k and k is None:
        raise ValueError(f"measure {name!r} needs a cutoff, e.g. {base}_10")
    if not needs_k and k is not None:
        raise ValueError(f"measure {base!r} takes no cutoff")
    return func, k, bool(m["condensed"])


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
