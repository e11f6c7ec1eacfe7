"""kgeval.campaign.exact: the live page's exact bounds of Δ (hand-computed, and the bounds module's on a real
plan) and the serving order by MTC's priority recomputed as labels arrive (MTC's own greedy order)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402
from test_evaluate_pairs import study_with_dumps  # noqa: E402, F401  (the study fixture)

from kgeval.bounds.greedy import greedy  # noqa: E402
from kgeval.bounds.linear import LinearPairs  # noqa: E402
from kgeval.campaign.comparisons import terms  # noqa: E402
from kgeval.campaign.exact import Exact, MtcOrder, served_order  # noqa: E402
from kgeval.campaign.live import add_comparisons  # noqa: E402
from kgeval.campaign.protocol import judge, next_item  # noqa: E402
from kgeval.campaign.server import create_app  # noqa: E402
from kgeval.campaign.store import add_person, connect, create  # noqa: E402
from kgeval.judgments.candidates import Candidates  # noqa: E402
from kgeval.sampling.problem import Problem  # noqa: E402

SRC = "https://en.wikipedia.org/wiki/X"


def items_of(n, audit=()):
    return [{"batch": "b", "sheet_item": str(i + 1), "head_id": f"/m/h{i}", "relation": "/r", "tail_id": f"/m/t{i}",
             "head_name": f"H{i}", "tail_name": f"T{i}", "question": f"Q{i}?", "audit": int(i in audit)}
            for i in range(n)]


def campaign_of(db, cand, p, units, metric="P@k", order="plan", audit=()):
    """A campaign whose items are the candidate ``units`` (one each, in this serving order) and whose
    comparisons are every pair of the candidates' systems, through :func:`terms` as ``create`` computes them."""
    pb = Problem(cand, np.zeros(cand.n_items), metric)
    comps, c1, c0 = terms(pb, np.asarray(p, float), np.arange(pb.a.size), np.asarray(units), np.ones(len(units)),
                          np.arange(len(units)), len(units), [f"S{s}" for s in range(cand.n_systems)], metric)
    create(db, items_of(len(units), audit), {"title": "t", "sheet": "s", "order": order})
    conn = connect(db)
    add_comparisons(conn, comps, c1, c0)
    return conn


def tiny():
    """Two systems, P@1 over Q = 2 questions: d = +½, −½, +½, −½ for items e0..e3; e2 is known relevant."""
    return Candidates(item_q=np.array([0, 0, 1, 1]), ranks=np.array([[1, 2, 1, 0], [2, 1, 0, 1]]),
                      state=np.array([-1, -1, 1, -1]), n_questions=2, k=1)


def test_exact_bounds_hand_computed(tmp_path):
    """K = ½ (e2); unknown d = +½ (e0), −½ (e1), −½ (e3): [−½, 1]; e0 N → [−½, ½]; e1 Y → [−½, 0];
    e3 N → [0, 0] (Δ = ½ − ½), over HTTP as the annotators' labels become final."""
    db = tmp_path / "c.db"
    conn = campaign_of(db, tiny(), [0.3, 0.6, 0.5, 0.2], [0, 1, 3])
    tok = {n: add_person(conn, n, r) for n, r in (("ana", "annotator"), ("bo", "annotator"), ("cur", "curator"))}
    client = TestClient(create_app(db))
    csrf = {n: client.get(f"/api/{t}/session").json()["csrf"] for n, t in tok.items()}

    def bounds():
        (row,) = client.get(f"/api/{tok['cur']}/live").json()["comparisons"]
        return row["bound_low"], row["bound_high"]

    assert bounds() == pytest.approx((-0.5, 1.0))
    for item, label, expect in ((1, "n", (-0.5, 0.5)), (2, "y", (-0.5, 0.0)), (3, "n", (0.0, 0.0))):
        for who in ("ana", "bo"):
            assert client.get(f"/api/{tok[who]}/next").json()["item"] == item
            r = client.post(f"/api/{tok[who]}/judge", json={"item": item, "label": label, "source": SRC},
                            headers={"X-CSRF-Token": csrf[who]})
            assert r.status_code == 200, r.text
        assert bounds() == pytest.approx(expect, abs=1e-15)
    page = client.get(f"/live/{tok['cur']}").text
    assert "bound low" in page and "bound high" in page


def test_live_interval_within_the_exact_bounds_and_what_is_still_needed(tmp_path):
    """Issue 62: the live interval never wider than the exact bounds on its row. The tiny case of
    :func:`test_exact_bounds_hand_computed`: before a label [−1, 1] ∩ [−½, 1] = [−½, 1], and the items left
    (e0 +½, e1 −½, e3 −½) can lift the lower bound to 1 (e0 Y, e1 N, e3 N) and push the upper one to −½;
    after e0 N the bounds [−½, ½] are the interval (one label leaves the sequence at the range), the reach
    ½ and −½; after all three [0, 0]: every unit judged, no budget can decide it (issue 62, item 3), and without
    the plan's budget statistics no answer left here decides it."""
    from kgeval.campaign.live import Live, within
    from kgeval.sampling.more import more_words

    db = tmp_path / "c.db"
    conn = campaign_of(db, tiny(), [0.3, 0.6, 0.5, 0.2], [0, 1, 3])
    tok = {n: add_person(conn, n, r) for n, r in (("ana", "annotator"), ("bo", "annotator"))}
    people = {r["name"]: r for r in conn.execute("SELECT * FROM people")}
    live = Live(conn)

    def row():
        (r,) = live.snapshot(conn)["comparisons"]
        return r

    r = row()
    assert (r["low"], r["high"]) == pytest.approx((-0.5, 1.0)) and r["needed"] == "3 items left here can decide it"
    assert (r["reach_low"], r["reach_high"]) == pytest.approx((1.0, -0.5)) and r["more_needed"] is None
    expect = {1: ((-0.5, 0.5), (0.5, -0.5)), 2: ((-0.5, 0.0), (0.0, -0.5)), 3: ((0.0, 0.0), (0.0, 0.0))}
    for item, label in ((1, "n"), (2, "y"), (3, "n")):
        for who in ("ana", "bo"):
            assert next_item(conn, people[who]) == item
            judge(conn, people[who], item, label, SRC if label == "y" else "")
        r = row()
        assert r["bound_low"] - 1e-12 <= r["low"] <= r["high"] <= r["bound_high"] + 1e-12, r
        assert (r["low"], r["high"]) == pytest.approx(expect[item][0], abs=1e-12), r
        assert (r["reach_low"], r["reach_high"]) == pytest.approx(expect[item][1], abs=1e-12), r
        assert not r["decided"]
    # a census of the pair's units (the plan's budget statistics: every unit judged), its bounds closed on 0
    assert r["needed"] == more_words(np.inf) and r["no_budget"] and r["more_needed"] is None and tok
    assert "no budget can decide it" in r["needed"] and (r["bound_low"], r["bound_high"]) == pytest.approx((0, 0))
    # without the plan's statistics (a comparisons file, an earlier kgeval's file): what the bounds say
    live.budget, live._key = [None], None
    assert row()["needed"] == "more items: no answer left here decides it (bounds at best [+0.00, +0.00])"
    # disjoint: the bounds alone; NaN bounds (not known): the interval as it was
    lo, hi = within(np.array([0.2, -0.3]), np.array([0.4, 0.5]), np.array([-0.5, np.nan]), np.array([0.1, np.nan]))
    assert lo.tolist() == [-0.5, -0.3] and hi.tolist() == [0.1, 0.5]


def test_exact_bounds_equal_the_bounds_module_on_a_real_plan(pooled, synth_kg, tmp_path):
    """A real plan's campaign, half its items imported as final: the live bounds of every comparison are
    LinearPairs' after revealing those items' units, and before any label its bounds with nothing judged."""
    from test_sampling_estimates import judged_plan

    from kgeval.campaign.build import create_campaign
    from kgeval.campaign.export import import_labels
    from kgeval.campaign.live import Live
    from kgeval.data.kg import KnowledgeGraph
    from kgeval.judgments.items import item_triples
    from kgeval.judgments.universe import from_dumps

    dumps, out, side, triples, oracle = judged_plan(tmp_path, synth_kg, pooled[1], "P")
    db = tmp_path / "c.db"
    study = {"dumps": dumps, "kg_path": out["kg.npz"], "plan_pairs": out["budgets.csv"], "k": 5, "max_depth": 30}
    create_campaign(db, out["plan.tsv"], out["plan.csv"], study=study)
    conn = connect(db)
    live = Live(conn)
    kg = KnowledgeGraph.load(out["kg.npz"])
    u = from_dumps(dumps, kg, 5, 30)
    engine = LinearPairs(u.cand, u.pooled_prior("logistic"), "P@k")
    names = [(u.systems[a], u.systems[b]) for a, b in zip(engine.a, engine.b)]

    def check():
        lo, hi = engine.bounds()
        rows = live.snapshot(conn)["comparisons"]
        assert len(rows) == 3
        for r in rows:
            j = names.index((r["a"], r["b"]))
            assert (r["bound_low"], r["bound_high"]) == pytest.approx((lo[j], hi[j]), abs=1e-12)

    check()
    unknown = np.flatnonzero(u.cand.state == -1)
    trip = item_triples(u.items, u.questions, unknown)
    where = {}
    for (h, r, t), e in zip(trip.tolist(), unknown):
        where.setdefault((kg.entities[h], kg.relations[r], kg.entities[t]), []).append(e)
    half = tmp_path / "half.txt"
    lines = open(out["labels.txt"]).read().splitlines()[: len(triples) // 2]
    half.write_text("\n".join(lines) + "\n")
    assert import_labels(conn, half) == (len(lines), 0)
    units, labels = [], []
    for line in lines:
        h, r, t, y = line.split("\t")
        units += where[h, r, t]
        labels += [int(y == "Y")] * len(where[h, r, t])
    engine.reveal(np.array(units), np.array(labels))
    check()
    assert (engine.bounds()[1] - engine.bounds()[0] > 0).all()  # the plan's judgments alone decide nothing here


def mtc_case(n_items=14, seed=1):
    """Three systems' top-3 lists over 5 questions with some known labels: distinct MTC priorities."""
    rng = np.random.default_rng(seed)
    item_q = np.arange(n_items) % 5
    ranks = np.where(rng.random((3, n_items)) < 0.6, rng.integers(1, 4, (3, n_items)), 0)
    state = np.where(rng.random(n_items) < 0.25, rng.integers(0, 2, n_items), -1)
    p = rng.uniform(0.05, 0.95, n_items)
    return Candidates(item_q, ranks, state, 5, k=3), p, rng.integers(0, 2, n_items)


def test_mtc_order_is_the_bounds_module_greedy_order(tmp_path):
    """On a tiny case, the items the campaign serves (labels final before the next starts) are MTC's own greedy
    order (one judgment per batch), offline and through the protocol with two annotators."""
    cand, p, truth = mtc_case()
    U = np.flatnonzero(cand.state == -1)
    engine = LinearPairs(cand, p, "DCG@k")
    trace = greedy(engine, lambda items: truth[items], batch=1)
    assert trace.all_decided and 2 <= trace.judgments < U.size  # MTC stops before judging every unknown
    units = U[::-1]  # the plan's order: not MTC's
    conn = campaign_of(tmp_path / "c.db", cand, p, units, "DCG@k", order="mtc")
    served = served_order(Exact(conn), truth[units])
    assert sorted(served.tolist()) == list(range(U.size))
    assert units[served[: trace.judgments]].tolist() == trace.order.tolist()

    order = MtcOrder(conn)
    for name in ("ana", "bo"):
        add_person(conn, name, "annotator")
    ana, bo = conn.execute("SELECT id, name, role FROM people ORDER BY id").fetchall()
    got = []
    while (item := next_item(conn, ana, order)) is not None:
        assert next_item(conn, bo, order) == item
        got.append(item)
        y = "ny"[int(truth[units[item - 1]])]
        judge(conn, ana, item, y, SRC if y == "y" else "")
        judge(conn, bo, item, y, SRC if y == "y" else "")
    assert (np.array(got) - 1).tolist() == served.tolist()


def test_mtc_campaign_decides_by_the_exact_bounds(tmp_path):
    """Served in MTC's order, a comparison is decided when its exact bounds exclude 0: the offline simulation
    (two judgments per item, no disagreement) decides each pair at twice the item count at which MTC's greedy
    run resolves it by sign, and the HTTP run agrees."""
    from kgeval.campaign.simulate import offline, over_http

    cand, p, truth = mtc_case()
    U = np.flatnonzero(cand.state == -1)
    engine = LinearPairs(cand, p, "DCG@k")
    trace = greedy(engine, lambda items: truth[items], batch=1)
    lo, hi = engine.bounds()
    units = U[::-1]
    db = tmp_path / "c.db"
    conn = campaign_of(db, cand, p, units, "DCG@k", order="mtc")
    off = offline(conn, truth[units], 0.0, 0)
    at = [c["decided_at"] for c in off["comparisons"]]
    by_sign = (lo > 1e-12) | (hi < -1e-12)
    assert by_sign.any()
    assert at == [2 * int(trace.decided_at[j]) if by_sign[j] else None for j in range(lo.size)]
    conn.close()
    assert over_http(db, truth[units], 0.0, 0) == off


def test_mtc_order_keeps_the_audit_slots(tmp_path):
    """Audit items are served in the plan's slots (here the 1st, 4th and 9th item started), in the plan's order;
    the rest by MTC."""
    cand, p, truth = mtc_case(seed=2)
    units = np.flatnonzero(cand.state == -1)
    audit = (0, 3, 8)
    conn = campaign_of(tmp_path / "c.db", cand, p, units, "DCG@k", order="mtc", audit=audit)
    served = served_order(Exact(conn), truth[units])
    assert [served[s] for s in audit] == list(audit)
    assert sorted(served.tolist()) == list(range(units.size))
    plain = [s for s in served.tolist() if s not in audit]
    assert plain != sorted(plain)  # MTC's order, not the plan's


def test_outside_plan_shows_live_as_evaluate_estimates(workdir, synth_kg, study_with_dumps, tmp_path, capsys):  # noqa: F811
    """An outside system's plan (``kgeval evaluate --decide-against``) made into a campaign with --run-dump: once
    the oracle's labels are final, each comparison's live Δ̂ is evaluate's P@10_sample_delta for that
    opponent, and its exact bounds contain it."""
    import pandas as pd
    from test_evaluate_pairs import POOLED, STUDY
    from test_sampling_outside import _evaluate, _oracle

    from kgeval.campaign.export import import_labels
    from kgeval.campaign.live import Live
    from kgeval.cli import main

    out = _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, "--sample-budget", "6")
    sheet = pd.read_csv(out / "sampling_plan.tsv", sep="\t", dtype=str)
    labels = tmp_path / "merged.labels.txt"
    _oracle(synth_kg, sheet).to_csv(labels, sep="\t", header=False, index=False)
    out2 = _evaluate(workdir, synth_kg, tmp_path, study_with_dumps, "--sample-budget", "6", "--judgments",
                     str(labels), out="eval2")
    pl = pd.read_csv(out2 / "placement.csv").drop_duplicates("Opponent").set_index("Opponent")
    db = tmp_path / "c.db"
    capsys.readouterr()
    assert main(["campaign", "create", str(db), "--sheet", str(out / "sampling_plan.tsv"), "--plan-items",
                 str(out / "sampling_plan.csv"), "--run-dump", str(out / "dumps" / "Mine" / POOLED), "--kg",
                 str(workdir / "resources/datasets/Synth/kg.npz"), "--reference", str(study_with_dumps),
                 "--against", ",".join(STUDY), "--order", "mtc"]) == 0
    assert capsys.readouterr().out == f"{db}\t{sheet['item'].nunique()} items\t{len(STUDY)} comparisons\n"
    conn = connect(db)
    live = Live(conn)
    import_labels(conn, labels)
    rows = {r["b"]: r for r in live.snapshot(conn)["comparisons"]}
    for opp in STUDY:
        assert rows[opp]["a"] == "Mine"
        assert rows[opp]["delta"] == pytest.approx(pl.loc[opp, "P@10_sample_delta"], abs=1e-9)  # csv: 10 digits
        assert rows[opp]["bound_low"] <= rows[opp]["delta"] <= rows[opp]["bound_high"]
    conn.close()
    # create --plan OUT reads the system, the opponents and the metric from evaluate's placement.csv
    assert main(["campaign", "create", str(tmp_path / "p.db"), "--plan", str(out), "--kg",
                 str(workdir / "resources/datasets/Synth/kg.npz"), "--reference", str(study_with_dumps)]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'p.db'}\t{sheet['item'].nunique()} items\t{len(STUDY)} comparisons\n"
    same = [[list(connect(d).execute(q)) for q in ("SELECT a, b, metric, base, lo, hi FROM comparisons ORDER BY b",
                                                   "SELECT c1, c0 FROM coefficients ORDER BY comparison, item")]
            for d in (db, tmp_path / "p.db")]
    assert same[0] == same[1]


def test_mtc_order_after_an_undo_of_a_final_label(tmp_path):
    """An annotator withdraws the judgment that made an item final and the adjudicator gives it the other label,
    after the order has read it: at every step the server's order serves what an order rebuilt from the file
    serves, and every item is served once."""
    from kgeval.campaign.protocol import undo

    cand, p, truth = mtc_case()
    units = np.flatnonzero(cand.state == -1)[::-1]
    conn = campaign_of(tmp_path / "c.db", cand, p, units, "DCG@k", order="mtc")
    order = MtcOrder(conn)
    for name, role in (("ana", "annotator"), ("bo", "annotator"), ("adj", "adjudicator")):
        add_person(conn, name, role)
    ana, bo, adj = conn.execute("SELECT id, name, role FROM people ORDER BY id").fetchall()
    got = []
    while True:
        expect = MtcOrder(conn).pick(conn)  # a rebuild from the file, before the server's order moves
        if (item := next_item(conn, ana, order)) is None:
            assert expect is None
            break
        assert item == expect
        if len(got) == 3:  # the order has read the third item's label: bo withdraws it, the adjudicator flips it
            flipped = got[2]
            y = "ny"[1 - int(truth[units[flipped - 1]])]
            assert undo(conn, bo) == flipped
            judge(conn, bo, flipped, y, SRC if y == "y" else "")
            assert next_item(conn, adj, order) == flipped
            judge(conn, adj, flipped, y, SRC if y == "y" else "")
            assert conn.execute("SELECT final_label FROM items WHERE id = ?", (flipped,)).fetchone()[0] == (y == "y")
        assert next_item(conn, bo, order) == item
        y = "ny"[int(truth[units[item - 1]])]
        judge(conn, ana, item, y, SRC if y == "y" else "")
        judge(conn, bo, item, y, SRC if y == "y" else "")
        got.append(item)
    assert sorted(got) == list(range(1, units.size + 1))
