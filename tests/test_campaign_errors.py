"""Annotator errors (kgeval.campaign.errors): the answers and final labels of hand-set annotators, the closed-form
label error against the drawn one, and the error table's perfect scheme against the sampling simulation's own
estimator on the same draws."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.campaign.errors import ALWAYS_N, answers, error_table, expected_error, final_labels


def test_hand_set_annotators():
    truth = np.array([1, 0, 1, 0, 0], np.int8)
    rng = np.random.default_rng(0)
    assert answers(truth, 0.0, rng).tolist() == truth.tolist()
    assert answers(truth, 1.0, rng).tolist() == [0, 1, 0, 1, 1]
    assert answers(truth, ALWAYS_N, rng).tolist() == [0] * 5
    # both always wrong: they agree, the wrong answer is final after two judgments
    assert [v.tolist() for v in final_labels(truth, (1.0, 1.0), 0.0, rng)] == [[0, 1, 0, 1, 1], [2] * 5]
    # one right, one wrong: the adjudicator decides, three judgments
    assert [v.tolist() for v in final_labels(truth, (0.0, 1.0), 0.0, rng)] == [truth.tolist(), [3] * 5]
    assert final_labels(truth, (0.0, 1.0), 1.0, rng)[0].tolist() == [0, 1, 0, 1, 1]
    # always N beside a perfect colleague: the relevant items go to the adjudicator
    x, cost = final_labels(truth, (ALWAYS_N, 0.0), 0.0, rng)
    assert x.tolist() == truth.tolist() and cost.tolist() == [3, 2, 3, 2, 2]
    assert final_labels(truth, (0.3,), None, rng)[1].tolist() == [1] * 5


@pytest.mark.parametrize("scheme", [((0.2,), None), ((0.1, 0.1), 0.1), ((0.2, 0.2), 0.2), ((ALWAYS_N,), None),
                                    ((ALWAYS_N, 0.05), 0.05)])
def test_expected_error_matches_the_draws(scheme):
    truth = (np.random.default_rng(1).random(400_000) < 0.3).astype(np.int8)
    x, _ = final_labels(truth, *scheme, np.random.default_rng(2))
    want = expected_error(*scheme, float(truth.mean()))
    assert (x != truth).mean() == pytest.approx(want, abs=3e-3)
    if scheme[1] is not None and scheme[0][0] != ALWAYS_N:
        e = scheme[1]
        assert want == pytest.approx(e * e * (3 - 2 * e))  # both wrong, or one wrong and the adjudicator too


def test_perfect_scheme_is_the_simulation_estimate(pooled, synth_kg):
    """With annotators who never err, the table's coverage and decisions are those of the sampling
    simulation's estimator (Problem.estimate) on the same sample; an always-N annotator covers less."""
    from kgeval.judgments.items import METRIC_NAMES
    from kgeval.judgments.universe import build
    from kgeval.sampling import design as dz
    from kgeval.sampling.problem import Problem
    from kgeval.scores.ranking import judged_entities

    _, sc, _, dumps = pooled
    systems = sorted(dumps)
    entity = np.stack([dumps[s].run_entity[:, :5] for s in systems])
    qs = dumps[systems[0]].questions
    u = build(systems, entity, judged_entities(sc, qs), qs, synth_kg, 5, 30)
    pb = Problem(u.hidden_state(), u.truth, METRIC_NAMES["P"], 0.8, 0, 0)
    p = np.full(u.truth.size, 0.3)
    table = error_table(pb, p, {"perfect": ((0.0,), None), "never": ((ALWAYS_N,), None)}, (30,), reps=50, seed=3)
    cols = np.arange(pb.a.size)
    v, mu = pb.variances(p)
    dsg = dz.design(v, pb.eligible(cols), 30, "optimal", None, 0.1)
    sub = np.flatnonzero(dsg.pi > 0)
    incl = np.random.default_rng([3, 30]).random((50, sub.size)) < dsg.pi[sub]
    est = pb.estimate(p, mu, dsg.pi, incl, cols)
    cover = ((est.lo - 1e-12 - 1e-9 * abs(pb.true) <= pb.true) & (pb.true <= est.hi + 1e-12 + 1e-9 *
                                                                  abs(pb.true))).mean()
    perfect, never = table.iloc[0], table.iloc[1]
    assert perfect["coverage"] == pytest.approx(cover, abs=1e-12)
    assert perfect["decided"] == pytest.approx(est.decided.mean(), abs=1e-12)
    assert perfect["label_error"] == 0 and perfect["judgments_per_item"] == 1
    assert never["label_error"] == pytest.approx(np.broadcast_to(pb.xu[sub] == 1, incl.shape)[incl].mean())
    assert pb.xu[sub].any()


def test_simulate_with_hand_set_annotators(tmp_path):
    """``campaign simulate --errors``: an always-N first annotator beside a perfect one sends every Y item to the
    adjudicator (2n + #Y judgments, no wrong label); two always-wrong annotators agree on every wrong answer
    (2n judgments, n wrong labels); over HTTP as offline."""
    pytest.importorskip("starlette")
    from test_campaign import write_sheet

    from kgeval.campaign.build import create_campaign
    from kgeval.campaign.simulate import offline, over_http
    from kgeval.campaign.store import connect

    n = 12
    write_sheet(tmp_path / "sheet.tsv", n)
    rows = ["a,b,metric,base,lo,hi,item,c1,c0"] + [f"S1,S2,P@10,0.05,-0.01,0.26,{i},0.2,-0.05"
                                                    for i in range(1, n + 1)]
    (tmp_path / "comp.csv").write_text("\n".join(rows) + "\n")
    db = tmp_path / "c.db"
    create_campaign(db, tmp_path / "sheet.tsv", comparisons=tmp_path / "comp.csv")
    truth = (np.arange(n) % 3 == 0).astype(np.int8)
    conn = connect(db)
    never = offline(conn, truth, (ALWAYS_N, 0.0, 0.0), 0)
    wrong = offline(conn, truth, (1.0, 1.0, 0.0), 0)
    right = offline(conn, truth, 0.0, 0)
    conn.close()
    assert (never["judgments"], never["wrong_labels"]) == (2 * n + 4, 0)
    assert (wrong["judgments"], wrong["wrong_labels"]) == (2 * n, n)
    assert (right["judgments"], right["wrong_labels"]) == (2 * n, 0)
    assert over_http(db, truth, (ALWAYS_N, 0.0, 0.0), 0) == never
    assert over_http(db, truth, (1.0, 1.0, 0.0), 0) == wrong
