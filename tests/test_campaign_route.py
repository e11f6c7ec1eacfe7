"""One route from a plan to a decision (docs/guide/campaign.md's four commands): ``kgeval sample-plan`` on a
reference pack's lists, ``campaign create --plan`` building the comparisons itself, judging, ``campaign export``,
and ``sample-estimate --plan --labels EXPORT`` with no score dumps; a part-judged export refused before the lists
are read; the merge report by names; judgments against the plan's expectation."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kgeval.campaign.build import create_campaign
from kgeval.campaign.store import add_person, connect

TEMPLATES = str(Path(__file__).parents[1] / "annotations/templates.tsv")


@pytest.fixture(scope="module")
def route(workdir, pooled, synth_kg, tmp_path_factory):
    """The walkthrough's first command on the synthetic workflow folder: a reference pack (its top-10 lists cut
    from three random scorers' dumps on Synth-Test-S-C, as test_sampling_reference does), ``kgeval sample-plan``
    on it, and a seeded oracle's labels of the sheet; with the dumps the lists were cut from."""
    from helpers import random_scorer, run_engine
    from test_sampling_reference import _pack_from_dumps

    from kgeval.cli import main
    from kgeval.scores.dumps import save_ranking

    tmp = tmp_path_factory.mktemp("route")
    dumps = {}
    for i, name in enumerate(["A", "B", "C"]):
        dumps[name] = str(tmp / "scores" / name)
        save_ranking(run_engine(synth_kg, pooled[1], random_scorer(synth_kg, seed=10 + i), k=10), dumps[name], {})
    (tmp / "pack/runs/Synth-Test-S-C").mkdir(parents=True)
    _pack_from_dumps(dumps, synth_kg, 10, tmp / "pack/runs/Synth-Test-S-C/top10.parquet")
    assert main(["sample-plan", "--testset", "Synth-Test-S-C", "--reference", str(tmp / "pack"), "--budget", "40",
                 "--config", str(workdir / "config/tiny.yaml"), "--schema", str(workdir / "config/schema.yaml"),
                 "--resources", str(workdir / "resources"), "--templates", TEMPLATES, "--out",
                 str(tmp / "plan")]) == 0
    source = json.loads((tmp / "plan/sampling_source.json").read_text())
    # relative to the plan's folder: the plan moves with what it was drawn from, whatever the working folder
    assert not Path(source["kg"]).is_absolute() and source["testset"] == "Synth-Test-S-C"
    assert (tmp / "plan" / source["kg"]).resolve() == (workdir / "resources/datasets/Synth/kg.npz").resolve()
    side = pd.read_csv(tmp / "plan/sampling_plan.csv")
    triples = side.drop_duplicates("item")[["head_id", "relation", "tail_id"]]
    oracle = np.random.default_rng(5).random(len(triples)) < 0.3
    with open(tmp / "labels.txt", "w") as fh:
        for (h, r, t), y in zip(triples.itertuples(index=False), oracle):
            fh.write(f"{h}\t{r}\t{t}\t{'YN'[not y]}\n")
    return tmp, dumps, oracle, str(workdir / "resources/datasets/Synth/kg.npz")


def _judge_all(db, oracle, wrong_for_bo=(), upto=None):
    """ana and bo judge every item (bo answers the opposite on the items ``wrong_for_bo``, served order), cleo
    adjudicates; with ``upto``, only the first ``upto`` items are judged."""
    from kgeval.campaign.protocol import judge, next_item

    conn = connect(db)
    people = {}
    for name, role in (("ana", "annotator"), ("bo", "annotator"), ("cleo", "adjudicator")):
        add_person(conn, name, role)
        people[name] = conn.execute("SELECT * FROM people WHERE name = ?", (name,)).fetchone()
    src = "https://en.wikipedia.org/wiki/X"
    for k, y in enumerate(oracle[:upto]):
        item = next_item(conn, people["ana"])
        assert next_item(conn, people["bo"]) == item
        judge(conn, people["ana"], item, "ny"[int(y)], src if y else "")
        b = int(y) ^ (k in wrong_for_bo)
        judge(conn, people["bo"], item, "ny"[b], src if b else "")
        if k in wrong_for_bo:
            assert next_item(conn, people["cleo"]) == item
            judge(conn, people["cleo"], item, "ny"[int(y)], src if y else "")
    conn.close()


def test_four_commands_from_a_reference_plan_to_the_estimate(route, tmp_path, capsys, monkeypatch):
    """create --plan builds the comparisons; the estimate from the export equals sample-estimate's from the
    score dumps the pack's lists were cut from, and the campaign's live Δ̂."""
    from kgeval.campaign.live import Live
    from kgeval.cli import main
    from kgeval.sampling.steps import estimate_step

    tmp, dumps, oracle, kg = route
    db = tmp_path / "c.db"
    assert main(["campaign", "create", str(db), "--plan", str(tmp / "plan")]) == 0
    assert capsys.readouterr().out == f"{db}\t{len(oracle)} items\t3 comparisons\n"
    _judge_all(db, oracle, wrong_for_bo={1, 4})
    assert main(["campaign", "export", str(db), str(tmp_path / "judged")]) == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)  # the plan's source paths are relative to its folder, not to the working folder
    assert main(["sample-estimate", "--plan", str(tmp / "plan"), "--labels", str(tmp_path / "judged"), "--out",
                 str(tmp_path / "est")]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1] == f"{tmp_path / 'est' / 'estimates.csv'}\t" \
        f"{int(pd.read_csv(tmp_path / 'est/estimates.csv')['decided'].sum())} of 3 pairs decided"
    got = pd.read_csv(tmp_path / "est/estimates.csv")
    want = estimate_step(dumps, kg, str(tmp / "plan/sampling_plan.csv"), str(tmp / "plan/sampling_budgets.csv"),
                         str(tmp / "labels.txt"), str(tmp_path / "w.csv"), str(tmp_path / "wa.csv"))
    assert set(got["testset"]) == {"Synth-Test-S-C"}
    # as written: the same rounding of the same numbers (the CSV keeps 10 significant digits)
    pd.testing.assert_frame_equal(got.drop(columns="testset"), pd.read_csv(tmp_path / "w.csv").drop(
        columns="testset"), check_exact=True)
    conn = connect(db)
    live = {(c["a"], c["b"]): c["delta"] for c in Live(conn).snapshot(conn)["comparisons"]}
    conn.close()
    for row in want.itertuples(index=False):
        assert live[row.A, row.B] == pytest.approx(row.delta, abs=1e-12)


def test_a_part_judged_export_is_refused_before_the_lists_are_read(route, tmp_path, capsys, monkeypatch):
    from kgeval.cli import main
    from kgeval.sampling import reference

    tmp, _, oracle, _ = route
    db = tmp_path / "c.db"
    assert main(["campaign", "create", str(db), "--plan", str(tmp / "plan")]) == 0
    _judge_all(db, oracle, upto=3)
    assert main(["campaign", "export", str(db), str(tmp_path / "judged")]) == 0
    capsys.readouterr()
    read = []
    monkeypatch.setattr(reference, "source_universe", lambda *a: read.append(a))
    assert main(["sample-estimate", "--plan", str(tmp / "plan"), "--labels", str(tmp_path / "judged"), "--out",
                 str(tmp_path / "est")]) == 2
    n = len(oracle)
    assert capsys.readouterr().err == (f"kgeval: error: {tmp_path / 'judged/judgments.txt'}: a part-judged campaign "
                                       f"export: {n - 3} of {n} items are not final yet (kgeval campaign status "
                                       "says which); judge them and export again\n")
    # the same labels without the campaign's report: the plan's check names the first unjudged item and the count
    (tmp_path / "judged/report.json").unlink()
    assert main(["sample-estimate", "--plan", str(tmp / "plan"), "--labels", str(tmp_path / "judged"), "--out",
                 str(tmp_path / "est")]) == 2
    assert f"({n - 3} of {n} drawn items have none; every drawn item must be judged" in capsys.readouterr().err
    assert read == [] and not (tmp_path / "est").exists()


def test_merge_report_names_entities_and_annotators(route, tmp_path):
    from kgeval.campaign.export import report

    tmp, _, oracle, _ = route
    db = tmp_path / "c.db"
    create_campaign(db, tmp / "plan/sampling_plan.tsv", tmp / "plan/sampling_plan.csv")
    _judge_all(db, oracle, wrong_for_bo={0})
    conn = connect(db)
    first = conn.execute("SELECT * FROM items ORDER BY pos LIMIT 1").fetchone()
    rep = report(conn, str(db))
    conn.close()
    (res,) = rep["resolutions"]
    y = "YN"[not oracle[0]]
    assert (res["head_name"], res["tail_name"]) == (first["head_name"], first["tail_name"])
    assert (res["a"]["who"], res["a"]["label"], res["b"]["who"], res["adjudicator"]["who"]) == \
        ("ana", y, "bo", "cleo")
    n, ny = len(oracle), int(oracle.sum())
    assert rep["annotators"] == {"ana": {"Y": ny, "N": n - ny, "u": 0},
                                 "bo": {"Y": ny + (1 if y == "N" else -1), "N": n - ny - (1 if y == "N" else -1),
                                        "u": 0}}
    from kgeval.pools.annotation.report import _report_markdown

    text = _report_markdown(rep)
    assert f"{first['head_name']} ({first['head_id']})" in text and f"| {y} (ana) |" in text
    assert "- by annotator: ana " in text


def test_judgments_against_the_plan_expectation(tmp_path):
    """Hand-computed: 6 items, a plan budget of 2.5 (5 judgments expected); item 1 agreed (2 judgments), item 2
    adjudicated (3), item 3 half judged (1): 6 made, 2.5 per item judged to the end, projected 5 + 2.5 × 4 = 15,
    +200 %; an imported label counts as final but costs nothing."""
    from test_campaign import write_sheet

    from kgeval.campaign.export import import_labels
    from kgeval.campaign.projection import projection, projection_line
    from kgeval.campaign.protocol import judge, next_item
    from kgeval.campaign.status import status_text

    db = tmp_path / "c.db"
    create_campaign(db, write_sheet(tmp_path / "s.tsv", 6))
    conn = connect(db)
    assert projection(conn) | {"metric": None} == {"made": 0, "expected": None, "projected": 12.0, "items": 6,
                                                   "final": 0, "per_item": None, "metric": None, "overrun": None}
    conn.execute("INSERT INTO meta VALUES ('plan_budget', '2.5')")
    ppl = {}
    for name, role in (("ana", "annotator"), ("bo", "annotator"), ("cy", "adjudicator")):
        add_person(conn, name, role)
        ppl[name] = conn.execute("SELECT * FROM people WHERE name = ?", (name,)).fetchone()
    for who, label in (("ana", "n"), ("bo", "n")):
        judge(conn, ppl[who], next_item(conn, ppl[who]), label)
    for who, label in (("ana", "n"), ("bo", "u")):
        judge(conn, ppl[who], next_item(conn, ppl[who]), label)
    judge(conn, ppl["cy"], next_item(conn, ppl["cy"]), "n")
    judge(conn, ppl["ana"], next_item(conn, ppl["ana"]), "n")
    pr = projection(conn)
    assert pr == {"made": 6, "expected": 5.0, "projected": 15.0, "items": 6, "final": 2, "per_item": 2.5,
                  "metric": None, "overrun": pytest.approx(2.0)}
    assert "judgments: 6 made of 5 the plan expects" in projection_line(pr) and "+200%" in projection_line(pr)
    (tmp_path / "l.txt").write_text("/m/0h6\t/film/film/genre\t/m/0t6\tN\n")
    assert import_labels(conn, tmp_path / "l.txt") == (1, 0)
    assert projection(conn)["projected"] == 5 + 2.5 * 3
    conn.close()
    assert "projected total 12 for the 6 items drawn (2.50 judgments per final item" in status_text(db)


def test_evaluate_refuses_a_part_judged_export_before_evaluating(workdir, tmp_path, capsys, monkeypatch):
    """``evaluate --judgments`` on a campaign export with unfinished items: one line at once, nothing evaluated
    (the system's run file is not even read)."""
    import json

    from kgeval.cli import main
    from kgeval.external import command

    (tmp_path / "judged").mkdir()
    (tmp_path / "judged/judgments.txt").write_text("/m/a\t/r\t/m/b\tN\n")
    (tmp_path / "judged/report.json").write_text(json.dumps({"items": 1, "unfinished": 4}))
    called = []
    monkeypatch.setattr(command, "evaluate_into", lambda *a, **k: called.append(a))
    rc = main(["evaluate", str(tmp_path / "none.run"), "--dataset", "Synth", "--out", str(tmp_path / "out"),
               "--config", str(workdir / "config/tiny.yaml"), "--schema", str(workdir / "config/schema.yaml"),
               "--resources", str(workdir / "resources"), "--judgments", str(tmp_path / "judged/judgments.txt")])
    assert rc == 2 and called == [] and not (tmp_path / "out").exists()
    assert capsys.readouterr().err == (f"kgeval: error: {tmp_path / 'judged/judgments.txt'}: a part-judged campaign "
                                       "export: 4 of 5 items are not final yet (kgeval campaign status says "
                                       "which); judge them and export again\n")


@pytest.mark.skipif(os.environ.get("KGEVAL_MIRROR") is None, reason="no data mirror (set KGEVAL_MIRROR)")
def test_the_walkthrough_on_the_real_fb_test_s_c(tmp_path, capsys):
    """docs/guide/campaign.md's four commands as written, on the real FB-Test-S-C (data from the mirror), the
    judging replaced by an import of labels drawn from the plan's prior: a Δ̂ per pair, decided or not, equal to
    the campaign's live Δ̂ to the digits estimates.csv keeps."""
    from campaign_fixtures import ROOT

    from kgeval.campaign.live import Live
    from kgeval.cli import main
    from kgeval.config import load_config_file, validate_config
    from kgeval.data.cache import DataBuilder
    from kgeval.home import locate_defaults

    cfg = validate_config(locate_defaults(load_config_file(ROOT / "config/config.yaml")),
                          ROOT / "config/schema.yaml", models=False)
    DataBuilder(cfg, ROOT / cfg["manifest"], tmp_path / "resources").build_testset("FB-Test-S-C")
    common = ["--config", str(ROOT / "config/config.yaml"), "--schema", str(ROOT / "config/schema.yaml"),
              "--templates", str(ROOT / "annotations/templates.tsv"), "--reference", str(ROOT / "reference/default")]
    plan, db = tmp_path / "plan", tmp_path / "fb.db"
    assert main(["sample-plan", "--testset", "FB-Test-S-C", "--budget", "40", "--out", str(plan),
                 "--resources", str(tmp_path / "resources"), *common]) == 0
    side = pd.read_csv(plan / "sampling_plan.csv")
    n = side["item"].nunique()
    assert capsys.readouterr().out == f"{plan / 'sampling_plan.tsv'}\t{n} items to judge\t" \
                                      f"{plan / 'sampling_budgets.csv'}\n"
    assert main(["campaign", "create", str(db), "--plan", str(plan)]) == 0
    assert capsys.readouterr().out == f"{db}\t{n} items\t78 comparisons\n"
    g = side.groupby(["head_id", "relation", "tail_id"], sort=False)["p"].max()
    y = np.random.default_rng(0).random(len(g)) < g.to_numpy()
    (tmp_path / "labels.txt").write_text("".join(f"{h}\t{r}\t{t}\t{'NY'[int(v)]}\n" for (h, r, t), v in zip(g.index, y)))
    assert main(["campaign", "import", str(db), str(tmp_path / "labels.txt")]) == 0
    assert main(["campaign", "export", str(db), str(tmp_path / "judged")]) == 0
    capsys.readouterr()
    assert main(["sample-estimate", "--plan", str(plan), "--labels", str(tmp_path / "judged"), "--out",
                 str(tmp_path / "estimate")]) == 0
    lines = capsys.readouterr().out.splitlines()
    est = pd.read_csv(tmp_path / "estimate/estimates.csv")
    assert len(lines) == 79 and len(est) == 78
    assert lines[-1] == f"{tmp_path / 'estimate/estimates.csv'}\t{int(est['decided'].sum())} of 78 pairs decided"
    conn = connect(db)
    rows = {(c["a"], c["b"]): c for c in Live(conn).snapshot(conn)["comparisons"]}
    conn.close()
    live = {pair: c["delta"] for pair, c in rows.items()}
    assert max(abs(live[r.A, r.B] - r.delta) for r in est.itertuples()) < 1e-9
    # issue 62: each undecided pair's judgments still needed, one figure in estimates.csv, sample-estimate's
    # line, the live JSON and campaign status
    from kgeval.campaign.status import status_text
    from kgeval.sampling.more import more_words

    status = status_text(db)
    undecided = est[~est["decided"]]
    for r in undecided.itertuples():
        words = more_words(r.more_judgments)
        assert rows[r.A, r.B]["needed"] == words and f"undecided — {words}" in status
        assert any(line.startswith(f"P\t{r.A} − {r.B}\t") and line.endswith(f"undecided — {words}\t"
                                                                            f"{r.judgments_used} judgments")
                   for line in lines)
    assert undecided["more_judgments"].notna().sum() > 0


def test_create_from_the_workflows_plan_folder(pooled, synth_kg, tmp_path, capsys):
    """``create --plan results/sampling/<T>`` of a workflow run (no sampling_source.json) finds the score dumps
    in ``results/scores/<T>``: the comparisons are those ``--scores`` computes."""
    import shutil

    from test_sampling_estimates import judged_plan

    from kgeval.cli import main

    (tmp_path / "made").mkdir()
    dumps, out, *_ = judged_plan(tmp_path / "made", synth_kg, pooled[1], "P")
    plan = tmp_path / "results/sampling/SC"
    plan.mkdir(parents=True)
    shutil.copy(out["plan.tsv"], plan / "sampling_plan.tsv")
    for f in ("plan.csv", "budgets.csv"):
        shutil.copy(out[f], plan)
    shutil.copytree(tmp_path / "made/scores", tmp_path / "results/scores/SC")
    args = ["--kg", out["kg.npz"], "--k", "5", "--max-depth", "30"]
    assert main(["campaign", "create", str(tmp_path / "a.db"), "--plan", str(plan), *args]) == 0
    assert main(["campaign", "create", str(tmp_path / "b.db"), "--sheet", str(plan / "sampling_plan.tsv"),
                 "--plan-items", str(plan / "sampling_plan.csv"), "--scores", str(tmp_path / "made/scores"),
                 *args]) == 0
    a, b = capsys.readouterr().out.splitlines()
    assert a.split("\t")[1:] == b.split("\t")[1:] and a.endswith("\t3 comparisons")
    rows = [[list(connect(tmp_path / db).execute(q)) for q in ("SELECT a, b, base, lo, hi FROM comparisons",
                                                               "SELECT * FROM coefficients")] for db in ("a.db", "b.db")]
    assert rows[0] == rows[1] and len(rows[0][1]) > 0
    assert main(["campaign", "create", str(tmp_path / "c.db"), "--plan", str(plan), "--sheet", "x.tsv"]) == 2
    assert "--plan DIR names the sheet and the sidecar" in capsys.readouterr().err
