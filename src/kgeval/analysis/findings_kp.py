"""The measures of the paper's claims 11 and 12 (:mod:`kgeval.analysis.findings` holds the claims): Knowledge
Persistence against the ranking metrics (claims 11–11f) and which metrics compare across datasets (claim 12,
Hoyt et al.). Each ``_m…`` takes our numbers from the analysis outputs, each ``_h…`` decides yes / partly / no.
"""

from __future__ import annotations

import numpy as np

from .claims import (
    KP_ROBUST_SPREAD,
    KP_SMALL_SHARE,
    KP_STRONG,
    NO,
    PARTLY,
    SIZE_TAU,
    YES,
    Missing,
    Outputs,
    grade,
)


# ---- 11. Knowledge Persistence ------------------------------------------------------------------------------
def _m11(o: Outputs) -> dict[str, float]:
    c = o.need("kp_correlations")
    row = c[(c["correlation"] == "pearson") & (c["measure"] == "KP(test)")]
    if row.empty:
        raise Missing("kp correlations row pearson/KP(test)")
    return {"mrr": float(row["micro_mrr"].iloc[0]), "hits10": float(row["micro_hits@10"].iloc[0]),
            "n": float(row["n_models"].iloc[0])}


def _h11(v: dict[str, float]) -> str:
    if v["mrr"] >= KP_STRONG and v["hits10"] >= KP_STRONG:
        return YES
    return PARTLY if max(v["mrr"], v["hits10"]) > 0.3 else NO


def _m11b(o: Outputs) -> dict[str, float]:
    t = o.need("kp_timing")
    share = t["kp_seconds"].to_numpy(float) / t["ranking_seconds"].to_numpy(float)
    return {"share": float(np.median(share)), "lo": float(share.min()), "hi": float(share.max()),
            "n": float(len(share))}


def _h11b(v: dict[str, float]) -> str:
    if v["share"] <= KP_SMALL_SHARE:
        return YES
    return PARTLY if v["share"] < 1 else NO


def _m11c(o: Outputs) -> dict[str, float]:
    """Within one model across its training epochs: does KP(test) move with test MRR? Separates "KP does not
    track quality" from "the models' MRRs are too close for a 13-point correlation to show it"."""
    e = o.need("kp_early_stopping")
    rows = e[(e["kp"] == "KP(test)") & (e["metric"] == "test_mrr")]
    if rows.empty:
        raise Missing("kp early-stopping rows KP(test)/test_mrr")
    r = rows["pearson"].to_numpy(float)
    return {"median": float(np.nanmedian(r)), "lo": float(np.nanmin(r)), "hi": float(np.nanmax(r)),
            "n": float(len(r)), "checkpoints": float(rows["checkpoints"].min())}


def _h11c(v: dict[str, float]) -> str:
    if v["median"] >= KP_STRONG:
        return YES
    return PARTLY if v["median"] > 0.3 else NO


# ---- 12. Hoyt et al. Figure 1: which metrics compare across datasets ----------------------------------------
def _m12(o: Outputs) -> dict[str, float]:
    trend = o.need("hoyt_size_trend").set_index("metric")
    missing = [k for k in ("mrr", "amrr", "zmrr") if k not in trend.index]
    if missing:
        raise Missing(f"size trend of {', '.join(missing)}")
    return {"mrr": float(trend.at["mrr", "tau_mean"]), "amrr": float(trend.at["amrr", "tau_mean"]),
            "zmrr": float(trend.at["zmrr", "tau_mean"]), "models": float(trend.at["mrr", "models"])}


def _h12(v: dict[str, float]) -> str:
    if v["mrr"] > -SIZE_TAU:
        return NO  # no anti-correlation of the raw MRR to remove
    return grade([v["amrr"] > -SIZE_TAU, v["zmrr"] > -SIZE_TAU])


# Knowledge Persistence's own model set (Bastos et al. 2023, §4.1), the models of its Table 2
KP_PAPER_MODELS = ("TransE", "TransH", "TransR", "ComplEx", "RotatE", "TuckER", "ConvKB")


def _m11d(o: Outputs) -> dict[str, float]:
    """Claim 11 asked on the paper's model set: Pearson of KP(test) with micro MRR and Hits@10 over the models of
    KP_PAPER_MODELS this run trained."""
    v = o.need("kp_values")
    v = v[v["System"].isin(KP_PAPER_MODELS) & np.isfinite(v["KP(test)"].to_numpy(float))]
    if len(v) < 3:
        raise Missing(f"KP values of three of the paper's models ({len(v)} here)")

    def pearson(metric: str) -> float:
        return float(np.corrcoef(v["KP(test)"].to_numpy(float), v[metric].to_numpy(float))[0, 1])

    return {"mrr": pearson("micro_mrr"), "hits10": pearson("micro_hits@10"), "n": float(len(v)),
            "lo": float(v["micro_mrr"].min()), "hi": float(v["micro_mrr"].max())}


def _m11e(o: Outputs) -> dict[str, float]:
    """The docs' explanation of claim 11 (a narrow MRR range hides the correlation), tested: KP(test) against
    test MRR over every checkpoint of the early-stopping models pooled, beside their selected checkpoints."""
    r = o.need("kp_model_range")
    r = r[(r["kp"] == "KP(test)") & (r["metric"] == "test_mrr")].set_index("points")
    if "all checkpoints" not in r.index:
        raise Missing("model range rows KP(test)/test_mrr")
    pooled = r.loc["all checkpoints"]
    sel = r.loc["selected"] if "selected" in r.index else None
    return {"pooled": float(pooled["pearson"]), "n": float(pooled["n"]), "models": float(pooled["models"]),
            "lo": float(pooled["metric_min"]), "hi": float(pooled["metric_max"]),
            "selected": float(sel["pearson"]) if sel is not None else float("nan"),
            "sel_lo": float(sel["metric_min"]) if sel is not None else float("nan"),
            "sel_hi": float(sel["metric_max"]) if sel is not None else float("nan")}


def _h11e(v: dict[str, float]) -> str:
    if v["pooled"] >= KP_STRONG:
        return YES
    return PARTLY if v["pooled"] > 0.3 else NO


def _m11f(o: Outputs) -> dict[str, float]:
    """Figure 5: the mean (over seeds) Pearson of KP(test) with micro MRR at each sample multiple."""
    t = o.need("kp_sample_size")
    t = t[(t["correlation"] == "pearson") & (t["metric"] == "micro_mrr")].sort_values("sample_multiple")
    if t.empty:
        raise Missing("sample-size rows pearson/micro_mrr")
    return {"lo_c": float(t["sample_multiple"].iloc[0]), "hi_c": float(t["sample_multiple"].iloc[-1]),
            "at_lo": float(t["mean"].iloc[0]), "at_hi": float(t["mean"].iloc[-1]),
            "min": float(t["mean"].min()), "spread": float(t["mean"].max() - t["mean"].min()),
            "sd": float(t["sd"].max()), "seeds": float(t["seeds"].min())}


def _h11f(v: dict[str, float]) -> str:
    if v["spread"] <= KP_ROBUST_SPREAD and v["min"] >= KP_STRONG:
        return YES
    return PARTLY if v["spread"] <= KP_ROBUST_SPREAD or v["min"] > 0.3 else NO
