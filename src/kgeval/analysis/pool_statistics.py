"""The pool's statistics as the SIGIR paper gives them, and the share of positives in the systems' top 10.

Section 3.1 of the paper counts the pool (7,087 entities, 151 relations, 21,469 triples) and the triples left for
annotation after the trivial-triple filter (12,599); Section 5 gives, for its models L, A and D (systems coded
A-M by FB-Test-O micro MRR), the share of their top-10 predictions on the sampled questions that are positives,
and the share that the pooling newly labelled. The counts come from the published files (the completed test set
with its pooling depths, ``human_labeled.txt`` and ``filtered.txt``); the shares from the authors' result tables
(P@10 on FB-Test-S is the share of original positives) and from a run's top-10 lists judged by the completed
test set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..data.kg import HEAD, TAIL, keys_of
from ..data.testsets import TestSet
from ..data.tsv import iter_rows
from ..metrics.kendall import system_codes
from ..published import PAPER_POOL, PAPER_TOP10_SHARES

SHARE_COLUMNS = ["Code", "System", "Source", "Questions", "positives_top10", "original_top10", "added_top10"]


def pool_counts(complete: TestSet) -> dict[str, int]:
    """Entities, relations and triples of the pool: the judged triples that entered it at a depth ≥ 1."""
    pooled = complete.triples[complete.depth > 0]
    return {"entities": int(len(np.union1d(pooled[:, 0], pooled[:, 2]))),
            "relations": int(len(np.unique(pooled[:, 1]))), "triples": int(len(pooled))}


def triple_file_counts(path: str | Path) -> tuple[int, set[tuple[str, str, str]]]:
    """Rows of a published triple file (head, relation, tail[, label]) and its distinct triples."""
    rows = [tuple(f[:3]) for _, f in iter_rows(path, (3, 4), required=3)]
    return len(rows), set(rows)


def pool_statistics(complete: TestSet, human_labeled: str | Path, filtered: str | Path) -> pd.DataFrame:
    """The paper's pool counts beside the same counts from the published files, with the counts the paper does
    not print but the files explain (how 21,469 splits into annotated and filtered triples)."""
    counts = pool_counts(complete)
    n_human, human = triple_file_counts(human_labeled)
    n_filtered, trivial = triple_file_counts(filtered)
    pooled = complete.depth > 0
    rows = [
        ("pool entities", PAPER_POOL["entities"], counts["entities"], "completed test set, depth ≥ 1"),
        ("pool relations", PAPER_POOL["relations"], counts["relations"], "completed test set, depth ≥ 1"),
        ("pool triples", PAPER_POOL["triples"], counts["triples"], "completed test set, depth ≥ 1"),
        ("triples left after the trivial-triple filter", PAPER_POOL["after_filter"], n_human,
         f"rows of {Path(human_labeled).name}"),
        ("distinct triples among them", None, len(human), Path(human_labeled).name),
        ("trivial triples filtered (judged N unread)", None, n_filtered, f"rows of {Path(filtered).name}"),
        ("triples in both files", None, len(human & trivial), "the two files"),
        ("triples in either file", None, len(human | trivial), "the two files"),
        ("pooled triples judged Y", None, int((complete.label[pooled] == 1).sum()), "completed test set"),
        ("pooled triples judged N", None, int((complete.label[pooled] == 0).sum()), "completed test set"),
    ]
    out = pd.DataFrame(rows, columns=["Statistic", "Paper", "Data", "Source"])
    printed = out["Paper"].notna()
    out["Agrees"] = np.where(~printed, "", np.where(out["Paper"] == out["Data"], "yes", "no"))
    # a count the paper does not print stays an empty cell, not NaN
    out["Paper"] = [int(v) if ok else "" for v, ok in zip(out["Paper"], printed)]
    return out


def paper_codes(original: pd.DataFrame, metric: str = "micro_mrr") -> dict[str, str]:
    """The paper's letters: systems coded A, B, … by their FB-Test-O ``metric`` (A = best)."""
    return system_codes(list(original["System"]), original[metric].to_numpy(dtype=float), True)


def release_shares(original: pd.DataFrame, sample: pd.DataFrame, complete: pd.DataFrame) -> pd.DataFrame:
    """Per system of the authors' release: its letter, P@10 on FB-Test-S (the share of original positives in its
    top 10 on the sampled questions) and on FB-Test-S-C (over the completed set's own questions), beside the
    paper's printed shares (percent) where it discusses the system."""
    codes = paper_codes(original)
    s = sample.set_index("System")["P_10"]
    c = complete.set_index("System")["P_10"]
    rows = []
    for system, code in sorted(codes.items(), key=lambda kv: kv[1]):
        total, added = PAPER_TOP10_SHARES.get(code, (None, None))
        rows.append({"Code": code, "System": system, "release_P10_sample": float(s[system]),
                     "release_P10_complete": float(c[system]),
                     "paper_positives_top10": float(total) / 100 if total else np.nan,
                     "paper_added_top10": float(added) / 100 if added else np.nan,
                     "paper_original_top10": (float(total) - float(added)) / 100 if total else np.nan})
    return pd.DataFrame(rows)


def top10_shares(top: np.ndarray, side: np.ndarray, entity: np.ndarray, relation: np.ndarray, complete: TestSet,
                 num_entities: int, num_relations: int) -> dict[str, float]:
    """Share of the top-10 predictions (``top``: questions × 10 entity ids) that are judged positives, original
    (depth 0) and added by the pooling (depth ≥ 1), over the questions that have an original answer (the
    sampled test set's questions, as the paper counts). Unjudged predictions count as negatives."""
    key = keys_of(complete.triples[:, 0], complete.triples[:, 1], complete.triples[:, 2], num_entities,
                  num_relations)
    order = np.argsort(key, kind="stable")
    key, label, depth = key[order], complete.label[order], complete.depth[order]
    # the questions of the original answers: (side, entity, relation) of each depth-0 positive, both sides
    seeds = complete.triples[(complete.depth == 0) & (complete.label == 1)]
    seed_q = np.concatenate([keys_of(HEAD, seeds[:, 1], seeds[:, 2], num_entities, num_relations),
                             keys_of(TAIL, seeds[:, 1], seeds[:, 0], num_entities, num_relations)])
    asked = np.isin(keys_of(side, relation, entity, num_entities, num_relations), seed_q)
    top, side, entity, relation = top[asked], side[asked], entity[asked], relation[asked]
    tail = (side == TAIL)[:, None]
    e, r = entity[:, None], relation[:, None]
    cand = keys_of(np.where(tail, e, top), r, np.where(tail, top, e), num_entities, num_relations)
    pos = np.searchsorted(key, cand).clip(max=len(key) - 1)
    hit = key[pos] == cand if len(key) else np.zeros_like(cand, bool)
    positive = hit & (label[pos] == 1)
    n = top.size
    return {"Questions": int(asked.sum()),
            "positives_top10": float(positive.sum() / n) if n else np.nan,
            "original_top10": float((positive & (depth[pos] == 0)).sum() / n) if n else np.nan,
            "added_top10": float((positive & (depth[pos] > 0)).sum() / n) if n else np.nan}


def match_code(system: str, codes: dict[str, str]) -> str:
    """The paper's letter of one of our systems: the release's name matched as written, then without regard
    to case, then as its last ``-``-separated part (``fb15k-237-rotate`` is RotatE); empty when none."""
    if system in codes:
        return codes[system]
    lower = {k.lower(): v for k, v in codes.items()}
    if system.lower() in lower:
        return lower[system.lower()]
    last = {k.lower().rsplit("-", 1)[-1]: v for k, v in codes.items()}
    return last.get(system.lower(), "")


def shares_beside_paper(ours: pd.DataFrame, codes: dict[str, str]) -> pd.DataFrame:
    """Our systems' shares (one row each: System, Questions and the three shares) with the paper's letter and,
    for the systems it discusses, its printed shares as rows of their own."""
    ours = ours.assign(Code=[match_code(s, codes) for s in ours["System"]], Source="this run")
    rows = [ours[SHARE_COLUMNS]]
    named = {v: k for k, v in codes.items()}
    paper = [{"Code": code, "System": named.get(code, ""), "Source": "paper", "Questions": np.nan,
              "positives_top10": float(t) / 100, "original_top10": (float(t) - float(a)) / 100,
              "added_top10": float(a) / 100} for code, (t, a) in PAPER_TOP10_SHARES.items()]
    rows.append(pd.DataFrame(paper, columns=SHARE_COLUMNS))
    out = pd.concat(rows, ignore_index=True)
    out["_paper"] = out["Code"].isin(list(PAPER_TOP10_SHARES)).map({True: 0, False: 1})
    return out.sort_values(["_paper", "Code", "Source"], kind="stable").drop(columns="_paper").reset_index(drop=True)
