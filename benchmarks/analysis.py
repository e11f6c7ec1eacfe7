"""The whole stability analysis of Figure 7 — 13 systems, the study's micro and macro metrics, 20 subset sizes ×
50 repeats, three test sets of the real sizes (FB-Test-O, WN18RR, FB-Test-S-C) — from per-item score vectors,
timed; and, measured in the same run on a few subsets, the naive way (index the subset, average each system,
scipy's kendalltau), extrapolated to the whole analysis. Target (issue 6): ≤ 60 s.

    python benchmarks/analysis.py
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from _common import heartbeat_main
from scipy import stats

from kgeval.analysis.items import ItemTable
from kgeval.analysis.resampling import DEFAULT_SIZES
from kgeval.analysis.study import stability

SIZES = {"FB-Test-O": (20466, 22850), "WN18RR": (3134, 5716), "FB-Test-S-C": (2738, 2883)}
MICRO = ["micro_mrr", "micro_hits@10"]
MACRO = ["macro_mrr", "macro_hits@10", "map_cut_20", "ndcg_cut_20"]
SYSTEMS = [f"S{i}" for i in range(13)]


def tables(rng) -> dict[str, list[ItemTable]]:
    out = {}
    for name, (triples, questions) in SIZES.items():
        answers = 2 * triples
        micro_units = np.arange(answers) // 2
        # questions: every triple asks two; spread the triples' questions over the question ids
        q_of_answer = rng.integers(0, questions, size=answers)
        q_of_answer[:questions] = np.arange(questions)
        order = np.argsort(q_of_answer, kind="stable")
        bounds = np.searchsorted(q_of_answer[order], np.arange(questions + 1))
        macro_units = [micro_units[order[bounds[i]:bounds[i + 1]]] for i in range(questions)]
        skill = np.linspace(0.2, 0.35, 13)
        mi = {m: np.clip(skill + rng.normal(0, 0.3, size=(answers, 13)), 0, 1) for m in MICRO}
        ma = {m: np.clip(skill + rng.normal(0, 0.3, size=(questions, 13)), 0, 1) for m in MACRO}
        out[name] = [ItemTable(SYSTEMS, mi, micro_units, pd.DataFrame(index=range(answers)), triples),
                     ItemTable(SYSTEMS, ma, macro_units, pd.DataFrame(index=range(questions)), triples)]
    return out


def naive(item_tables: dict[str, list[ItemTable]], rng, subsets: int = 20) -> float:
    """Seconds per (subset, metric) the straightforward way, on a few subsets of FB-Test-O."""
    mi, ma = item_tables["FB-Test-O"]
    full = {m: t.matrices[m].mean(0) for t in (mi, ma) for m in t.matrices}
    t0 = time.perf_counter()
    n = 0
    for _ in range(subsets):
        chosen = set(rng.choice(mi.n_units, size=mi.n_units // 2, replace=False).tolist())
        keep_a = np.array([u in chosen for u in mi.units])
        keep_q = np.array([any(u in chosen for u in units) for units in ma.units])
        for t, keep in ((mi, keep_a), (ma, keep_q)):
            for m, X in t.matrices.items():
                stats.kendalltau(X[keep].mean(0), full[m])
                n += 1
    return (time.perf_counter() - t0) / n


def main() -> None:
    rng = np.random.default_rng(0)
    t = tables(rng)
    metrics = {name: MICRO + MACRO for name in t}
    t0 = time.perf_counter()
    stab = stability(t, metrics, DEFAULT_SIZES, repeats=50, seed=0)
    ours = time.perf_counter() - t0
    per = naive(t, rng)
    total_naive = per * len(DEFAULT_SIZES) * 50 * len(t) * (len(MICRO) + len(MACRO))
    print(f"stability analysis: {len(stab)} taus ({len(DEFAULT_SIZES)} sizes x 50 repeats x {len(t)} test sets x "
          f"{len(MICRO) + len(MACRO)} metrics, 13 systems) in {ours:.1f} s (target <= 60 s)")
    print(f"naive per-subset loop: {per * 1000:.1f} ms per (subset, metric) -> {total_naive:.0f} s extrapolated; "
          f"speed-up {total_naive / ours:.1f}x")
    sys.exit(0 if ours <= 60 else 1)


if __name__ == "__main__":
    heartbeat_main(main, __file__)
