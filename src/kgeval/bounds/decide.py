"""Issue 30 §4 on a pooled test set: the next judgments (MTC selection) as an annotation sheet and each pair's
P(A > B) as a table. The items, their features and the out-of-fold prior are :mod:`kgeval.judgments.items`'s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..cells import neutralise_text_columns
from ..data.kg import KnowledgeGraph
from ..io import write_csv
from ..judgments.candidates import system_pairs
from ..pools.annotation.formats import EXPORT_HEADER, _write_sheet
from ..pools.annotation.templates import question
from .greedy import Plan


def write_next_judgments(kg: KnowledgeGraph, templates, triples: np.ndarray, the_plan: Plan, bears_on: list[str],
                         batch: str, out_sheet: str, out_sidecar: str) -> pd.DataFrame:
    """The plan as an annotation sheet in ``kgeval annotate-export``'s strict format, items numbered 1, 2, … in
    priority order (the export's own order is by relation; this one is the order to judge in), and a sidecar CSV
    with each item's priority, p(e) and the pairs it bears on (the sheet's reader allows no extra columns)."""
    rows, side = [], []
    for i, (h, r, t) in enumerate(triples.tolist(), start=1):
        rows.append([batch, str(i), kg.entities[h], kg.relations[r], kg.entities[t], kg.display_name(h),
                     kg.display_name(t), question(kg, (h, r, t), templates), "", "", ""])
        side.append((i, kg.entities[h], kg.relations[r], kg.entities[t]))
    _write_sheet(out_sheet, EXPORT_HEADER, rows)
    table = pd.DataFrame(side, columns=["item", "head_id", "relation", "tail_id"])
    table["priority"] = the_plan.priority
    table["p"] = the_plan.p
    table["n_pairs"] = np.diff(the_plan.ptr)
    table["bears_on"] = bears_on
    write_csv(neutralise_text_columns(table), out_sidecar)
    return table


def pair_table(systems, metric: str, lo, hi, expected, prob) -> pd.DataFrame:
    a, b = system_pairs(len(systems))
    decided = (lo > 1e-12) | (hi < -1e-12)
    return pd.DataFrame({"Metric": metric, "A": np.asarray(systems)[a], "B": np.asarray(systems)[b],
                         "delta_lo": lo, "delta_hi": hi, "expected_delta": expected, "P_A_beats_B": prob,
                         "decided": decided})
