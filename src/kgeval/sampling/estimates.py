"""Estimates from a judged sampling plan: Δ̂ per pair with its interval, and the audit of the prior.

After ``sampling_plan.tsv`` went through the annotation round trip (``kgeval annotate-merge`` writes ``head
relation tail Y|N``), every (question, entity) of the plan's sidecar ``sampling_plan.csv`` has its label, its π and
its prior p. The estimator is the plan's own (:mod:`.estimate`, Poisson sampling with the plan's π): the sidecar
says which units were drawn and with which π, the study's lists give every d_e (or D_q) and the prior p over
every unknown gives the control variate's known part, refitted on the same inputs (checked against the sidecar's
p, so that a plan made from other lists or another prior is refused rather than estimated with a bias).
A unit's label enters only through its sampled term: a drawn item judged Y instead of N moves Δ̂ by d_e/π_e.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..judgments.candidates import Candidates
from . import weights as wt
from .checksum import CHECK, MESSAGE, first_broken
from .problem import Problem

PLAN_COLUMNS = ("item", "order", "head_id", "relation", "tail_id", "asks", "pi", "p", "audit")


def read_plan_items(path: str) -> pd.DataFrame:
    """The sidecar ``sampling_plan.csv``, checked: every column of :data:`PLAN_COLUMNS`, π in (0, 1], p in
    [0, 1], ``asks`` head or tail, every row's ``plan_sha256`` (:mod:`.checksum`); a ``line`` column gives
    each row's line in the file."""
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(path, None, f"cannot read the plan's sidecar: {exc}") from None
    missing = [c for c in PLAN_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(path, 1, f"no column {', '.join(missing)} (expected the sidecar sampling_plan.csv of "
                                  f"`sampling_plan.tsv`, written with {', '.join(PLAN_COLUMNS)}; re-run the plan)")
    if df.empty:
        raise InputError(path, None, "the plan draws no item")
    raw = df.copy()
    df["line"] = np.arange(2, len(df) + 2)
    for col, lo, hi, closed in (("pi", 0.0, 1.0, False), ("p", 0.0, 1.0, True)):
        val = pd.to_numeric(df[col], errors="coerce")
        bad = val.isna() | (val > hi) | ((val < lo) if closed else (val <= lo))
        if bad.any():
            row = df[bad].iloc[0]
            span = f"[{lo:g}, {hi:g}]" if closed else f"({lo:g}, {hi:g}]"
            raise InputError(path, int(row["line"]), f"{col} {row[col]!r} is not a number in {span}")
        df[col] = val.astype(float)
    bad = ~df["asks"].isin(["head", "tail"]) | ~df["audit"].isin(["True", "False"])
    if bad.any():
        row = df[bad].iloc[0]
        raise InputError(path, int(row["line"]), f"asks {row['asks']!r} / audit {row['audit']!r}: expected head "
                                                 "or tail / True or False")
    broken = first_broken(raw)
    if broken is not None:
        if CHECK not in raw.columns:
            raise InputError(path, 1, f"no column {CHECK}: a sidecar written before plans carried their checksum, "
                                      "or edited; re-run the plan")
        raise InputError(path, broken + 2, MESSAGE)
    df["audit"] = df["audit"] == "True"
    df["item"] = pd.to_numeric(df["item"], errors="coerce")
    if df["item"].isna().any():
        raise InputError(path, int(df[df["item"].isna()].iloc[0]["line"]), "item is not a number")
    return df


def plan_labels(plan: pd.DataFrame, plan_path: str, rows: list[tuple[tuple[str, str, str], str, int]],
                labels_path: str, questions: bool = False) -> np.ndarray:
    """Each plan row's label (0/1) from ``head relation tail Y|N`` rows ``(triple, label, line)``: a judgment of
    a triple the plan does not draw, or a drawn triple left unjudged, is an error (an estimate from part of a
    Poisson sample, or with items from outside it, would carry a bias nobody could state). A question plan
    (``questions``) may leave items unjudged (−1): those below a relevant item of every list that ranks them,
    which :func:`judged_estimates` checks."""
    triples = list(zip(plan["head_id"], plan["relation"], plan["tail_id"]))
    drawn = set(triples)
    label: dict[tuple[str, str, str], int] = {}
    first: dict[tuple[str, str, str], int] = {}
    for triple, lab, line in rows:
        if triple not in drawn:
            raise InputError(labels_path, line, f"triple {' '.join(triple)} is not an item of the plan {plan_path}")
        if triple in label and label[triple] != int(lab == "Y"):
            raise InputError(labels_path, line, f"triple {' '.join(triple)} is labelled {lab} here but "
                                                f"{'NY'[label[triple]]} on line {first[triple]}")
        label[triple] = int(lab == "Y")
        first.setdefault(triple, line)
    missing = [(t, line) for t, line in zip(triples, plan["line"]) if t not in label]
    if missing and not questions:
        (triple, line), n = missing[0], len(set(t for t, _ in missing))
        raise InputError(plan_path, int(line), f"item {' '.join(triple)} has no judgment in {labels_path} ({n} of "
                                               f"{len(drawn)} drawn items have none; every drawn item must be "
                                               "judged before estimating)")
    return np.array([label.get(t, -1) for t in triples], np.int8)


def judged_estimates(cand: Candidates, p: np.ndarray, metric: str, cols: np.ndarray, systems: list[str],
                     items: np.ndarray, pi: np.ndarray, x: np.ndarray, sheet_item: np.ndarray | None = None,
                     rbp_p: float = 0.8, level: float = 0.95) -> pd.DataFrame:
    """Per pair ``cols``: Δ̂, V̂, the interval, ``decided``, the units and the judgments (distinct sheet items)
    the estimate used, from the drawn candidate ``items`` (unknowns, each once) with their π and labels ``x``.
    A question metric's π is its question's (all items of a drawn question share it); its items may be left
    unjudged (label −1) where each list that ranks them has a relevant item above (:func:`_check_complete`)."""
    items = np.asarray(items, np.int64)
    if np.unique(items).size != items.size or (cand.state[items] != -1).any():
        raise ValueError("the drawn items must be distinct unknowns of the candidates")
    x = np.asarray(x)
    if (x < 0).any() and wt.is_linear(metric):
        raise ValueError(f"{int((x < 0).sum())} drawn items are not judged")
    judged = x >= 0
    truth = np.zeros(cand.n_items)
    truth[items] = np.maximum(x, 0)  # an unjudged item lies below a relevant one in each list: its label is moot
    pb = Problem(cand, truth, metric, rbp_p)
    sheet_item = np.arange(items.size) if sheet_item is None else np.asarray(sheet_item)
    if pb.linear:
        pi_u = np.zeros(pb.U.size)
        pos = np.searchsorted(pb.U, items)
        pi_u[pos] = pi
        est = pb.estimate(p, None, pi_u, np.ones(items.size, bool), cols)
        bears = pb.d[pos][:, cols] != 0
    else:
        q = cand.item_q[items]
        pi_q = np.zeros(pb.Q)
        pi_q[q] = pi
        if not np.allclose(pi_q[q], pi):
            raise ValueError("items of one question drawn with different π: not a question-sampling plan")
        p_eff = np.where(pb.unknown, p, pb.x)
        e = wt.expected_max_metric(pb.pos, pb.g, p_eff)
        mu = (e[pb.a] - e[pb.b]).T
        _check_complete(pb, cols, q, items, judged)
        est = pb.estimate(p, mu, pi_q, np.ones(int((pi_q > 0).sum()), bool), cols)
        bears = (cand.ranks[pb.a[cols]][:, items] > 0).T | (cand.ranks[pb.b[cols]][:, items] > 0).T
    used = np.zeros((int(sheet_item.max()) + 1, cols.size), bool)
    np.logical_or.at(used, sheet_item, bears & judged[:, None])
    names = np.asarray(systems)
    return pd.DataFrame({"A": names[pb.a[cols]], "B": names[pb.b[cols]], "delta": est.delta, "var": est.var,
                         "lo": est.lo, "hi": est.hi, "decided": est.decided, "units": est.units.astype(int),
                         "judgments_used": used.sum(0), "level": level})


def _check_complete(pb: Problem, cols: np.ndarray, q: np.ndarray, items: np.ndarray, judged: np.ndarray) -> None:
    """A drawn question's difference is observed only when every unknown of the compared lists above their first
    known relevant item is in the plan, and judged down to each list's first relevant item (known or judged)."""
    systems = pb.systems_of(cols)
    qs = np.unique(q)
    sub = pb.pos[systems][:, qs]
    need = np.unique(sub[pb.open[systems][:, qs]])
    if np.setdiff1d(need, items).size:
        raise ValueError(f"{np.setdiff1d(need, items).size} unknowns of the drawn questions' compared lists are "
                         "not in the plan")
    reached = np.unique(sub[wt.open_positions(sub, pb.unknown, pb.x, judged=True)])
    missing = np.intersect1d(reached, items[~judged])
    if missing.size:
        raise ValueError(f"{missing.size} drawn items are not judged though a list that ranks them has no relevant "
                         "item above them (judge each list of a question down to its first relevant item)")


def prior_audit(plan: pd.DataFrame, x: np.ndarray) -> pd.DataFrame:
    """Predicted (mean p) and observed relevant rates on the judged items: all of them, the audit (uniform
    floor) items — a uniform sample of where the prior is used — and the others, with counts (an item left
    unjudged below a relevant one is left out)."""
    judged = np.asarray(x) >= 0
    plan, x = plan[judged], np.asarray(x)[judged]
    rows = []
    for name, keep in (("judged", np.ones(len(plan), bool)), ("audit", plan["audit"].to_numpy()),
                       ("optimal", ~plan["audit"].to_numpy())):
        n, rel = int(keep.sum()), int(x[keep].sum())
        obs = rel / n if n else np.nan
        rows.append({"items": name, "n": n, "relevant": rel, "predicted_rate": plan["p"][keep].mean() if n else np.nan,
                     "observed_rate": obs, "observed_se": np.sqrt(obs * (1 - obs) / n) if n else np.nan})
    return pd.DataFrame(rows)


def refuse_unfinished(labels: str | Path) -> None:
    """A campaign export (``report.json`` beside its ``judgments.txt``) with unfinished items is refused before
    anything is read: its estimate would be one of part of the sample."""
    import json

    labels = Path(labels)
    report = labels.with_name("report.json")
    if labels.name != "judgments.txt" or not report.is_file():
        return
    try:
        rep = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # not a campaign's report: the labels are checked against the plan anyway
    left = rep.get("unfinished", 0) if isinstance(rep, dict) else 0
    if isinstance(left, int) and left > 0:
        raise InputError(labels, None, f"a part-judged campaign export: {left} of {left + rep.get('items', 0)} "
                                       "items are not final yet (kgeval campaign status says which); judge them "
                                       "and export again")
