"""``kgeval evaluate``'s placement among the study's systems, breakdowns, pool coverage and summaries.

Hand-made item tables for the placement (items matched by key: the tables are shuffled), scipy's paired t-test
and a hand-computed Holm correction; a fake results folder of three study systems written by the pipeline's own
``evaluate_testset`` for the command; the annotation round trip with hand-filled sheets.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import random_scorer, write_run
from scipy import stats

from kgeval.analysis.significance import holm, paired_t_pvalues, tukey_hsd_pvalues
from kgeval.cli import main as cli_main
from kgeval.data.labels import read_labels
from kgeval.data.questions import load_questions
from kgeval.external.placement import place, placement_table
from kgeval.external.report import letters
from kgeval.external.unjudged import unjudged
from kgeval.metrics.evaluate import evaluate, per_category, qrels_at_depth
from kgeval.metrics.steps import evaluate_testset
from kgeval.pools.annotation import EXPORT_HEADER, export_disagreements, merge, read_export
from kgeval.scores.dumps import load_dump

TESTSETS = ("Synth-Test-O", "Synth-Test-S", "Synth-Test-S-C")
STUDY = ("Alpha", "Beta", "Gamma")


# ---- Holm and the placement of one system, by hand ------------------------------------------------------------
def test_holm_hand_computed():
    # sorted 0.01, 0.03, 0.04 -> 3·0.01, 2·0.03, 1·0.04 = 0.03, 0.06, 0.04 -> running max 0.03, 0.06, 0.06
    assert holm(np.array([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.06, 0.06])
    # a NaN is out of the family (m = 2) and stays NaN; the cap is 1
    out = holm(np.array([0.01, np.nan, 0.04]))
    assert out[[0, 2]] == pytest.approx([0.02, 0.04]) and np.isnan(out[1])
    assert holm(np.array([0.6, 0.7])).tolist() == [1.0, 1.0]


def test_paired_t_equals_scipy():
    X = np.random.default_rng(3).random((40, 3))
    i, j, p = paired_t_pvalues(X)
    for a, b, pv in zip(i, j, p):
        assert pv == pytest.approx(stats.ttest_rel(X[:, a], X[:, b]).pvalue, rel=1e-10)


def _study(rng, n_q=30):
    """Per-question values of three study systems (rows shuffled) and their summary table."""
    qids = [f"q{i}" for i in range(n_q)]
    vals = {"Alpha": rng.random(n_q) * 0.4, "Beta": rng.random(n_q) * 0.4 + 0.3, "Gamma": rng.random(n_q) * 0.4 + 0.1}
    long = pd.concat([pd.DataFrame({"qid": qids, "System": s, "macro_mrr": v}) for s, v in vals.items()])
    long = long.sample(frac=1, random_state=1).reset_index(drop=True)
    evaluation = pd.DataFrame({"System": list(vals), "macro_mrr": [v.mean() for v in vals.values()]})
    return qids, vals, long, evaluation


def test_place_matches_items_by_key():
    rng = np.random.default_rng(0)
    qids, vals, long, evaluation = _study(rng)
    mine = rng.random(len(qids)) * 0.4 + 0.2
    # the evaluated system's table in reverse order, with an item the study does not have
    own = pd.DataFrame({"qid": qids[::-1] + ["extra"], "macro_mrr": list(mine[::-1]) + [1.0]})
    summary = {"macro_mrr": float(mine.mean())}
    out = place("Mine", "T", summary, pd.DataFrame(columns=["qid", "entity"]), own, evaluation,
                {"micro": pd.DataFrame(), "macro": long}, metrics=["macro_mrr"], trials=200)
    assert list(out["Opponent"]) == list(STUDY) and (out["items"] == len(qids)).all()
    t = [stats.ttest_rel(mine, vals[s]).pvalue for s in STUDY]
    assert out["t_p"].to_numpy() == pytest.approx(t, rel=1e-10)
    assert out["t_p_holm"].to_numpy() == pytest.approx(holm(np.array(t)))
    # the randomised test permutes item by item: same items in the same order (sorted by key) = same p-values
    X = np.column_stack([vals[s] for s in STUDY] + [mine])[np.argsort(qids)]
    i, j, p = tukey_hsd_pvalues(X, 200, 0)
    assert out["hsd_p"].to_numpy() == pytest.approx(p[j == 3])
    better = sum(v.mean() > mine.mean() for v in vals.values())
    assert (out["rank"] == 1 + better).all() and (out["systems"] == 4).all()
    assert list(out["better"]) == [mine.mean() > vals[s].mean() for s in STUDY]
    assert list(out["significant_t"]) == list(holm(np.array(t)) < 0.05)


def test_place_reads_direction_from_the_registry():
    """micro_mr is lower-is-better: the system with the smallest MR ranks first."""
    evaluation = pd.DataFrame({"System": ["A", "B"], "micro_mr": [10.0, 30.0]})
    items = pd.DataFrame({"qid": ["h0", "h0", "h1", "h1"], "entity": [1, 1, 2, 2], "System": ["A", "B", "A", "B"],
                          "micro_mr": [9.0, 29.0, 11.0, 31.0]})
    own = pd.DataFrame({"qid": ["h1", "h0"], "entity": [2, 1], "micro_mr": [21.0, 19.0]})
    out = place("Mine", "T", {"micro_mr": 20.0}, own, pd.DataFrame(), evaluation, {"micro": items, "macro": items},
                metrics=["micro_mr"], trials=20)
    assert (out["rank"] == 2).all() and list(out["better"]) == [False, True]
    # differences -11, -9 (vs A: mean -10) and 10, 10 (vs B: sd 0, p = 0)
    assert out["t_p"].iloc[0] == pytest.approx(stats.ttest_rel([19.0, 21.0], [9.0, 11.0]).pvalue)
    assert out["t_p"].iloc[1] == 0.0


def test_letters_follow_ranx():
    assert letters(3) == ["a", "b", "c"] and letters(28)[25:] == ["z", "aa", "ab"]


# ---- a results folder of three study systems, and the command -------------------------------------------------
@pytest.fixture(scope="module")
def study_results(workdir, synth_kg, tmp_path_factory):
    """results/metrics/<test set>/ of three study systems (depth-100 runs), written by the pipeline's own
    evaluate_testset from kgeval evaluate's dumps."""
    runs = tmp_path_factory.mktemp("study_runs")
    for k, name in enumerate(STUDY):
        (runs / name).mkdir()
        for t in TESTSETS:
            qs = load_questions(workdir / f"resources/testsets/{t}.questions.tsv", synth_kg)
            write_run(runs / name / f"{t}.run", synth_kg, qs, random_scorer(synth_kg, seed=10 + k, ties=False),
                      depth=100)
    dumps = tmp_path_factory.mktemp("study_eval")
    assert cli_main(["evaluate", *(str(runs / s) for s in STUDY), "--dataset", "Synth", "--out", str(dumps),
                     "--config", str(workdir / "config/tiny.yaml"), "--schema", str(workdir / "config/schema.yaml"), "--resources", str(workdir / "resources"),
                     "--bootstrap", "20", "--results", str(dumps / "none")]) == 0
    results = tmp_path_factory.mktemp("results")
    for t in TESTSETS:
        m = results / "metrics" / t
        m.mkdir(parents=True)
        evaluate_testset({s: str(dumps / "dumps" / s / t) for s in STUDY}, workdir / "resources/datasets/Synth/kg.npz",
                         m / "evaluation.csv", m / "lp_per_rel_type.csv", m / "per_question.parquet",
                         m / "per_answer.parquet", measures=["map_cut_20", "ndcg_cut_20", "P_10", "unjudged_10"])
    return results


def _evaluate(workdir, tmp_path, results, *extra):
    runs = tmp_path / "Mine"
    runs.mkdir(exist_ok=True)
    for t in TESTSETS:
        qs = load_questions(workdir / f"resources/testsets/{t}.questions.tsv", synth_kg_of(workdir))
        write_run(runs / f"{t}.run", synth_kg_of(workdir), qs, random_scorer(synth_kg_of(workdir), seed=99,
                                                                             ties=False), depth=50)
    out = tmp_path / "eval"
    rc = cli_main(["evaluate", str(runs), "--dataset", "Synth", "--out", str(out), "--config",
                   str(workdir / "config/tiny.yaml"), "--schema", str(workdir / "config/schema.yaml"),
                   "--resources", str(workdir / "resources"), "--bootstrap", "20",
                   "--results", str(results), "--tukey-trials", "50", *extra])
    return rc, out


def synth_kg_of(workdir):
    from kgeval.data.kg import KnowledgeGraph

    return KnowledgeGraph.load(workdir / "resources/datasets/Synth/kg.npz")


def test_evaluate_places_breaks_down_and_summarises(workdir, study_results, tmp_path, capsys):
    kg = synth_kg_of(workdir)
    rc, out = _evaluate(workdir, tmp_path, study_results)
    assert rc == 0
    printed = capsys.readouterr().out
    assert printed.count(f"Placed among the study's systems of {study_results}/metrics/") == 1  # said once
    pl = pd.read_csv(out / "placement.csv")
    assert set(pl["TestSet"]) == set(TESTSETS) and set(pl["Opponent"]) == set(STUDY)
    assert set(pl["Metric"]) == {"micro_mrr", "micro_hits@10", "macro_mrr", "macro_hits@10", "map_cut_20",
                                 "ndcg_cut_20"}
    assert (out / "placement.png").stat().st_size > 10_000
    # rank and t-test against the study's files, recomputed here by key
    mine = pd.read_csv(out / "evaluation.csv").set_index("TestSet")
    for t in TESTSETS:
        ev = pd.read_csv(study_results / "metrics" / t / "evaluation.csv").set_index("System")
        pa = pd.read_parquet(study_results / "metrics" / t / "per_answer.parquet")
        dump = load_dump(out / "dumps/Mine" / t)
        own = evaluate(dump, qrels_at_depth(dump), measures=[]).per_answer
        for m in ("micro_mrr", "macro_mrr"):
            row = pl[(pl["TestSet"] == t) & (pl["Metric"] == m)].set_index("Opponent")
            assert (row["rank"] == 1 + (ev[m] > mine.loc[t, m]).sum()).all()
            assert row["value"].iloc[0] == pytest.approx(mine.loc[t, m])
        row = pl[(pl["TestSet"] == t) & (pl["Metric"] == "micro_mrr")].set_index("Opponent")
        for s in STUDY:
            theirs = pa[pa["System"] == s].set_index(["qid", "entity"])["micro_mrr"]
            ours = own.set_index(["qid", "entity"])["micro_mrr"].reindex(theirs.index)
            assert row.loc[s, "t_p"] == pytest.approx(stats.ttest_rel(ours, theirs).pvalue, rel=1e-9)
            assert row.loc[s, "items"] == len(theirs)
        assert row["t_p_holm"].to_numpy() == pytest.approx(holm(row["t_p"].to_numpy()))

    # breakdowns: the pipeline's per-category rows; per relation, means over the relation's answers / questions
    cats = pd.read_csv(out / "per_category.csv")
    dump = load_dump(out / "dumps/Mine/Synth-Test-S-C")
    ev = evaluate(dump, qrels_at_depth(dump), kg.relation_category, measures=["map_cut_20", "ndcg_cut_20"])
    ref = per_category(ev)
    got = cats[cats["TestSet"] == "Synth-Test-S-C"].reset_index(drop=True)
    assert got["micro_mrr"].to_numpy() == pytest.approx(ref["micro_mrr"].to_numpy())
    assert got["micro_mr"].isna().all()  # a depth-50 run knows no MR
    rel = pd.read_csv(out / "per_relation.csv")
    rel = rel[rel["TestSet"] == "Synth-Test-S-C"].set_index("relation")
    r0 = int(ev.per_question["relation"].iloc[0])
    assert rel.loc[r0, "macro_mrr"] == pytest.approx(ev.per_question.query("relation == @r0")["macro_mrr"].mean())
    assert rel.loc[r0, "answers"] == (ev.per_answer["relation"] == r0).sum()
    assert rel["questions"].sum() == len(ev.per_question) and rel["answers"].sum() == len(ev.per_answer)

    # pool coverage: the share per question is the system's unjudged_10 on the pooled set
    uq = pd.read_csv(out / "unjudged_questions.csv")
    ev10 = evaluate(dump, qrels_at_depth(dump), measures=["unjudged_10"]).per_question.set_index("qid")
    assert uq.set_index("qid")["unjudged_share"].to_numpy() == pytest.approx(
        ev10.loc[uq["qid"], "unjudged_10"].to_numpy())
    ut = pd.read_csv(out / "unjudged.csv")
    assert len(ut) == uq["unjudged"].sum() and (ut["rank"] <= 10).all()
    sheet = read_export(out / "annotation_sheet.tsv")
    assert len(sheet) == len(ut[~ut["known_fact"]][["head", "relation", "tail"]].drop_duplicates())

    # summaries: ranx-style letters, superscripts where the Holm-corrected t-test says so
    md = (out / "summary.md").read_text()
    tex = (out / "summary.tex").read_text()
    for text in (md, tex):
        assert "Synth-Test-S-C" in text and "realistic" in text and "docno descending" in text
    assert "| d | **Mine** |" in md and "50 (cut)" in md and r"\textbf{Mine}" in tex
    assert "| a | Alpha |" in md and md.split("| a | Alpha |")[1].split("\n")[0].endswith("| cut run |")
    assert "train $\\cup$ valid" in tex and "Holm" in md
    sig = pl[(pl["TestSet"] == "Synth-Test-O") & (pl["Metric"] == "micro_mrr")].set_index("Opponent")
    section = md.split("### Synth-Test-O")[1].split("###")[0]
    mine_row = next(line for line in section.splitlines() if "**Mine**" in line)
    expected = "".join(c for c, s in zip("abc", STUDY) if sig.loc[s, "significant_t"] and sig.loc[s, "better"])
    micro_cell = mine_row.split("|")[3]
    assert (f"<sup>{expected}</sup>" in micro_cell) if expected else ("<sup>" not in micro_cell)


def test_annotation_round_trip_extends_the_pool(workdir, study_results, tmp_path):
    """The sheet is the annotation export: two hand-filled copies (one disagreement), the adjudication, the
    merge; the merged judgments cover every triple of the sheet."""
    kg = synth_kg_of(workdir)
    rc, out = _evaluate(workdir, tmp_path, study_results)
    assert rc == 0
    sheet = out / "annotation_sheet.tsv"
    rows = list(csv.reader(sheet.open(encoding="utf-8"), delimiter="\t"))
    assert rows[0] == EXPORT_HEADER and len(rows) > 2

    def fill(path: Path, flip: str | None) -> None:
        body = []
        for r in rows[1:]:
            yes = int(r[1]) % 3 == 0 if r[1] != flip else int(r[1]) % 3 != 0
            body.append(r[:8] + (["Y", "https://en.wikipedia.org/wiki/X", ""] if yes else ["N", "", "checked"]))
        with path.open("w", encoding="utf-8", newline="") as fh:
            csv.writer(fh, delimiter="\t", lineterminator="\n").writerows([rows[0]] + body)

    fill(tmp_path / "a.tsv", None)
    fill(tmp_path / "b.tsv", "2")  # annotator B answers item 2 the other way
    assert export_disagreements(sheet, tmp_path / "a.tsv", tmp_path / "b.tsv", tmp_path / "adj.tsv") == ["2"]
    adj = list(csv.reader((tmp_path / "adj.tsv").open(encoding="utf-8"), delimiter="\t"))
    adj[1][8:11] = ["N", "", "adjudicated"]
    with (tmp_path / "adj.tsv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter="\t", lineterminator="\n").writerows(adj)
    rep = merge(sheet, tmp_path / "a.tsv", tmp_path / "b.tsv", tmp_path / "adj.tsv", tmp_path / "new.txt",
                tmp_path / "report.json")
    assert rep["items"] == len(rows) - 1 and rep["disagreements"] == 1
    labels = read_labels(tmp_path / "new.txt", kg)
    assert labels[tuple(kg.entity_id(x) if i != 1 else kg.relation_id(x)
                        for i, x in enumerate(rows[2][2:5]))][0] == 0  # item 2: the adjudicator's N
    # re-checked with the new judgments, the system's top 10 has no unjudged triple left but known facts
    dump = load_dump(out / "dumps/Mine/Synth-Test-S-C")
    _, before = unjudged(dump, kg, 10)
    q, after = unjudged(dump, kg, 10, extra=np.array(list(labels), dtype=np.int64))
    assert (~before["known_fact"]).sum() > 0 and not (~after["known_fact"]).any()
    assert q["unjudged"].sum() == after["known_fact"].sum()


def test_no_results_folder_skips_placement(workdir, tmp_path, capsys):
    rc, out = _evaluate(workdir, tmp_path, tmp_path / "nowhere")
    assert rc == 0
    assert (f"No results folder {tmp_path / 'nowhere'} and no shipped reference (reference/default, reference/smoke) "
            "with tables of Synth-Test-O, Synth-Test-S, Synth-Test-S-C: placement skipped") in capsys.readouterr().out
    assert (out / "evaluation.csv").is_file() and not (out / "placement.csv").exists()
    md = (out / "summary.md").read_text()
    assert "| a | **Mine** |" in md and "<sup>" not in md


def test_bad_results_folder_and_name_clash(workdir, study_results, tmp_path, capsys):
    broken = tmp_path / "results"
    shutil.copytree(study_results, broken)
    (broken / "metrics/Synth-Test-S/per_question.parquet").unlink()
    rc, out = _evaluate(workdir, tmp_path, broken)
    assert rc == 2 and not (out / "dumps").exists()
    err = capsys.readouterr().err
    assert f"{broken / 'metrics/Synth-Test-S/per_question.parquet'}: missing: placement needs" in err
    rc, _ = _evaluate(workdir, tmp_path, study_results, "--name", "Beta")
    assert rc == 2
    err = capsys.readouterr().err
    assert "evaluation.csv: system name 'Beta' is also a study system here; label yours with --name" in err
    assert len(err.strip().splitlines()) == 1


def test_placement_table_needs_shared_items(study_results):
    """A study table whose items share nothing with the system's gives no p-values (not an error)."""
    from kgeval.external.placement import study_files

    files = study_files(study_results, ["Synth-Test-O"])

    class Ev:
        summary = {"macro_mrr": 0.5}
        per_answer = pd.DataFrame({"qid": ["zz"], "entity": [0], "micro_mrr": [1.0]})
        per_question = pd.DataFrame({"qid": ["zz"], "macro_mrr": [0.5]})

    out = placement_table({("Mine", "Synth-Test-O"): Ev()}, files, metrics=["macro_mrr"], trials=10)
    assert (out["items"] == 0).all() and out["t_p"].isna().all() and not out["significant_t"].any()
