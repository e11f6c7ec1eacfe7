"""Waves (issue 62 item 4): the union of independent Poisson waves by exact enumeration, the estimator with the
union π unbiased and equal to the one-wave estimator when a wave is empty; ``sample-plan --extend`` and
``campaign extend`` on the synthetic route, with their one-line refusals."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_campaign_route import TEMPLATES, _judge_all, route  # noqa: F401 (the module's fixture)

from kgeval.sampling.estimate import difference
from kgeval.sampling.waves import budget_for_new, draw_wave, union_pi


def _subsets(pi):
    """Every subset of the units (boolean rows) with its Poisson probability."""
    for bits in itertools.product([False, True], repeat=len(pi)):
        s = np.array(bits)
        yield s, float(np.prod(np.where(s, pi, 1 - pi)))


def test_union_pi_of_two_waves_by_exact_enumeration():
    pi1, pi2 = np.array([0.2, 0.5, 1.0, 0.0]), np.array([0.3, 0.0, 0.4, 0.25])
    got = np.zeros(4)
    for (s1, w1), (s2, w2) in itertools.product(list(_subsets(pi1)), list(_subsets(pi2))):
        got += w1 * w2 * (s1 | s2)
    # by hand: 1 − 0.8·0.7 = 0.44, 0.5, 1, 0.25
    np.testing.assert_allclose(got, [0.44, 0.5, 1.0, 0.25])
    np.testing.assert_allclose(union_pi(pi1, pi2), got)
    np.testing.assert_allclose(union_pi(pi1, pi2, np.zeros(4)), got)  # an empty third wave changes nothing


def test_union_estimator_is_unbiased_by_exact_enumeration():
    """Three unknown items, two pairs: E[Δ̂] over every pair of wave samples equals Δ, for a wrong prior too."""
    d = np.array([[0.5, -0.25], [-0.5, 0.25], [0.25, 0.5]])
    x, known = np.array([1.0, 0.0, 1.0]), np.array([0.1, -0.2])
    pi1, pi2 = np.array([0.3, 0.6, 0.2]), np.array([0.5, 0.1, 0.4])
    pi = union_pi(pi1, pi2)
    for p in (np.array([0.5, 0.5, 0.5]), np.array([0.9, 0.9, 0.05])):
        mean, second, expected_var = np.zeros(2), np.zeros(2), np.zeros(2)
        for (s1, w1), (s2, w2) in itertools.product(list(_subsets(pi1)), list(_subsets(pi2))):
            e = difference(known, d, p, x, pi, (s1 | s2)[None])
            mean += w1 * w2 * e.delta[0]
            second += w1 * w2 * (e.delta[0] - known - x @ d) ** 2
            expected_var += w1 * w2 * e.var[0]
        np.testing.assert_allclose(mean, known + x @ d, atol=1e-12)
        np.testing.assert_allclose(expected_var, second, atol=1e-12)  # V̂ unbiased too: the union is Poisson


def test_an_empty_wave_leaves_the_one_wave_estimate():
    d = np.array([[0.5], [-0.5], [0.25]])
    x, p, pi1 = np.array([1.0, 0.0, 1.0]), np.array([0.3, 0.6, 0.5]), np.array([0.3, 0.6, 0.2])
    incl = np.array([[True, False, True]])
    one = difference(np.zeros(1), d, p, x, pi1, incl)
    two = difference(np.zeros(1), d, p, x, union_pi(pi1, np.zeros(3)), incl)
    assert two.delta.item() == one.delta.item() and two.var.item() == one.var.item()
    # by hand: 0 + Σ d p = 0.15 − 0.3 + 0.125 = −0.025; + 0.5·0.7/0.3 + 0.25·0.5/0.2 = 1.7667
    assert one.delta.item() == pytest.approx(-0.025 + 0.35 / 0.3 + 0.125 / 0.2)


def test_a_wave_marks_its_new_units():
    from kgeval.sampling.design import Design

    dsg = Design(np.array([1.0, 1.0, 0.0]), np.array([1.0, 1.0, 0.0]), np.zeros(3), np.ones(3))
    w = draw_wave(dsg, np.array([True, False, False]), np.random.default_rng(0))
    assert w.drawn.tolist() == [True, True, False] and w.new.tolist() == [False, True, False]


def test_budget_for_new_hits_the_new_judgments():
    from test_sampling import instance

    from kgeval.sampling.problem import Problem
    from kgeval.sampling.waves import wave_design

    cand, *_ = instance(seed=3, S=3, Q=6, k=3, n_ent=6)
    p = np.full(cand.n_items, 0.3)
    pb = Problem(cand, np.zeros(cand.n_items), "P@k")
    v, _ = pb.variances(p)
    cols = np.arange(pb.a.size)
    drawn = np.zeros(pb.U.size, bool)
    drawn[::3] = True
    b = budget_for_new(pb, v, p, cols, drawn, 4)
    fresh = (wave_design(pb, v, p, cols, b).pi * pb.cost_of(cols, p))[~drawn].sum()
    assert fresh == pytest.approx(4, abs=0.05)
    assert budget_for_new(pb, v, p, cols, drawn, 0) == 0
    assert budget_for_new(pb, v, p, cols, drawn, 1e6) == pb.cost_of(cols, p)[pb.eligible(cols)].sum()


def test_union_question_estimator_and_variance_unbiased_by_enumeration():
    """RR@k by questions: four questions, waves of 2 and 1.5 expected questions; E[Δ̂] = Δ and E[V̂] = Var."""
    from test_sampling import instance

    from kgeval.sampling import design as dz
    from kgeval.sampling.problem import Problem

    cand, *_ = instance(seed=2, S=3, Q=4, k=3, n_ent=5)
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 2, cand.n_items).astype(float)
    pb = Problem(cand, truth, "RR@k", mc_draws=16)
    p = np.clip(rng.uniform(0, 1, cand.n_items), 0.05, 0.95)
    v, mu = pb.variances(p)
    cols = np.arange(pb.a.size)
    elig = pb.eligible(cols)
    pi1 = dz.design(v, elig, 2.0, "optimal", None).pi
    pi2 = dz.design(v[:, :1], elig, 1.5, "optimal", None).pi
    pi = union_pi(pi1, pi2)
    sub = np.flatnonzero(pi > 0)
    deltas, varis, probs = [], [], []
    for s, w in _subsets(pi[sub]):  # the union is a Poisson sample with π: enumerate it directly
        e = pb.estimate(p, mu, pi, s[None], cols)
        deltas.append(e.delta[0])
        varis.append(e.var[0])
        probs.append(w)
    probs, deltas = np.array(probs), np.array(deltas)
    np.testing.assert_allclose(probs @ deltas, pb.true, atol=1e-12)
    np.testing.assert_allclose(probs @ np.array(varis), probs @ (deltas - pb.true) ** 2, atol=1e-12)


def _labels(side: Path, out: Path) -> None:
    import zlib

    triples = pd.read_csv(side).drop_duplicates("item")[["head_id", "relation", "tail_id"]]
    with open(out, "w") as fh:
        for h, r, t in triples.itertuples(index=False):  # a label per triple, the same in every run
            y = zlib.crc32(f"{h} {r} {t}".encode()) % 10 < 3
            fh.write(f"{h}\t{r}\t{t}\t{'YN'[not y]}\n")


def test_extend_a_plan_and_a_running_campaign(route, tmp_path, capsys):  # noqa: F811
    from kgeval.campaign.store import connect
    from kgeval.cli import main

    tmp, _, oracle, _ = route
    # a campaign on the first wave, judged throughout, then exported: the labels in hand
    db = tmp_path / "c.db"
    assert main(["campaign", "create", str(db), "--plan", str(tmp / "plan")]) == 0
    _judge_all(db, oracle, wrong_for_bo={2})
    assert main(["campaign", "export", str(db), str(tmp_path / "judged")]) == 0
    capsys.readouterr()
    conn = connect(db)
    before = [tuple(r) for r in conn.execute("SELECT * FROM judgments ORDER BY id")]
    items_before = [tuple(r) for r in conn.execute("SELECT * FROM items ORDER BY pos")]
    conn.close()
    assert main(["sample-plan", "--extend", str(tmp / "plan"), "--labels", str(tmp_path / "judged"), "--budget",
                 "15", "--templates", TEMPLATES, "--reference", str(tmp / "pack"), "--out",
                 str(tmp_path / "w2")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "wave 2:" in out[-1] and out[-1].startswith(f"{tmp_path / 'w2' / 'sampling_plan.tsv'}\t")
    one, two = pd.read_csv(tmp / "plan/sampling_plan.csv"), pd.read_csv(tmp_path / "w2/sampling_plan.csv")
    n1 = len(one)
    # the first wave's rows first, the same triples and sheet numbers, π only grown (the union's)
    pd.testing.assert_frame_equal(two.iloc[:n1][["item", "order", "head_id", "relation", "tail_id", "p"]],
                                  one[["item", "order", "head_id", "relation", "tail_id", "p"]])
    assert (two["pi"].iloc[:n1].to_numpy() >= one["pi"].to_numpy() - 1e-12).all()
    assert set(two["wave"].iloc[:n1]) == {1} and set(two["wave"].iloc[n1:]) == {2} and len(two) > n1
    waves = pd.read_csv(tmp_path / "w2/sampling_waves.csv")
    assert waves["wave"].tolist() == [1, 2] and waves["new_judgments"].iloc[1] == pytest.approx(15, abs=1)
    # the estimate reads the extended plan as any plan, with every wave's labels
    _labels(tmp_path / "w2/sampling_plan.csv", tmp_path / "all.txt")
    assert main(["sample-estimate", "--plan", str(tmp_path / "w2"), "--labels", str(tmp_path / "all.txt"), "--out",
                 str(tmp_path / "est")]) == 0
    assert len(pd.read_csv(tmp_path / "est/estimates.csv")) == 3
    capsys.readouterr()
    # the running campaign takes the new items; nothing it held changes but the comparisons' terms
    assert main(["campaign", "extend", str(db), "--plan", str(tmp_path / "w2")]) == 0
    new = two["item"].nunique() - one["item"].nunique()
    assert capsys.readouterr().out == f"{db}\t{new} new items\t{two['item'].nunique()} items\t3 comparisons\n"
    conn = connect(db)
    assert [tuple(r) for r in conn.execute("SELECT * FROM judgments ORDER BY id")] == before
    after = [tuple(r) for r in conn.execute("SELECT * FROM items ORDER BY pos")]
    assert after[:len(items_before)] == items_before and len(after) == len(items_before) + new
    assert conn.execute("SELECT value FROM meta WHERE key = 'waves'").fetchone()[0] == "2"
    conn.close()
    # a second extend with the same wave adds nothing and keeps the judgments
    assert main(["campaign", "extend", str(db), "--plan", str(tmp_path / "w2")]) == 0
    assert capsys.readouterr().out.startswith(f"{db}\t0 new items")
    # the new items judged: the live Δ̂ equals sample-estimate's on the extended plan, from the export
    from kgeval.campaign.live import Live
    from kgeval.campaign.protocol import judge, next_item

    conn = connect(db)
    ana, bo = (conn.execute("SELECT * FROM people WHERE name = ?", (n,)).fetchone() for n in ("ana", "bo"))
    truth = {tuple(line.split("\t")[:3]): line.split("\t")[3] for line in
             (tmp_path / "all.txt").read_text().splitlines()}
    for _ in range(new):
        item = next_item(conn, ana)
        assert next_item(conn, bo) == item
        row = conn.execute("SELECT head_id, relation, tail_id FROM items WHERE id = ?", (item,)).fetchone()
        y = truth[tuple(row)] == "Y"
        for person in (ana, bo):
            judge(conn, person, item, "ny"[y], "https://en.wikipedia.org/wiki/X" if y else "")
    assert next_item(conn, ana) is None
    assert [tuple(r) for r in conn.execute("SELECT * FROM judgments ORDER BY id")][:len(before)] == before
    snap = Live(conn).snapshot(conn)["comparisons"]
    live = {(c["a"], c["b"]): c["delta"] for c in snap}
    # the judgments still needed, over the union of the waves: the same figure the estimate writes
    more = {(c["a"], c["b"]): c["more_needed"] for c in snap if not c["decided"]}
    conn.close()
    assert main(["campaign", "export", str(db), str(tmp_path / "judged2")]) == 0
    assert main(["sample-estimate", "--plan", str(tmp_path / "w2"), "--labels", str(tmp_path / "judged2"), "--out",
                 str(tmp_path / "est2")]) == 0
    for row in pd.read_csv(tmp_path / "est2/estimates.csv").itertuples(index=False):
        assert live[row.A, row.B] == pytest.approx(row.delta, abs=1e-9)
        if (row.A, row.B) in more:
            want = int(row.more_judgments) if np.isfinite(row.more_judgments) else None
            assert more[row.A, row.B] == want, (row, more)


def test_extend_refusals_are_one_line(route, tmp_path, capsys):  # noqa: F811
    from kgeval.cli import main

    tmp, _, _, _ = route
    base = ["sample-plan", "--templates", TEMPLATES, "--reference", str(tmp / "pack")]
    assert main([*base, "--extend", str(tmp / "plan"), "--out", str(tmp_path / "o")]) == 2
    assert "--extend needs --labels" in capsys.readouterr().err
    # labels of part of the plan: the first unjudged item and the count, naming the sidecar
    lines = (tmp / "labels.txt").read_text().splitlines()
    (tmp_path / "part.txt").write_text("\n".join(lines[:-2]) + "\n")
    assert main([*base, "--extend", str(tmp / "plan"), "--labels", str(tmp_path / "part.txt"), "--out",
                 str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sampling_plan.csv" in err and "has no judgment in" in err
    assert main([*base, "--extend", str(tmp / "plan"), "--labels", str(tmp / "labels.txt"), "--out",
                 str(tmp / "plan")]) == 2
    assert "--out must be a new folder" in capsys.readouterr().err
    assert main([*base, "--extend", str(tmp_path / "nowhere"), "--labels", str(tmp / "labels.txt"), "--out",
                 str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"kgeval: error: {tmp_path / 'nowhere'}: --extend: no such plan folder\n"
    # --labels a folder that no export wrote: named as such, not by the judgments.txt it lacks
    (tmp_path / "notexport").mkdir()
    assert main([*base, "--extend", str(tmp / "plan"), "--labels", str(tmp_path / "notexport"), "--out",
                 str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (f"kgeval: error: {tmp_path / 'notexport'}: --labels: a folder without "
                                       "judgments.txt, not one `kgeval campaign export` wrote (give it, or the "
                                       "merged labels file)\n")
    # a plan whose recorded budget was doubled with its checksum recomputed: π is not that design's, refused at
    # the sidecar's first row, as an estimate refuses it (sheet.check_design)
    import shutil

    from kgeval.sampling.checksum import CHECK, row_checks

    edited = tmp / "edited"  # beside the plan: its source's relative paths hold
    shutil.copytree(tmp / "plan", edited, dirs_exist_ok=True)
    side = pd.read_csv(edited / "sampling_plan.csv", dtype=str, keep_default_na=False)
    side["budget"] = str(float(side["budget"].iloc[0]) * 2)
    side[CHECK] = row_checks(side.drop(columns=CHECK))
    side.to_csv(edited / "sampling_plan.csv", index=False)
    assert main([*base, "--extend", str(edited), "--labels", str(tmp / "labels.txt"), "--budget", "5",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sampling_plan.csv:2: pi" in err and "is not the plan's" in err, err
    assert not (tmp_path / "o").exists()
    # campaign extend with a folder that is not an extended plan
    assert main(["campaign", "extend", str(tmp_path / "c.db"), "--plan", str(tmp / "plan")]) == 2
    assert "no sampling_waves.csv: not an extended plan" in capsys.readouterr().err


def test_extend_a_question_plan(route, workdir, tmp_path, capsys):  # noqa: F811
    """RR@k by questions: a new wave's questions come whole, share their union π, and the extended plan estimates."""
    from kgeval.cli import main

    tmp = route[0]
    common = ["--reference", str(tmp / "pack"), "--templates", TEMPLATES]
    assert main(["sample-plan", "--testset", "Synth-Test-S-C", "--metric", "RR", "--budget", "8", "--config",
                 str(workdir / "config/tiny.yaml"), "--schema", str(workdir / "config/schema.yaml"), "--resources",
                 str(workdir / "resources"), *common, "--out", str(tmp_path / "rr")]) == 0
    _labels(tmp_path / "rr/sampling_plan.csv", tmp_path / "rr.txt")
    assert main(["sample-plan", "--extend", str(tmp_path / "rr"), "--labels", str(tmp_path / "rr.txt"), "--budget",
                 "40", *common, "--out", str(tmp_path / "rr2")]) == 0
    one, two = pd.read_csv(tmp_path / "rr/sampling_plan.csv"), pd.read_csv(tmp_path / "rr2/sampling_plan.csv")
    assert len(two) > len(one) and set(two["wave"]) == {1, 2} and "lists" in two.columns
    assert (two["pi"].iloc[:len(one)].to_numpy() >= one["pi"].to_numpy() - 1e-12).all()
    _labels(tmp_path / "rr2/sampling_plan.csv", tmp_path / "rr2.txt")
    capsys.readouterr()
    # the estimate checks that every question's items share one π and that its lists are complete
    assert main(["sample-estimate", "--plan", str(tmp_path / "rr2"), "--labels", str(tmp_path / "rr2.txt"), "--out",
                 str(tmp_path / "est")]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("of 3 pairs decided")


def test_a_served_campaign_reads_the_new_wave(route, tmp_path, capsys):  # noqa: F811
    """The live page of a running server shows the extended campaign at its next refresh (no restart)."""
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    from kgeval.campaign.server import create_app
    from kgeval.campaign.store import add_person, connect
    from kgeval.cli import main

    tmp = route[0]
    db = tmp_path / "c.db"
    assert main(["campaign", "create", str(db), "--plan", str(tmp / "plan")]) == 0
    conn = connect(db)
    token = add_person(conn, "cur", "curator")
    conn.close()
    client = TestClient(create_app(db))
    first = client.get(f"/api/{token}/live").json()
    assert main(["sample-plan", "--extend", str(tmp / "plan"), "--labels", str(tmp / "labels.txt"), "--budget",
                 "15", "--templates", TEMPLATES, "--reference", str(tmp / "pack"), "--out", str(tmp_path / "w2")]) == 0
    assert main(["campaign", "extend", str(db), "--plan", str(tmp_path / "w2")]) == 0
    capsys.readouterr()
    second = client.get(f"/api/{token}/live").json()
    n2 = pd.read_csv(tmp_path / "w2/sampling_plan.csv")["item"].nunique()
    assert second["total"] == n2 > first["total"]
    assert len(second["comparisons"]) == len(first["comparisons"]) == 3


def test_nothing_to_draw_is_one_line(route, tmp_path, capsys, monkeypatch):  # noqa: F811
    """Every asked pair decided, or no budget deciding any: one line naming the labels, and no folder."""
    from kgeval.cli import main
    from kgeval.sampling import extend

    tmp = route[0]
    real = extend.judged_estimates
    args = ["sample-plan", "--extend", str(tmp / "plan"), "--labels", str(tmp / "labels.txt"), "--templates",
            TEMPLATES, "--reference", str(tmp / "pack"), "--pair", "A,B", "--out", str(tmp_path / "o")]
    monkeypatch.setattr(extend, "judged_estimates", lambda *a, **k: real(*a, **k).assign(decided=True))
    assert main(args) == 2
    assert capsys.readouterr().err == (f"kgeval: error: {tmp / 'labels.txt'}: every asked pair (1) is decided by "
                                       "these labels: no wave to draw (ask other pairs with --pair/--against, or "
                                       "give --budget)\n")
    monkeypatch.setattr(extend, "judged_estimates", lambda *a, **k: real(*a, **k).assign(decided=False))
    monkeypatch.setattr(extend, "more_judgments", lambda *a, **k: np.full(1, np.nan))
    assert main(args) == 2
    assert "no budget within 10,000 judgments decides an asked undecided pair" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_an_mtc_campaign_serves_the_new_wave_without_a_restart(route, tmp_path, capsys):  # noqa: F811
    """`--order mtc` keeps its ranking in the server's memory: after `campaign extend` the same order object
    (the running server's) serves the new wave's items, every item once, and no earlier one again."""
    from kgeval.campaign.exact import MtcOrder
    from kgeval.campaign.protocol import judge, next_item
    from kgeval.campaign.store import add_person, connect
    from kgeval.cli import main

    tmp = route[0]
    db = tmp_path / "c.db"
    assert main(["campaign", "create", str(db), "--plan", str(tmp / "plan"), "--order", "mtc"]) == 0
    conn = connect(db)
    add_person(conn, "ana", "annotator")
    ana = conn.execute("SELECT * FROM people WHERE name = 'ana'").fetchone()
    order = MtcOrder(conn)  # made once, when the server starts

    def take_all() -> list[int]:
        got = []
        while (item := next_item(conn, ana, order)) is not None:
            got.append(item)
            judge(conn, ana, item, "n", "")
        return got

    first = take_all()
    assert sorted(first) == [r[0] for r in conn.execute("SELECT id FROM items ORDER BY id")]
    assert main(["sample-plan", "--extend", str(tmp / "plan"), "--labels", str(tmp / "labels.txt"), "--budget",
                 "15", "--templates", TEMPLATES, "--reference", str(tmp / "pack"), "--out", str(tmp_path / "w2")]) == 0
    assert main(["campaign", "extend", str(db), "--plan", str(tmp_path / "w2")]) == 0
    capsys.readouterr()
    second = take_all()
    taken = set(first)
    new = [r[0] for r in conn.execute("SELECT id FROM items ORDER BY id") if r[0] not in taken]
    assert len(new) > 0 and sorted(second) == new
    conn.close()
