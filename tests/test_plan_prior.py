"""A plan records its prior (issue 50): the sidecar's ``prior`` and ``prior_fit`` columns, what an estimate
reads instead of a function default, and the one-line refusal of an estimate that asks for another prior."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from test_sampling_estimates import judged_plan

from kgeval.errors import InputError
from kgeval.judgments.universe import Universe
from kgeval.sampling.sheet import plan_prior


def _universe(truth=(1, 0, 0, 1), pooled=(True, False, True, False)):
    """The fields :meth:`Universe.prior_fit` reads, for four items."""
    items = SimpleNamespace(q=np.array([0, 0, 1, 2]), entity=np.array([5, 6, 7, 5]))
    return SimpleNamespace(items=items, truth=np.array(truth, np.int8), pooled=np.array(pooled))


def test_prior_fit_is_the_sha_of_the_kind_and_the_labelled_items():
    u = _universe()
    # by hand: the pooled items 0 and 2, (q, entity, label) = (0, 5, 1) and (1, 7, 0), as little-endian int64
    h = hashlib.sha256(b"kgeval prior boosted, 2 labelled items")
    for column in ([0, 1], [5, 7], [1, 0]):
        h.update(np.array(column, "<i8").tobytes())
    assert Universe.prior_fit(u, "boosted") == h.hexdigest()[:12]
    assert Universe.prior_fit(u, "logistic") != Universe.prior_fit(u, "boosted")
    # a label the prior learns from changes the fit; one it never sees (item 1, not pooled) does not
    assert Universe.prior_fit(_universe(truth=(1, 0, 1, 1)), "boosted") != Universe.prior_fit(u, "boosted")
    assert Universe.prior_fit(_universe(truth=(1, 1, 0, 1)), "boosted") == Universe.prior_fit(u, "boosted")


def _sidecar(kind="boosted", fit="abc123def456"):
    return pd.DataFrame({"item": [1, 2], "prior": [kind, kind], "prior_fit": [fit, fit], "line": [2, 3]})


def test_plan_prior_reads_the_plan_and_refuses_another():
    u = SimpleNamespace(prior_fit=lambda kind: {"boosted": "abc123def456"}.get(kind, "000000000000"))
    assert plan_prior(_sidecar(), "plan.csv", u) == "boosted"
    assert plan_prior(_sidecar(), "plan.csv", u, "boosted") == "boosted"
    with pytest.raises(InputError) as err:
        plan_prior(_sidecar(), "plan.csv", u, "logistic")
    assert str(err.value) == ("plan.csv:2: the plan was drawn with the boosted prior, this estimate asks for "
                              "logistic: estimate with the plan's prior (or re-run the plan)")
    with pytest.raises(InputError, match=r"prior_fit 0123456789ab: the plan's boosted prior was fitted on other "
                                         r"labelled items than these inputs give \(abc123def456\)"):
        plan_prior(_sidecar(fit="0123456789ab"), "plan.csv", u)
    old = _sidecar().drop(columns=["prior", "prior_fit"])  # a sidecar of an older kgeval
    assert plan_prior(old, "plan.csv", u, "logistic") == "logistic"
    with pytest.raises(InputError, match="plan.csv:1: no prior column"):
        plan_prior(old, "plan.csv", u)


def test_a_plan_estimates_with_its_recorded_prior(pooled, synth_kg, tmp_path):
    """A logistic plan's sidecar records logistic and the fit of its labelled items; the estimate without a
    prior uses it (the same Δ̂ as asking for logistic), asking for boosted is refused in one line, and an edited
    record breaks the plan's checksum."""
    from kgeval.judgments.universe import from_dumps
    from kgeval.sampling.estimates import read_plan_items
    from kgeval.sampling.steps import estimate_step

    dumps, out, side, *_ = judged_plan(tmp_path, synth_kg, pooled[1], "P")
    u = from_dumps(dumps, synth_kg, 5, 30)
    assert set(side["prior"]) == {"logistic"} and set(side["prior_fit"]) == {u.prior_fit("logistic")}
    args = (dumps, out["kg.npz"], out["plan.csv"], out["budgets.csv"], out["labels.txt"], out["est.csv"],
            out["audit.csv"])
    own = estimate_step(*args, k=5, max_depth=30)
    asked = estimate_step(*args, k=5, max_depth=30, prior="logistic")
    np.testing.assert_array_equal(own["delta"], asked["delta"])
    with pytest.raises(InputError, match=":2: the plan was drawn with the logistic prior, this estimate asks "
                                         "for boosted"):
        estimate_step(*args, k=5, max_depth=30, prior="boosted")
    edited = pd.read_csv(out["plan.csv"], dtype=str, keep_default_na=False).assign(prior="boosted")
    edited.to_csv(tmp_path / "edited.csv", index=False)
    with pytest.raises(InputError, match=":2: .*checksum"):
        read_plan_items(str(tmp_path / "edited.csv"))
