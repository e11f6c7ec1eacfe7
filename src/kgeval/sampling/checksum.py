"""The checksum that makes a plan's sidecar verifiably the plan's: π, p, the lists and the triples of every row.

Δ̂ divides by π, so a π edited after the plan was drawn (1e-300 instead of 0.3) moves the estimate anywhere while
every value stays in range. Each row of ``sampling_plan.csv`` carries ``plan_sha256``, a SHA-256 chained over the
rows as the sidecar writes them (floats ``%.10g``, the number of rows in the first link): a changed, added,
removed or reordered row breaks the chain at that row, so the refusal names its line. It guards against an
edit or a damaged copy, not against someone who recomputes it on purpose (it holds no secret): against that,
an estimate recomputes every π from the design the sidecar records (:func:`.sheet.check_design`).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

CHECK = "plan_sha256"
CHECKED = ("item", "order", "head_id", "relation", "tail_id", "asks", "pi", "p", "audit", "lists", "prior",
           "prior_fit", "design", "floor_share", "budget", "mc_draws", "mc_seed", "judging", "wave", "p_clip",
           "mc_rho")
FLOAT_FORMAT = "%.10g"  # kgeval.io.write_csv's: the text checked is the text written


def _lines(side: pd.DataFrame) -> list[str]:
    cols = [c for c in CHECKED if c in side.columns]
    side = side[cols].copy()
    for c in ("pi", "p", "floor_share", "budget", "p_clip", "mc_rho"):  # as numbers: a file read back as text may spell 1 as "1.0" (pandas without a format)
        if c in side.columns:
            side[c] = pd.to_numeric(side[c], errors="coerce")
    text = side.to_csv(index=False, header=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    return text.split("\n")[:-1]


def row_checks(side: pd.DataFrame) -> list[str]:
    """The chained SHA-256 of every row of the sidecar frame ``side`` (numbers or the strings read back)."""
    h = hashlib.sha256(f"kgeval sampling plan, {len(side)} rows".encode()).hexdigest()
    out = []
    for line in _lines(side):  # a chain: each link needs the one before (one pass, once per plan read)
        h = hashlib.sha256(f"{h}\n{line}".encode()).hexdigest()
        out.append(h)
    return out


def first_broken(side: pd.DataFrame) -> int | None:
    """The position of the first row whose ``plan_sha256`` is not the plan's, or None when all are."""
    if CHECK not in side.columns:
        return 0
    bad = np.asarray(side[CHECK].astype(str).to_numpy() != np.asarray(row_checks(side.drop(columns=CHECK)),
                                                                    dtype=object))
    return int(np.argmax(bad)) if bad.any() else None


MESSAGE = ("does not match the plan's checksum (plan_sha256): its pi, p, lists, prior or triple were changed, or rows "
           "added or removed, after the plan was drawn; re-run the plan rather than edit its sidecar")
