"""The three tables of one judgment state (flavour × depth): per-system bounds, per-pair decisions, τ interval.

Everything is computed from an :class:`~kgeval.judgments.labels.Instance` and the positions of each system's
entities in the others' lists; only the MILP (exact τ, opt-in per metric) loops, over pairs, never over
questions.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..judgments.labels import UNKNOWN, Instance
from ..judgments.metrics import BoundedMetric, system_bounds
from ..metrics.kendall import tau_b
from .kendall import exact_interval, outer_interval, reference_signs, tau_a
from .pairs import decisions, pair_bounds

log = logging.getLogger(__name__)


def state_tables(inst: Instance, pos: np.ndarray, metrics: list[BoundedMetric], reference: dict[str, np.ndarray] | None,
                 milp_metrics: set[str], time_limit: float,
                 node_limit: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """(systems, pairs, τ rows) of one state; ``reference``: metric name → the reference systems' scores (no τ
    when None); ``pos``: match positions restricted to the instance's questions."""
    S = len(inst.systems)
    n_unknown = len(inst.unknown_pairs())
    ids = None
    sys_frames, pair_frames, tau_rows = [], [], []
    a, b = np.triu_indices(S, 1)
    for m in metrics:
        lo_q, hi_q = system_bounds(inst.code, m)
        Q = max(inst.num_questions, 1)
        lo, hi = lo_q.sum(1) / Q, hi_q.sum(1) / Q
        frame = {"Metric": m.name, "System": inst.systems, "lower": lo, "upper": hi,
                 "unjudged_in_top_k": (inst.code == UNKNOWN).sum((1, 2)) / (Q * inst.k)}
        if m.tail:
            frame["residual"] = hi - lo + m.tail
        sys_frames.append(pd.DataFrame(frame))
        plo, phi = pair_bounds(inst.code, pos, m)
        decided, sign = decisions(plo, phi)
        today = lo[:, None] - lo[None, :]
        pair_frames.append(pd.DataFrame({
            "Metric": m.name, "A": np.array(inst.systems)[a], "B": np.array(inst.systems)[b],
            "delta_today": today[a, b], "delta_lo": plo[a, b], "delta_hi": phi[a, b],
            "decided": decided[a, b], "sign": sign[a, b]}))
        if reference is None or m.name not in reference:
            continue
        ref = reference[m.name]
        s_ref = reference_signs(ref)
        iv = outer_interval(s_ref, decided, sign, plo, phi)
        if m.base in milp_metrics:
            if ids is None:
                ids = inst.unknown_ids()
            iv = exact_interval(iv, s_ref, decided, plo, phi, today, inst.code, pos, ids[0], ids[1], m, time_limit,
                                node_limit)
            log.info("%s: τ interval's 0-1 programs took %.1f s (%s / %s)", m.name, iv.seconds, iv.status_lo,
                     iv.status_hi)
        tau_rows.append({"Metric": m.name, "pairs": iv.pairs, "concordant": iv.concordant,
                         "discordant": iv.discordant, "undecided": iv.undecided,
                         "tau_b_today": tau_b(ref, lo), "tau_a_today": tau_a(ref, lo),
                         "tau_outer_lo": iv.outer_lo, "tau_outer_hi": iv.outer_hi, "tau_lo": iv.lo, "tau_hi": iv.hi,
                         "milp_status_lo": iv.status_lo, "milp_status_hi": iv.status_hi,
                         "unknown_pairs": n_unknown})
    return pd.concat(sys_frames, ignore_index=True), pd.concat(pair_frames, ignore_index=True), tau_rows


def states_tables(systems: list[str], entity: np.ndarray, states, metrics: list[BoundedMetric], milp_metrics: set[str],
                  time_limit: float, node_limit: int | None = None, milp_depths: set[int] | None = None
                  ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """All states of one test set. ``entity``: (S, Q, k) top-k lists over every question; ``states``: iterable of
    (flavour, depth, code (S, Q, k), question mask (Q,)). The depth-0 state of each flavour is the reference of
    that flavour's τ (FB-Test-S as the paper evaluates it: unjudged = not relevant). ``milp_depths``: the depths
    whose τ intervals get the 0-1 programs (None: every depth); the others keep the outer interval."""
    from ..judgments.labels import match_positions

    pos_all = match_positions(entity)
    sys_frames, pair_frames, tau_rows = [], [], []
    refs: dict[str, dict[str, np.ndarray]] = {}
    for flavour, depth, code, qmask in states:
        inst = Instance(systems, entity[:, qmask], code[:, qmask])
        ref = refs.get(flavour)
        milp = milp_metrics if milp_depths is None or depth in milp_depths else set()
        st, pr, tr = state_tables(inst, pos_all[:, :, qmask], metrics, ref, milp, time_limit, node_limit)
        if ref is None:
            refs[flavour] = {name: g["lower"].to_numpy() for name, g in st.groupby("Metric", sort=False)}
        head = {"Flavour": flavour, "Depth": depth, "questions": int(qmask.sum())}
        sys_frames.append(st.assign(**head))
        pair_frames.append(pr.assign(**head))
        tau_rows += [{**head, **row} for row in tr]
    order = ["Flavour", "Depth", "questions"]

    def front(df: pd.DataFrame) -> pd.DataFrame:
        return df[order + [c for c in df.columns if c not in order]]

    return (front(pd.concat(sys_frames, ignore_index=True)), front(pd.concat(pair_frames, ignore_index=True)),
            front(pd.DataFrame(tau_rows)) if tau_rows else pd.DataFrame(columns=order))
