"""The priors side by side (issue 50, :mod:`kgeval.sampling.priors`): the calibration row by hand, and on the
synthetic pooled set the tables' invariants (items counted, both universes, both priors, deterministic)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_sampling_estimates import judged_plan

from kgeval.sampling.priors import COMPARED, calibration_row, compare_priors


def test_calibration_row_by_hand():
    p, y = np.array([0.2, 0.8, 0.6, 0.4]), np.array([0, 1, 0, 1])
    row, curve = calibration_row("boosted", "held_out_folds", p, y, cv_auc=0.75)
    # one item per bin (0.2, 0.4, 0.6, 0.8): |0.2 − 0|, |0.4 − 1|, |0.6 − 0|, |0.8 − 1| averaged = 0.4
    assert row["ece"] == pytest.approx(0.4)
    # centred p (−.3, .3, .1, −.1), y (−.5, .5, −.5, .5): cov .2, var .2 and 1 -> .2 / √.2
    assert row["corr_p_y"] == pytest.approx(0.2 / np.sqrt(0.2))
    assert (row["n"], row["relevant"], row["mean_p"], row["observed_rate"], row["cv_auc"]) == (4, 2, 0.5, 0.5, 0.75)
    assert curve["count"].sum() == 4 and curve.loc[curve["count"] > 0, "bin_lo"].tolist() == [0.2, 0.4, 0.6, 0.8]


def test_compare_priors_tables(pooled, synth_kg, tmp_path):
    from kgeval.judgments.universe import from_dumps

    dumps, *_ = judged_plan(tmp_path, synth_kg, pooled[1], "P")
    u = from_dumps(dumps, synth_kg, 5, 30)
    options = dict(mc_draws=8, max_budget=2000)
    cal, curves, need = compare_priors(u, ("P", "RR"), 3, 0, **options)
    assert set(cal["prior"]) == set(COMPARED) and set(need["prior"]) == set(COMPARED)
    held = cal[cal["items"] == "held_out_folds"]
    assert len(held) == 2 and (held["n"] == u.pooled.sum()).all() and held["cv_auc"].between(0, 1).all()
    audit = cal[cal["items"] == "uniform_audit"]
    assert len(audit) == 2 and (audit["n"] <= u.hidden.sum()).all() and (audit["n"] > 0).all()
    # each curve counts its row's items
    counts = curves.groupby(["prior", "items"])["count"].sum()
    assert all(counts[(r.prior, r.items)] == r.n for r in cal.itertuples())
    assert len(need) == 2 * 2 * 2  # priors × metrics × universes
    real, hidden = need[need["universe"] == "real_plan"], need[need["universe"] == "hidden_labels"]
    assert (real["unknowns"] == (u.cand.state == -1).sum()).all() and (hidden["unknowns"] == u.hidden.sum()).all()
    assert (need["pairs"] == 3).all() and (need["reached"] <= need["pairs"]).all()
    reached = need[need["reached"] == need["pairs"]]
    assert (reached["median_budget"] <= 2000).all()
    again = compare_priors(u, ("P", "RR"), 3, 0, **options)
    for a, b in zip((cal, curves, need), again):
        pd.testing.assert_frame_equal(a, b)
