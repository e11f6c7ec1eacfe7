"""The paper's findings, claim by claim: the paper's value, ours, and whether it holds.

Each claim is data — its wording, the paper's numbers — plus two functions: ``measure`` takes our numbers from
the analysis outputs (:class:`Outputs`), ``holds`` decides yes / no / partly from them, by the rule written in
the claim's ``rule`` text (the thresholds are the module constants below). A claim whose inputs this run did
not produce (no second dataset, no KP stage) reads "not measured".
"""

from __future__ import annotations

import pandas as pd

from ..published import PAPER_FIGURE4, PAPER_TABLE4, PAPER_TAU_BETWEEN
from .claims import (
    ABOUT_08,
    ALMOST_AS_STABLE,
    KLD_REL,
    KP_ROBUST_SPREAD,
    KP_SMALL_SHARE,
    KP_STRONG,
    MACRO,
    MEDIAN_SIMILAR,
    MICRO,
    MR_FACTOR,
    NA,
    NO,
    PARTLY,
    SIZE_TAU,
    STABLE_TAU,
    STRONG_TAU,
    TABLE4_LIMIT,
    UNDECIDED,
    YES,
    Claim,
    Missing,
    Outputs,
    grade,
)
from .findings_intervals import COLUMNS, SHORT, _c1, _c3, _c4, _c5, _d1, _d3, interval_verdict_of
from .findings_kp import _h11, _h11b, _h11c, _h11e, _h11f, _h12, _m11, _m11b, _m11c, _m11d, _m11e, _m11f, _m12
from .selections import TABLE4
from .study import tau_between


# ---- 1. τ(O, S) ---------------------------------------------------------------------------------------------
def _m1(o: Outputs) -> dict[str, float]:
    return {"tau": tau_between(o.ev("original"), o.ev("sample"), "micro_mrr")}


# ---- 2. relation KLDs (Figure 2's table) -----------------------------------------------------------------
# The paper's KLD(S‖O) etc. are KL(reference ‖ set) over all 237 relations with add-one smoothing
# (kgeval.analysis.study.kl_divergence; docs/definitions.md), so the rows are (P=O, Q=S),
# (P=full, Q=O) and (P=O, Q=S-C).
PAPER_KLD = {"s_o": 0.0889, "o_full": 0.2789, "sc_o": 0.2386}


def _m2(o: Outputs) -> dict[str, float]:
    kl = o.need("figure2_kl")

    def get(p: str, q: str) -> float:
        row = kl[(kl["P"] == p) & (kl["Q"] == q)]
        if row.empty:
            raise Missing(f"figure2_kl row {p}‖{q}")
        return float(row["KL"].iloc[0])

    n = o.names
    return {"s_o": get(n["original"], n["sample"]), "o_full": get("full", n["original"]),
            "sc_o": get(n["original"], n["complete"])}


def _h2(v: dict[str, float]) -> str:
    if all(abs(v[k] - PAPER_KLD[k]) <= KLD_REL * PAPER_KLD[k] for k in PAPER_KLD):
        return YES
    order = sorted(PAPER_KLD, key=PAPER_KLD.get)
    return PARTLY if sorted(PAPER_KLD, key=v.get) == order else NO


# ---- 3./4. τ(S, S-C(d)) by depth, micro and macro -----------------------------------------------------------
def _depth_tau(df: pd.DataFrame, metric: str, depth: int | None = None) -> tuple[int, float]:
    sub = df[(df["Flavour"] == "published") & (df["Metric"] == metric)]
    if sub.empty:
        raise Missing(f"depth τ of {metric}")
    d = int(sub["Depth"].max()) if depth is None else depth
    row = sub[sub["Depth"] == d]
    if row.empty:
        raise Missing(f"depth {d} τ of {metric}")
    return d, float(row["tau"].iloc[0])


def _m3(o: Outputs) -> dict[str, float]:
    f4 = o.need("figure4")
    _, t2 = _depth_tau(f4, "micro_mrr", 2)
    d, tmax = _depth_tau(f4, "micro_mrr")
    return {"tau2": t2, "depth": d, "taumax": tmax}


def _m4(o: Outputs) -> dict[str, float]:
    f5 = o.need("figure5")
    d, mi = _depth_tau(f5, "micro_mrr")
    _, ma = _depth_tau(f5, "macro_mrr")
    _, mi10 = _depth_tau(f5, "micro_hits@10")
    _, ma10 = _depth_tau(f5, "macro_hits@10")
    return {"depth": d, "micro": mi, "macro": ma, "micro10": mi10, "macro10": ma10}


# ---- τ intervals under unjudged triples (kgeval.bounds) ----------------------------------------------------------
PAPER_MACRO_MRR_TAU = 0.1795  # the paper's macro MRR τ(S, S-C(10))


def _bounds_row(o: Outputs, base: str) -> pd.Series:
    """The deepest published depth's τ interval of the bounded metric ``base`` (RR@k, Success@k …)."""
    t = o.need("bounds_tau")
    sub = t[(t["Flavour"] == "published") & t["Metric"].str.startswith(f"{base}@")]
    if sub.empty:
        raise Missing(f"bounds τ of {base}@k")
    return sub[sub["Depth"] == sub["Depth"].max()].iloc[0]


def _b4(o: Outputs, v: dict[str, float]) -> list:
    rr, s10 = _bounds_row(o, "RR"), _bounds_row(o, "Success")
    return [(f"macro {rr['Metric']}", rr["tau_lo"], rr["tau_hi"], v["micro"], PAPER_MACRO_MRR_TAU),
            (f"macro {s10['Metric']}", s10["tau_lo"], s10["tau_hi"], v["micro10"], None)]


def _m4b(o: Outputs) -> dict[str, float]:
    rr, s10 = _bounds_row(o, "RR"), _bounds_row(o, "Success")
    return {"depth": float(rr["Depth"]), "rr": float(rr["tau_a_today"]), "s10": float(s10["tau_a_today"]),
            "undecided_rr": float(rr["undecided"]), "undecided_s10": float(s10["undecided"]),
            "pairs": float(rr["pairs"])}


def _b4b(o: Outputs, v: dict[str, float]) -> list:
    rr, s10 = _bounds_row(o, "RR"), _bounds_row(o, "Success")
    return [(rr["Metric"], rr["tau_lo"], rr["tau_hi"], STRONG_TAU, PAPER_MACRO_MRR_TAU),
            (s10["Metric"], s10["tau_lo"], s10["tau_hi"], STRONG_TAU, None)]


def bounded_verdict(verdict: str, intervals: list) -> tuple[str, str]:
    """The verdict and the text added to ``ours``: ``undecided`` when some interval holds its threshold or the
    paper's value (some labelling of the unjudged triples gives each side), otherwise the verdict unchanged."""
    parts, undecided = [], False
    for label, lo, hi, threshold, paper in intervals:
        spans = lo <= threshold <= hi or (paper is not None and lo <= paper <= hi)
        undecided |= bool(spans)
        parts.append(f"{label} τ ∈ [{lo:.4f}, {hi:.4f}]")
    return (UNDECIDED if undecided else verdict), "; every labelling: " + ", ".join(parts)


def judgments_to_decide_text(outputs: Outputs, intervals: list) -> str:
    """For the undecided intervals, the judgments the MTC selection expects to need to decide every pair of the
    interval's metric (enough to decide the claim, maybe more than it needs) and the worst case's upper bound,
    from the bounds stage's ``judgments_to_decide.csv`` (empty text without it)."""
    counts = outputs.bounds_counts
    if counts is None or counts.empty:
        return ""
    parts = []
    for label, lo, hi, threshold, paper in intervals:
        if not (lo <= threshold <= hi or (paper is not None and lo <= paper <= hi)):
            continue
        base = label.split()[-1].split("@")[0]
        row = counts[counts["Metric"] == base]
        if row.empty:
            parts.append(f"{label}: not computed (bounds.decide_metrics lacks {base})")
        else:
            r = row.iloc[0]
            parts.append(f"{label}: {r['expected_judgments']:,.0f} expected, worst case ≤ "
                         f"{int(r['worst_case_upper']):,}")
    return "; judgments to decide every pair: " + ", ".join(parts) if parts else ""


def sample_text(outputs: Outputs) -> str:
    """What the sampling plan expects (``sampling_budgets.csv``: its metric, per pair the budget its own design
    needs, the plan's budget n): how many pairs a sample of n judgments is expected to decide at 95 %, and how many
    stay undecided at n (empty text without the plan)."""
    table = outputs.sampling_budgets
    if table is None or table.empty:
        return ""
    n = float(table["plan_budget"].iloc[0])
    need = pd.to_numeric(table["budget_needed"], errors="coerce")
    decided = int((need <= n).sum())
    metric = str(table["Metric"].iloc[0])
    parts = []
    if decided:
        parts.append(f"{decided} of {len(table)} pairs decided by a sample of {n:,.0f} judgments (95 %)")
    if decided < len(table):
        parts.append(f"{len(table) - decided} undecided at {n:,.0f}")
    return f"; sampled judgments ({metric}, the plan's expected budget): " + ", ".join(parts)


# ---- 5. Table 4 ---------------------------------------------------------------------------------------------
def _m5(o: Outputs) -> dict[str, float]:
    t4 = o.need("table4")
    row = t4[t4["Distribution"] == "Sparse"]
    if row.empty:
        raise Missing("table4 row Sparse")
    return {m: float(row[m].iloc[0]) for m in TABLE4 if m in row}


# ---- 6. Figure 6 medians ------------------------------------------------------------------------------------
def _m6(o: Outputs) -> dict[str, float]:
    f6 = o.need("figure6")
    med = f6.groupby("TestSet")["micro_mrr"].median()
    n = o.names
    if not all(n[r] in med.index for r in ("original", "sample", "complete")):
        raise Missing("figure6 test sets")
    return {"o": float(med[n["original"]]), "s": float(med[n["sample"]]), "sc": float(med[n["complete"]])}


def _h6(v: dict[str, float]) -> str:
    similar = abs(v["o"] - v["sc"]) <= MEDIAN_SIMILAR * max(v["o"], v["sc"])
    return grade([similar, v["s"] < min(v["o"], v["sc"])])


# ---- 7./8. Figure 7 -----------------------------------------------------------------------------------------
def _stability(o: Outputs, role: str) -> pd.DataFrame:
    f7 = o.need("figure7")
    sub = f7[f7["TestSet"] == o.names.get(role)]
    if sub.empty:
        raise Missing(f"figure7 of {role}")
    return sub


def _m7(o: Outputs) -> dict[str, float]:
    sub = _stability(o, "original")
    size = float(sub["Size"].iloc[(sub["Size"] - 0.8).abs().argmin()])
    at = sub[sub["Size"] == size].set_index("Metric")["mean"]
    macro = [m for m in MACRO if m in at.index]
    if not macro or not all(m in at.index for m in MICRO):
        raise Missing("figure7 metrics")
    return {"size": size, "macro_min": float(at[macro].min()), "micro_mrr": float(at["micro_mrr"]),
            "micro_hits10": float(at["micro_hits@10"])}


def _h7(v: dict[str, float]) -> str:
    lo, hi = ABOUT_08
    return grade([v["macro_min"] >= STABLE_TAU,
                   lo <= v["micro_mrr"] <= hi and lo <= v["micro_hits10"] <= hi])


def _m8(o: Outputs) -> dict[str, float]:
    sub = _stability(o, "complete")
    mean = sub.groupby("Metric")["mean"].mean()
    study = [m for m in MICRO + MACRO if m in mean.index]
    macro = [m for m in MACRO if m in mean.index]
    if not macro or not all(m in mean.index for m in MICRO):
        raise Missing("figure7 metrics")
    best = mean[study].idxmax()
    return {"micro": float(mean[MICRO].mean()), "macro": float(mean[macro].mean()),
            "hits10_best": float(best == "micro_hits@10"), "best_tau": float(mean[best]),
            "hits10": float(mean["micro_hits@10"])}


def _h8(v: dict[str, float]) -> str:
    return grade([v["micro"] >= v["macro"] - ALMOST_AS_STABLE, bool(v["hits10_best"])])


# ---- 9. Figure 8 --------------------------------------------------------------------------------------------
def _gap(f8: pd.DataFrame, name: str) -> float:
    sub = f8[(f8["TestSet"] == name) & (f8["Test"] == "t-test")].set_index("Metric")["area_under_sorted_p"]
    macro = [m for m in MACRO if m in sub.index]
    if not macro or not all(m in sub.index for m in MICRO):
        raise Missing(f"figure8 metrics of {name}")
    return float(sub[MICRO].mean() - sub[macro].mean())


def _m9(o: Outputs) -> dict[str, float]:
    f8 = o.need("figure8")
    return {"gap_o": _gap(f8, o.names["original"]), "gap_sc": _gap(f8, o.names["complete"])}


# ---- 10. mean rank ------------------------------------------------------------------------------------------
PAPER_MR = {"second": 3000.0, "original": 200.0, "complete": 200.0}


def _m10(o: Outputs) -> dict[str, float]:
    return {role: float(o.ev(role)["micro_mr"].mean()) for role in PAPER_MR}


def _h10(v: dict[str, float]) -> str:
    return grade([1 / MR_FACTOR <= v[r] / PAPER_MR[r] <= MR_FACTOR for r in PAPER_MR])



def _shown(printed: str) -> str:
    """A printed value of the paper (kgeval.published) as the findings table shows it: a true minus sign."""
    return printed.replace("-", "−")


CLAIMS: list[Claim] = [
    Claim("1. FB-Test-S keeps FB-Test-O's system ranking: τ(O, S), micro MRR",
          _shown(PAPER_TAU_BETWEEN["FB-Test-O", "FB-Test-S", "micro_mrr"]),
          f"yes: τ ≥ {STRONG_TAU}; partly: 0.3 ≤ τ < {STRONG_TAU}; no: below", _m1,
          lambda v: f"{v['tau']:.4f}",
          lambda v: YES if v["tau"] >= STRONG_TAU else PARTLY if v["tau"] >= 0.3 else NO, checks=_c1, decide=_d1),
    Claim("2. Relation distributions (Figure 2): KLD(S‖O), KLD(O‖full), KLD(S-C‖O)", "0.0889 / 0.2789 / 0.2386",
          f"yes: all three within {KLD_REL:.0%} of the paper's; partly: the same order; no: otherwise", _m2,
          lambda v: f"{v['s_o']:.4f} / {v['o_full']:.4f} / {v['sc_o']:.4f}", _h2,
          no_interval="none: the test sets' relation counts, no system or sample to resample"),
    Claim("3. Micro τ(S, S-C(d)) falls with pooling depth (micro MRR, depth 2 and 10)",
          f"{_shown(PAPER_FIGURE4[2, 'micro_mrr'])} → {_shown(PAPER_FIGURE4[10, 'micro_mrr'])}",
          "yes: τ(deepest) < τ(2) and ≤ 0; partly: it falls but stays positive; no: it does not fall", _m3,
          lambda v: f"{v['tau2']:.4f} → {v['taumax']:.4f} (depth {int(v['depth'])})",
          lambda v: (YES if v["taumax"] <= 0 else PARTLY) if v["taumax"] < v["tau2"] else NO, checks=_c3,
          decide=_d3),
    Claim("4. Macro τ falls less than micro (deepest pool, MRR and Hits@10)",
          "MRR 0.1795 vs −0.2308; Hits@10 gap 0.14",
          "yes: macro τ > micro τ for MRR and Hits@10; partly: for one; no: for neither; undecided: the τ interval of "
          "macro RR@k or Success@k over every labelling of the unjudged triples holds the micro τ or the paper's "
          "macro value (micro metrics have no exact bounds, so micro τ is today's)", _m4,
          lambda v: (f"MRR {v['macro']:.4f} vs {v['micro']:.4f}; Hits@10 {v['macro10']:.4f} vs "
                     f"{v['micro10']:.4f} (depth {int(v['depth'])})"),
          lambda v: grade([v["macro"] > v["micro"], v["macro10"] > v["micro10"]]), bounds=_b4, checks=_c4,
          decide=grade),
    Claim("4b. The judged pool reorders the systems by macro metrics: τ(S, S-C(deepest)) of RR@k and Success@k "
          "with every labelling of the unjudged triples (kgeval.bounds)", "macro MRR τ 0.1795",
          f"τ-a today (unjudged = not relevant); yes: both below {STRONG_TAU}; partly: one; no: neither; undecided: "
          f"some interval over every labelling of the unjudged triples holds {STRONG_TAU} or the paper's value",
          _m4b, lambda v: (f"RR {v['rr']:.4f}, Success {v['s10']:.4f} (depth {int(v['depth'])}; undecided pairs "
                           f"{int(v['undecided_rr'])} and {int(v['undecided_s10'])} of {int(v['pairs'])})"),
          lambda v: grade([v["rr"] < STRONG_TAU, v["s10"] < STRONG_TAU]), bounds=_b4b,
          no_interval="the exact τ interval over every labelling of the unjudged triples (kgeval.bounds)"),
    Claim("5. Table 4: with the sparse relation distribution every micro τ stays below 0.4",
          ", ".join(f"{SHORT[k]} {_shown(v)}" for k, v in PAPER_TABLE4["Sparse"].items()),
          f"yes: all five τ < {TABLE4_LIMIT}; partly: some; no: none", _m5,
          lambda v: ", ".join(f"{k.replace('micro_', '').replace('hits', 'H')} {x:.4f}" for k, x in v.items()),
          lambda v: grade([x < TABLE4_LIMIT for x in v.values()]), checks=_c5, decide=grade),
    Claim("6. Figure 6: HittER's per-relation median micro MRR similar on O and S-C, slightly lower on S",
          "O ≈ S-C, S lower",
          f"yes: |O − S-C| ≤ {MEDIAN_SIMILAR:.0%} of the larger and S below both; partly: one of the two; no: neither",
          _m6, lambda v: f"O {v['o']:.4f}, S {v['s']:.4f}, S-C {v['sc']:.4f}", _h6,
          no_interval="none: medians over relations of one system (not resampled)"),
    Claim("7. Figure 7(a): at 80 % of FB-Test-O macro metrics keep τ ≥ 0.95, micro MRR and Hits@10 about 0.8",
          "macro ≥ 0.95; micro ≈ 0.8",
          f"yes: every macro τ ≥ {STABLE_TAU} and both micro τ in [{ABOUT_08[0]}, {ABOUT_08[1]}]; partly: one of the "
          "two; no: neither", _m7,
          lambda v: (f"macro min {v['macro_min']:.4f}; micro MRR {v['micro_mrr']:.4f}, Hits@10 "
                     f"{v['micro_hits10']:.4f} (at {v['size']:.0%})"), _h7,
          no_interval="none: the statistic is itself a mean over subsamples (Figure 7)"),
    Claim("8. Figure 7(c): on FB-Test-S-C micro metrics almost as stable as macro; micro Hits@10 the most stable",
          "micro ≈ macro; micro Hits@10 highest",
          f"mean τ over all sizes; yes: micro mean ≥ macro mean − {ALMOST_AS_STABLE} and micro Hits@10 the highest; "
          "partly: one of the two; no: neither", _m8,
          lambda v: (f"micro {v['micro']:.4f} vs macro {v['macro']:.4f}; micro Hits@10 {v['hits10']:.4f} "
                     + ("(the highest)" if v["hits10_best"] else f"(highest {v['best_tau']:.4f})")), _h8,
          no_interval="none: the statistic is itself a mean over subsamples (Figure 7)"),
    Claim("9. Figure 8: on FB15k-237 macro metrics more discriminative than micro; the gap shrinks on FB-Test-S-C",
          "macro area smaller on O; gap smaller on S-C",
          "gap = mean area under the sorted t-test p-values of micro minus macro metrics; yes: gap(O) > 0 and "
          "|gap(S-C)| < gap(O); partly: gap(O) > 0 only; no: gap(O) ≤ 0 (no gap that could shrink)", _m9,
          lambda v: f"gap O {v['gap_o']:.4f}, S-C {v['gap_sc']:.4f}",
          lambda v: (YES if abs(v["gap_sc"]) < v["gap_o"] else PARTLY) if v["gap_o"] > 0 else NO,
          no_interval="none: areas under sorted p-values (not resampled)"),
    Claim("10. Mean rank over the 13 models: ≈ 3,000 on WN18RR, ≈ 200 on FB15k-237 and FB-Test-S-C",
          "3,000 / 200 / 200",
          f"micro MR averaged over systems; yes: all three within a factor {MR_FACTOR:g}; partly: some; no: none",
          _m10, lambda v: f"{v['second']:,.0f} / {v['original']:,.0f} / {v['complete']:,.0f}", _h10,
          no_interval="none: mean ranks (not resampled)"),
    Claim("11. Knowledge Persistence correlates with MRR and Hits@10 across models (Pearson, KP(test))",
          "0.871 / 0.864 (Bastos et al., FB15k-237)",
          f"yes: both ≥ {KP_STRONG}; partly: either > 0.3; no: otherwise", _m11,
          lambda v: f"{v['mrr']:.3f} / {v['hits10']:.3f} ({int(v['n'])} models)", _h11),
    Claim("11b. Knowledge Persistence takes a small fraction of a full ranking evaluation's time (valid + test)",
          "speed-up 117×–2,577× (FB15k-237)",
          f"median KP / ranking time over models; yes: ≤ {KP_SMALL_SHARE:.0%}; partly: < 100 %; no: otherwise", _m11b,
          lambda v: f"median {v['share']:.1%} ({v['lo']:.1%}–{v['hi']:.1%}, {int(v['n'])} models)", _h11b,
          measured_time=True),
    Claim("11c. Within a model, KP(test) moves with test MRR across training epochs (early-stopping study)",
          "early stopping on KP picks a checkpoint close to MRR's (Bastos et al.)",
          f"median Pearson over the early-stopping models; yes: ≥ {KP_STRONG}; partly: > 0.3; no: otherwise", _m11c,
          lambda v: (f"median {v['median']:.3f} ({v['lo']:.3f} to {v['hi']:.3f}; {int(v['n'])} models, "
                     f"≥ {int(v['checkpoints'])} checkpoints each)"), _h11c),
    Claim("11d. Table 2 on the paper's model set (TransE, TransH, TransR, ComplEx, RotatE, TuckER, ConvKB): KP(test) "
          "correlates with MRR and Hits@10 (Pearson)",
          "0.871 / 0.864 (Bastos et al., FB15k-237)",
          f"over the paper's models in this run (at least 3); yes: both ≥ {KP_STRONG}; partly: either > 0.3; "
          "no: otherwise", _m11d,
          lambda v: (f"{v['mrr']:.3f} / {v['hits10']:.3f} ({int(v['n'])} of 7 models, MRR {v['lo']:.3f}–"
                     f"{v['hi']:.3f})"), _h11),
    Claim("11e. Claim 11's weak correlation comes from the models' narrow MRR range: over a wide range (every "
          "early-stopping checkpoint pooled) KP(test) correlates with test MRR",
          "the docs' explanation of claim 11 (not a claim of the paper)",
          f"Pearson over all checkpoints pooled; yes: ≥ {KP_STRONG}; partly: > 0.3; no: otherwise", _m11e,
          lambda v: (f"pooled {v['pooled']:.3f} ({int(v['n'])} checkpoints of {int(v['models'])} models, MRR "
                     f"{v['lo']:.3f}–{v['hi']:.3f}); selected {v['selected']:.3f} (MRR {v['sel_lo']:.3f}–"
                     f"{v['sel_hi']:.3f})"), _h11e),
    Claim("11f. Figure 5: KP(test)'s correlation with MRR across models holds as the sampled fraction shrinks",
          "stable correlation over sample sizes (Bastos et al., Figure 5)",
          f"mean Pearson over seeds per sample multiple; yes: every mean ≥ {KP_STRONG} and spread ≤ "
          f"{KP_ROBUST_SPREAD}; partly: either; no: neither (kp.variants only)", _m11f,
          lambda v: (f"{v['at_lo']:.3f} at c = {v['lo_c']:g} … {v['at_hi']:.3f} at c = {v['hi_c']:g} (spread "
                     f"{v['spread']:.3f}, sd ≤ {v['sd']:.3f} over {int(v['seeds'])} seeds)"), _h11f),
    Claim("12. Hoyt et al. Figure 1: MRR falls as the dataset grows (Nations → FB15k-237); its adjusted index "
          "AMRR and z-score ZMRR do not",
          "MRR anti-correlated with size; AMRR, ZMRR not (ZMRR higher on the large graphs)",
          f"mean over models of Kendall's τ(number of entities, metric); yes: τ(MRR) ≤ −{SIZE_TAU} and both "
          f"τ(AMRR) and τ(ZMRR) > −{SIZE_TAU}; partly: one of the two; no: neither, or MRR does not fall", _m12,
          lambda v: (f"τ MRR {v['mrr']:.2f}, AMRR {v['amrr']:.2f}, ZMRR {v['zmrr']:.2f} "
                     f"({int(v['models'])} models, 4 datasets)"), _h12),
]


def findings(outputs: Outputs, claims: list[Claim] | None = None) -> pd.DataFrame:
    """The findings table: ``claim, paper, ours, holds`` (``holds`` decided on the 95 % intervals of the
    claim's statistics, :mod:`kgeval.analysis.verdicts`), ``point`` (the verdict the point values give),
    ``interval`` (each check's interval against its threshold, or why the claim has none), ``threshold`` (the
    checks' thresholds), ``undecided`` (the checks whose interval holds the threshold, when they leave the
    verdict open) and the ``rule``."""
    rows = []
    for c in claims if claims is not None else CLAIMS:
        try:
            values = c.measure(outputs)
        except Missing as exc:
            rows.append({"claim": c.claim, "paper": c.paper, "ours": f"n/a (no {exc} in this run)", "holds": NA,
                         "point": NA, "interval": "", "threshold": "", "undecided": "", "rule": c.rule})
            continue
        ours, point = c.ours(values), c.holds(values)
        decided = interval_verdict_of(c, outputs, values, point)
        holds = decided.pop("holds")
        if c.bounds is not None:
            try:
                intervals = c.bounds(outputs, values)
                holds, extra = bounded_verdict(holds, intervals)
                if holds == UNDECIDED:
                    extra += judgments_to_decide_text(outputs, intervals) + sample_text(outputs)
                ours += extra
            except Missing:  # no bounds stage in this run: the verdict stands as measured
                pass
        rows.append({"claim": c.claim, "paper": c.paper, "ours": ours, "holds": holds, "point": point, **decided,
                     "rule": c.rule})
    return pd.DataFrame(rows, columns=COLUMNS)
