"""What a finding is made of: the outputs a claim reads, the claim itself, the verdicts and the thresholds of
their rules (the claims are in :mod:`kgeval.analysis.findings`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .selections import MACRO_STUDY, MICRO_STUDY
from .verdicts import UNDECIDED, Check  # noqa: F401  (UNDECIDED: the findings import it from here)

YES, NO, PARTLY, NA = "yes", "no", "partly", "not measured"
# UNDECIDED: an interval of the statistic (kgeval.analysis.verdicts) or the existing judgments (kgeval.bounds)
# allow both verdicts

# thresholds of the predicates (documented in each claim's rule)
STRONG_TAU = 0.6          # "keeps the ranking": τ at least this
KLD_REL = 0.05            # a KLD "matches" within this relative difference of the paper's
TABLE4_LIMIT = 0.4        # Table 4: every micro τ below this
MEDIAN_SIMILAR = 0.10     # Figure 6: medians "similar" within 10 % of the larger
STABLE_TAU = 0.95         # Figure 7(a): macro τ at 80 % at least this
ABOUT_08 = (0.7, 0.9)     # Figure 7(a): micro τ "about 0.8"
ALMOST_AS_STABLE = 0.05   # Figure 7(c): micro mean τ within this of macro's
MR_FACTOR = 2.0           # claim 10: mean rank "≈" within this factor
KP_STRONG = 0.7           # claim 11: "correlates": Pearson at least this
KP_SMALL_SHARE = 0.1      # claim 11b: "a small fraction": KP at most this share of the ranking's time
SIZE_TAU = 0.3            # claim 12: a metric "follows the dataset size" when |τ(size, metric)| exceeds this
KP_ROBUST_SPREAD = 0.1    # claim 11f: "robust to the sample size": mean Pearson over c within this range

MICRO, MACRO = MICRO_STUDY, MACRO_STUDY


class Missing(Exception):
    """An input a claim needs is not in this run."""


@dataclass
class Outputs:
    """The analysis outputs the claims read (None: not produced by this run). ``names``: study role → test
    set name (original, sample, complete, second)."""

    names: dict[str, str]
    evaluation: dict[str, pd.DataFrame] = field(default_factory=dict)
    figure2_kl: pd.DataFrame | None = None
    figure4: pd.DataFrame | None = None
    figure5: pd.DataFrame | None = None
    table4: pd.DataFrame | None = None
    figure6: pd.DataFrame | None = None
    figure7: pd.DataFrame | None = None
    figure8: pd.DataFrame | None = None
    kp_correlations: pd.DataFrame | None = None
    kp_timing: pd.DataFrame | None = None
    kp_early_stopping: pd.DataFrame | None = None
    kp_values: pd.DataFrame | None = None  # results/kp/<dataset>/values.csv (per-model KP and ranking metrics)
    kp_model_range: pd.DataFrame | None = None  # results/kp/<dataset>/model_range.csv
    kp_sample_size: pd.DataFrame | None = None  # results/kp/<dataset>/sample_size.csv (kp.variants only)
    bounds_tau: pd.DataFrame | None = None  # results/bounds/<complete>/tau.csv
    bounds_counts: pd.DataFrame | None = None  # results/bounds/<complete>/judgments_to_decide.csv
    hoyt_size_trend: pd.DataFrame | None = None  # results/tables/hoyt_size_trend.csv
    sampling_budgets: pd.DataFrame | None = None  # results/sampling/<complete>/sampling_budgets.csv
    claim_taus: pd.DataFrame | None = None  # results/analysis/claim_taus.csv (claim 1's and Table 4's intervals)

    def need(self, name: str) -> Any:
        value = getattr(self, name)
        if value is None or (isinstance(value, pd.DataFrame) and value.empty):
            raise Missing(name)
        return value

    def ev(self, role: str) -> pd.DataFrame:
        name = self.names.get(role)
        if not name or name not in self.evaluation:
            raise Missing(f"evaluation of {role}")
        return self.evaluation[name]


@dataclass(frozen=True)
class Claim:
    claim: str
    paper: str
    rule: str
    measure: Callable[[Outputs], dict[str, float]]
    ours: Callable[[dict[str, float]], str]
    holds: Callable[[dict[str, float]], str]
    measured_time: bool = False  # its numbers are wall-clock measurements (differ between runs)
    # (label, τ interval lo, hi, threshold, paper's value or None) per compared quantity: the verdict becomes
    # "undecided" when an interval holds the threshold or the paper's value (see :func:`bounded_verdict`)
    bounds: Callable[[Outputs, dict[str, float]], list[tuple[str, float, float, float, float | None]]] | None = None
    # the rule as threshold checks on the statistics with their 95 % intervals (kgeval.analysis.verdicts):
    # ``checks`` lists them, ``decide`` maps their outcomes to the verdict (``holds`` at the point values)
    checks: Callable[[Outputs, dict[str, float]], list[Check]] | None = None
    decide: Callable[[list[bool]], str] | None = None
    no_interval: str = ""  # why the claim is decided on its point values (the findings' ``interval`` column)


def grade(checks: list[bool]) -> str:
    """yes when every check passes, no when none does, partly otherwise."""
    if all(checks):
        return YES
    return PARTLY if any(checks) else NO
