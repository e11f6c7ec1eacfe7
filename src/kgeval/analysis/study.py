"""The study's analyses as tidy tables (one function per table or figure of the paper, plus the additions).

Inputs are the metric stage's tables (``evaluation.csv``, ``lp_per_rel_type.csv``, ``pooling_depth*.csv``,
``lp_sample_rel_dist.csv``) and, where intervals or resampling need them, per-item matrices
(``kgeval.analysis.items``). Every τ is Kendall's τ-b between the system rankings of two tables on the same
systems; where per-item values exist it comes with a BCa bootstrap 95 % interval from resampling the
items (answers or questions) of each side.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.kg import CATEGORIES, KnowledgeGraph
from ..metrics.kendall import system_codes, tau_b
from ..metrics.registry import higher_is_better
from .items import ItemTable
from .resampling import DEFAULT_SIZES, bootstrap_tau, order_interval, stability_taus, subsample_masks
from .significance import discriminative_power, paired_t_pvalues, tukey_hsd_pvalues


def tau_between(a: pd.DataFrame, b: pd.DataFrame, metric: str, metric_b: str | None = None) -> float:
    """τ-b between the system rankings of two tables (systems matched by name)."""
    metric_b = metric_b or metric
    systems = [s for s in a["System"] if s in set(b["System"])]
    x = a.set_index("System").loc[systems, metric].to_numpy(dtype=float)
    y = b.set_index("System").loc[systems, metric_b].to_numpy(dtype=float)
    return tau_b(x, y, higher_is_better(metric), higher_is_better(metric_b))


def with_interval(row: dict, items_a: np.ndarray | None, items_b: np.ndarray | None, repeats: int,
                  seed: int, keys_a: np.ndarray | None = None, keys_b: np.ndarray | None = None) -> dict:
    """``row`` with the BCa bootstrap interval of its τ; paired through the item keys when both sides have
    them (the sampled and the completed test set share most answers and questions)."""
    if items_a is None or items_b is None:
        return {**row, "tau_low": np.nan, "tau_high": np.nan}
    _, lo, hi = bootstrap_tau(items_a, items_b, repeats, seed, keys_a=keys_a, keys_b=keys_b)
    return {**row, "tau_low": lo, "tau_high": hi}


# ---- Figure 3 -----------------------------------------------------------------------------------------------
def figure3(evals: dict[str, pd.DataFrame], reference: str, metric: str = "micro_mrr") -> pd.DataFrame:
    """``metric`` of every system on each test set, systems coded A, B, … by the reference test set (A = best)
    and ordered that way (the paper's Figure 3)."""
    ref = evals[reference]
    codes = system_codes(list(ref["System"]), ref[metric].to_numpy(), higher_is_better(metric))
    rows = []
    for name, df in evals.items():
        for system, value in zip(df["System"], df[metric]):
            rows.append({"System": system, "Code": codes.get(system, "?"), "TestSet": name, metric: value})
    return pd.DataFrame(rows).sort_values(["Code", "TestSet"]).reset_index(drop=True)


# ---- Figures 4 and 5 ----------------------------------------------------------------------------------------
def depth_taus(depth_table: pd.DataFrame, metrics: list[str], flavour: str,
               items: dict[int, ItemTable] | None = None, item_kind: dict[str, str] | None = None,
               repeats: int = 1000, seed: int = 0) -> pd.DataFrame:
    """τ between the system ranking at depth 0 (the sampled test set) and at every depth d ≥ 1 (Figure 4:
    micro MR, MRR, Hits@1/3/10; Figure 5: micro vs macro MRR and Hits@10). ``items[d]`` holds per-item
    matrices at depth d for intervals."""
    base = depth_table[depth_table["Depth"] == 0]
    rows = []
    for d in sorted(depth_table["Depth"].unique()):
        if d == 0:
            continue
        cur = depth_table[depth_table["Depth"] == d]
        for m in metrics:
            row = {"Flavour": flavour, "Depth": int(d), "Metric": m, "tau": tau_between(base, cur, m)}
            a = items.get(0) if items else None
            b = items.get(int(d)) if items else None
            rows.append(with_interval(row, a.matrices.get(m) if a else None, b.matrices.get(m) if b else None,
                                      repeats, seed + int(d), a.keys.get(m) if a else None,
                                      b.keys.get(m) if b else None))
    return pd.DataFrame(rows)


# The bounds stage's per-question metrics that Figure 5's macro curves are (Hits@10 is Success@10; MRR cut at k
# is RR@k): its τ intervals and the prior's expected τ are drawn beside them. Kinds of Figure 5's rows:
MEASURED, EVERY_LABELLING, UNDER_PRIOR = "measured", "every labelling", "expected under prior"
BOUNDS_OVERLAY = {"Success": "macro_hits@10", "RR": "macro_mrr"}  # bounded metric -> the curve it is drawn with


def bounds_overlay(tau: pd.DataFrame, prior: pd.DataFrame | None = None,
                   bases: dict[str, str] = BOUNDS_OVERLAY) -> pd.DataFrame:
    """Figure 5's rows from the bounds stage (``results/bounds/<test set>/tau.csv`` and ``tau_prior.csv``): per
    flavour and depth the τ-a interval that every labelling of the unjudged triples allows (``tau`` is today's
    τ-a, unjudged = not relevant), and at the prior's depth the mean τ-b under the calibrated relevance prior with
    its 95 % interval (the prior is fitted on the published judgments only). ``Curve`` names the measured
    curve each row belongs beside."""
    cols = ["Flavour", "Depth", "Metric", "tau", "tau_low", "tau_high", "Kind", "Curve"]
    rows = []
    for base, curve in bases.items():
        sub = tau[tau["Metric"].str.startswith(f"{base}@")]
        if sub.empty:
            continue
        name = f"macro {sub['Metric'].iloc[0]}"
        rows += [(r.Flavour, int(r.Depth), name, r.tau_a_today, r.tau_lo, r.tau_hi, EVERY_LABELLING, curve)
                 for r in sub.itertuples(index=False)]
        if prior is not None:
            rows += [("published", int(r.Depth), name, r.tau_mean, r.tau_lo_95, r.tau_hi_95, UNDER_PRIOR, curve)
                     for r in prior[prior["Metric"] == base].itertuples(index=False)]
    return pd.DataFrame(rows, columns=cols)


# ---- Table 3 ------------------------------------------------------------------------------------------------
def category_taus(per_type_a: pd.DataFrame, per_type_b: pd.DataFrame, metrics: list[str],
                  items_a: ItemTable | None = None, items_b: ItemTable | None = None, repeats: int = 1000,
                  seed: int = 0) -> pd.DataFrame:
    """τ between two test sets' system rankings per question side × relation category (Table 3)."""
    rows = []
    for side in ("head", "tail"):
        for cat in CATEGORIES:
            a = per_type_a[(per_type_a["QuestionType"] == side) & (per_type_a["RelationType"] == cat)]
            b = per_type_b[(per_type_b["QuestionType"] == side) & (per_type_b["RelationType"] == cat)]
            if a.empty or b.empty:
                continue
            for m in metrics:
                row = {"QuestionType": side, "RelationType": cat, "Metric": m, "tau": tau_between(a, b, m)}
                ia = ib = ka = kb = None
                if items_a is not None and items_b is not None:
                    ma = ((items_a.info["side"] == side) & (items_a.info["category"] == cat)).to_numpy()
                    mb = ((items_b.info["side"] == side) & (items_b.info["category"] == cat)).to_numpy()
                    ia, ib = items_a.matrices[m][ma], items_b.matrices[m][mb]
                    if m in items_a.keys and m in items_b.keys:
                        ka, kb = items_a.keys[m][ma], items_b.keys[m][mb]
                rows.append(with_interval(row, ia, ib, repeats, seed, ka, kb))
    return pd.DataFrame(rows)


# ---- Table 4 ------------------------------------------------------------------------------------------------
def reweighting_taus(sample: pd.DataFrame, complete: pd.DataFrame, reweighted: pd.DataFrame,
                     metrics: list[str]) -> pd.DataFrame:
    """τ with the sampled test set of the completed set's micro metrics: as they are ("Complete") and with each
    relation weighted by its share in the sampled set ("Sparse"), the paper's Table 4."""
    rows = []
    for label, table in (("Complete", complete), ("Sparse", reweighted)):
        row = {"Distribution": label}
        for m in metrics:
            row[m] = tau_between(sample, table, m)
        rows.append(row)
    return pd.DataFrame(rows)


def reweighted_weights(relation_b: np.ndarray, relation_reference: np.ndarray) -> np.ndarray:
    """Per-item weights of a test set's answers so that relation p's answers together weigh p's share in the
    reference test set (``metrics.evaluate.answer_weights`` with ``relation_shares`` of the reference)."""
    rel, counts = np.unique(np.asarray(relation_reference), return_counts=True)
    share = dict(zip(rel.tolist(), (counts / counts.sum()).tolist()))
    ids, inverse, n = np.unique(np.asarray(relation_b), return_inverse=True, return_counts=True)
    return (np.array([share.get(int(r), 0.0) for r in ids]) / n)[inverse]


CLAIM_TAU_COLUMNS = ["Statistic", "Metric", "tau", "tau_low", "tau_high"]


def claim_taus(pairs: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray | None]],
               level: float = 0.95) -> pd.DataFrame:
    """The τ the findings' claims decide on, each with the interval of the τ between the systems' population
    means (``resampling.order_interval``). ``pairs``: (statistic, metric) → (items of side a, items of side
    b, item weights of side b or None)."""
    rows = []
    for (statistic, metric), (a, b, w) in pairs.items():
        tau, lo, hi = order_interval(a, b, level, w)
        rows.append({"Statistic": statistic, "Metric": metric, "tau": tau, "tau_low": lo, "tau_high": hi})
    return pd.DataFrame(rows, columns=CLAIM_TAU_COLUMNS)


# ---- Figure 2 -----------------------------------------------------------------------------------------------
def kl_divergence(p_counts, q_counts, pseudocount: float = 1.0) -> float:
    """KL(P‖Q) = Σ_c P(c) ln(P(c)/Q(c)) of two count vectors over the same classes, each count raised by
    ``pseudocount`` (Laplace smoothing) before normalising, so a class absent from Q stays finite."""
    p = np.asarray(p_counts, dtype=float) + pseudocount
    q = np.asarray(q_counts, dtype=float) + pseudocount
    if p.shape != q.shape or (p < 0).any() or (q < 0).any():
        raise ValueError("KL divergence needs two non-negative count vectors of the same length")
    p, q = p / p.sum(), q / q.sum()
    mask = p > 0
    if (q[mask] == 0).any():
        return float("inf")
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


def relation_distributions(test_sets: dict[str, np.ndarray], full: np.ndarray, kg: KnowledgeGraph,
                           classes: int = 50, reference: str | None = None,
                           pseudocount: float = 1.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Relation distributions for display over ``classes`` classes (the ``classes − 1`` most frequent
    relations of the reference test set, the rest merged into "other"), and KL divergences between them.

    The KL divergences do not use the display classes: they compare relation counts over all
    ``kg.num_relations`` relations, each raised by ``pseudocount`` (add-one smoothing), natural logarithm, with
    the reference set as P: KL(reference ‖ test set) for every other test set and KL(full graph ‖ reference).
    This is the definition that reproduces the paper's three values from the published data (0.0889, 0.2386,
    0.2789 against 0.088964, 0.238553, 0.278963); merged classes or the other direction do not.
    """
    reference = reference or next(iter(test_sets))
    ref_rel, ref_cnt = np.unique(test_sets[reference][:, 1], return_counts=True)
    top = ref_rel[np.argsort(-ref_cnt, kind="stable")][: classes - 1]
    labels = [kg.relations[r] for r in top] + ["other"]
    # relation id -> display class (rank among the reference set's most frequent relations, else "other")
    class_of = np.full(kg.num_relations, len(top))
    class_of[top] = np.arange(len(top))

    def counts(triples: np.ndarray) -> np.ndarray:
        return np.bincount(triples[:, 1].astype(np.int64), minlength=kg.num_relations).astype(float)

    per_relation = {name: counts(t) for name, t in test_sets.items()}
    per_relation["full"] = counts(full)

    def dist(c: np.ndarray) -> np.ndarray:
        merged = np.bincount(class_of, weights=c, minlength=len(labels))
        return merged / merged.sum()

    table = pd.DataFrame({"relation": labels, **{name: dist(c) for name, c in per_relation.items()}})
    names = list(test_sets)
    pairs = [(reference, a) for a in names if a != reference] + [("full", reference)]
    kls = pd.DataFrame([{"P": a, "Q": b, "KL": kl_divergence(per_relation[a], per_relation[b], pseudocount),
                         "classes": kg.num_relations, "pseudocount": pseudocount} for a, b in pairs])
    return table, kls


# ---- Figure 6 -----------------------------------------------------------------------------------------------
def per_relation(per_answer: dict[str, pd.DataFrame], system: str, kg: KnowledgeGraph,
                 metric: str = "micro_mrr") -> pd.DataFrame:
    """Per-relation ``metric`` of one system on each test set (the paper's Figure 6 uses HittER)."""
    rows = []
    for name, df in per_answer.items():
        sub = df[df["System"] == system]
        for rel, grp in sub.groupby("relation"):
            rows.append({"TestSet": name, "relation": kg.relations[int(rel)], metric: float(grp[metric].mean()),
                         "answers": len(grp)})
    return pd.DataFrame(rows)


# ---- Figure 7 -----------------------------------------------------------------------------------------------
def stability(tables: dict[str, list[ItemTable]], metrics: dict[str, list[str]], sizes=DEFAULT_SIZES,
              repeats: int = 50, seed: int = 0) -> pd.DataFrame:
    """τ between the ranking on random subsets of a test set's triples and on the whole set, per size and
    repeat (Figure 7). ``tables[test set]`` holds item tables (micro: answers; macro: questions) and
    ``metrics[test set]`` the metric columns to analyse. The same subsets serve every metric of a test set."""
    rows = []
    for name, item_tables in tables.items():
        n_units = item_tables[0].n_units
        masks, size_of = subsample_masks(n_units, sizes, repeats, seed)
        rep = np.tile(np.arange(repeats), len(sizes))
        for it in item_tables:
            for m in metrics[name]:
                if m not in it.matrices:
                    continue
                taus = stability_taus(it.matrices[m], it.units, masks)
                rows.append(pd.DataFrame({"TestSet": name, "Metric": m, "Size": size_of, "Repeat": rep, "tau": taus}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def stability_summary(stab: pd.DataFrame) -> pd.DataFrame:
    g = stab.groupby(["TestSet", "Metric", "Size"])["tau"]
    return g.agg(["mean", "std", "min", "max", "count"]).reset_index()


# ---- Figure 8 -----------------------------------------------------------------------------------------------
def discrimination(tables: dict[str, list[ItemTable]], metrics: dict[str, list[str]], trials: int = 1000,
                   seed: int = 0, alpha: float = 0.05) -> tuple[pd.DataFrame, pd.DataFrame]:
    """p-values of every system pair per metric: paired t-test and randomised Tukey HSD (Figure 8), and the
    share of pairs significant at α."""
    rows, summary = [], []
    for name, item_tables in tables.items():
        for it in item_tables:
            for m in metrics[name]:
                if m not in it.matrices:
                    continue
                X = it.matrices[m]
                for test, (i, j, p) in (("t-test", paired_t_pvalues(X)),
                                        ("tukey-hsd", tukey_hsd_pvalues(X, trials, seed))):
                    rows.append(pd.DataFrame({"TestSet": name, "Metric": m, "Test": test,
                                              "System_a": np.array(it.systems)[i], "System_b": np.array(it.systems)[j],
                                              "p": p}))
                    summary.append({"TestSet": name, "Metric": m, "Test": test, "pairs": len(p),
                                    "significant_share": discriminative_power(p, alpha), "alpha": alpha,
                                    "area_under_sorted_p": float(np.sort(p)[::-1].mean())})
    return pd.concat(rows, ignore_index=True), pd.DataFrame(summary)


# ---- beyond the paper: measures for incomplete judgments -------------------------------------------------------
INCOMPLETE = [("map_cut_20", "condensed_map_cut_20"), ("ndcg_cut_20", "condensed_ndcg_cut_20"), ("map", "bpref"),
              ("map", "infAP")]


def incomplete_judgments(tables: dict[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Measures built for incomplete judgments next to their full-list versions, per system, and τ between the
    two rankings, for each set of judgments (e.g. published and rebuilt pools at full depth)."""
    per_system, taus = [], []
    for label, df in tables.items():
        cols = ["System"] + [c for c in ("map", "map_cut_20", "condensed_map_cut_20", "ndcg_cut_20",
                                         "condensed_ndcg_cut_20", "bpref", "infAP", "unjudged_10") if c in df]
        per_system.append(df[cols].assign(Judgments=label))
        for full, alt in INCOMPLETE:
            if full in df and alt in df:
                taus.append({"Judgments": label, "full": full, "incomplete_variant": alt,
                             "tau": tau_between(df, df, full, alt)})
    return pd.concat(per_system, ignore_index=True), pd.DataFrame(taus)


# ---- Table 2 ------------------------------------------------------------------------------------------------
def examples(sample_triples: np.ndarray, complete, kg: KnowledgeGraph, n: int = 3) -> pd.DataFrame:
    """Example questions of the sampled test set with their original answers and the answers the annotations
    added (entity names), the questions with the most added answers first (Table 2)."""
    from ..data.questions import Questions

    qs = Questions.from_triples(complete.positives, kg.num_entities, kg.num_relations)
    seed_keys = {tuple(t) for t in sample_triples.tolist()}
    rows = []
    for i in range(len(qs)):
        side, e, r = int(qs.side[i]), int(qs.entity[i]), int(qs.relation[i])
        if side == 0:
            ans = [(h, tuple((h, r, e))) for h in complete.positives[(complete.positives[:, 1] == r) &
                                                                    (complete.positives[:, 2] == e)][:, 0].tolist()]
        else:
            ans = [(t, tuple((e, r, t))) for t in complete.positives[(complete.positives[:, 1] == r) &
                                                                    (complete.positives[:, 0] == e)][:, 2].tolist()]
        original = [a for a, tr in ans if tr in seed_keys]
        added = [a for a, tr in ans if tr not in seed_keys]
        if original and added:
            q = f"(?, {kg.relations[r]}, {kg.display_name(e)})" if side == 0 else \
                f"({kg.display_name(e)}, {kg.relations[r]}, ?)"
            rows.append({"Triple Question": q, "Original Answers": ", ".join(kg.display_name(a) for a in original),
                         "Annotations": ", ".join(kg.display_name(a) for a in added[:6]) +
                         (f" (+{len(added) - 6} more)" if len(added) > 6 else ""), "_added": len(added)})
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=["Triple Question", "Original Answers", "Annotations"])
    return out.sort_values("_added", ascending=False, kind="stable").head(n).drop(columns="_added")
