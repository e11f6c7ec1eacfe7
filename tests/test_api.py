"""The Python API (``kgeval.api``): test sets against their files, evaluation against ir_measures (pytrec_eval)
and the ``kgeval evaluate`` command on the same run, placement against the command's ``placement.csv``, and the
worked example of ``docs/guide/python-api.md`` executed as written."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from helpers import random_scorer, write_run

import kgeval
from kgeval.api import (
    DataUnavailableError,
    compare,
    data_files,
    evaluate,
    load_testset,
    place,
    resolve_measures,
)
from kgeval.cli import main as cli_main
from kgeval.data.kg import KnowledgeGraph
from kgeval.data.questions import load_questions
from kgeval.errors import InputError
from kgeval.metrics.steps import evaluate_testset

SC = "Synth-Test-S-C"
STUDY = ("Alpha", "Beta", "Gamma")


def _cli_evaluate(workdir: Path, systems: list[Path], out: Path, results: Path, *extra: str) -> None:
    assert cli_main(["evaluate", *map(str, systems), "--dataset", "Synth", "--out", str(out),
                     "--config", str(workdir / "config/tiny.yaml"), "--schema", str(workdir / "config/schema.yaml"),
                     "--resources", str(workdir / "resources"), "--testsets", SC, "--bootstrap", "20",
                     "--results", str(results), *extra]) == 0


@pytest.fixture(scope="module")
def api_work(workdir, tmp_path_factory):
    """The synthetic workflow folder with a study of three systems on Synth-Test-S-C in its results/ (written by
    the pipeline's own evaluate_testset), and one more run to evaluate."""
    kg = KnowledgeGraph.load(workdir / "resources/datasets/Synth/kg.npz")
    qs = load_questions(workdir / f"resources/testsets/{SC}.questions.tsv", kg)
    runs = tmp_path_factory.mktemp("api_runs")
    for k, name in enumerate(STUDY):
        write_run(runs / f"{name}.run", kg, qs, random_scorer(kg, seed=10 + k), depth=100)
    write_run(runs / f"{SC}.run", kg, qs, random_scorer(kg, seed=77), depth=60)
    dumps = tmp_path_factory.mktemp("api_study")
    _cli_evaluate(workdir, [f"{SC}={runs / f'{s}.run'}" for s in STUDY], dumps, dumps / "none",
                  *[a for s in STUDY for a in ("--name", s)])
    m = workdir / "results" / "metrics" / SC
    if not (m / "evaluation.csv").is_file():
        m.mkdir(parents=True, exist_ok=True)
        evaluate_testset({s: str(dumps / "dumps" / s / SC) for s in STUDY}, workdir / "resources/datasets/Synth/kg.npz",
                         m / "evaluation.csv", m / "lp_per_rel_type.csv", m / "per_question.parquet",
                         m / "per_answer.parquet", measures=["map_cut_20", "ndcg_cut_20", "P_10", "unjudged_10"])
    return workdir, runs / f"{SC}.run", kg


def test_version_and_lazy_exports():
    assert kgeval.__version__ == "0.1.0"
    assert kgeval.evaluate is evaluate and kgeval.load_testset is load_testset
    assert set(kgeval.__all__) >= {"load_testset", "evaluate", "place", "compare"}


def test_data_files_are_the_rules_outputs():
    """The API's one mapping of the data stage's files equals the outputs rules prepare_kg and build_testset
    declare."""
    rules = (ROOT / "workflow/rules/data.smk").read_text()
    templates = dict(re.findall(r'^(\w+) = "([^"]+)"$', (ROOT / "workflow/rules/paths.smk").read_text(), re.M))
    declared = {key: templates[name]
                for key, name in re.findall(r"^\s+(kg|judgments|questions)=(\w+),$", rules, re.M)}
    files = data_files("/w", "{dataset}", "{testset}")
    assert str(files["kg"]) == "/w/" + declared["kg"]
    assert str(files["tsv"]) == "/w/" + declared["judgments"]
    assert str(files["questions"]) == "/w/" + declared["questions"]


def test_measure_names_resolve_onto_the_registry():
    assert resolve_measures(["MRR", "Hits@10", "MR", "zmrr", "micro_mrr", "nDCG@20", "AP@20", "P@10", "RR",
                             "Success@10", "R@100", "ndcg_cut_20", "RR@10"]) == [
        ("MRR", "micro_mrr", "macro_mrr"), ("Hits@10", "micro_hits@10", "macro_hits@10"),
        ("MR", "micro_mr", "macro_mr"), ("zmrr", "micro_zmrr", "macro_zmrr"), ("micro_mrr", "micro_mrr", None),
        ("nDCG@20", None, "ndcg_cut_20"), ("AP@20", None, "map_cut_20"), ("P@10", None, "P_10"),
        ("RR", None, "recip_rank"), ("Success@10", None, "success_10"), ("R@100", None, "recall_100"),
        ("ndcg_cut_20", None, "ndcg_cut_20"), ("RR@10", None, "recip_rank")]
    with pytest.raises(ValueError, match="unknown measure 'Foo@3'"):
        resolve_measures(["Foo@3"])


def test_load_testset_matches_its_files(api_work):
    workdir, _, kg = api_work
    sc = load_testset(SC, workdir=workdir, config="config/tiny.yaml")
    raw = pd.read_csv(workdir / f"resources/testsets/{SC}.tsv", sep="\t")
    qfile = pd.read_csv(workdir / f"resources/testsets/{SC}.questions.tsv", sep="\t")
    assert sc.dataset == "Synth" and sc.depth is None
    assert sc.questions["qid"].tolist() == qfile["qid"].tolist()
    # every positive triple is the relevant answer of its head and its tail question (one row per side)
    assert len(sc.answers) == 2 * int((raw["label"] == 1).sum())
    assert int(sc.qrels["relevance"].sum()) == len(sc.answers)
    # a tail question (h, r, ?) has the tails of the positives (h, r, t) as answers
    q = qfile[qfile["side"] == "tail"].iloc[0]
    expect = set(raw[(raw["head"] == q["entity"]) & (raw["relation"] == q["relation"]) & (raw["label"] == 1)]["tail"])
    assert set(sc.answers[sc.answers["qid"] == q["qid"]]["docno"]) == expect
    # FB-Test-S-C(d): only judgments made at pooling depth <= d
    d = int(raw["depth"].max()) - 1
    cut = load_testset(f"{SC}({d})", workdir=workdir, config="config/tiny.yaml")
    assert cut.name == f"{SC}({d})" and cut.depth == d
    assert len(cut.answers) == 2 * int(((raw["label"] == 1) & (raw["depth"] <= d)).sum()) < len(sc.answers)
    with pytest.raises(ValueError, match="not a pooled test set"):
        load_testset("Synth-Test-O", depth=2, workdir=workdir, config="config/tiny.yaml")
    with pytest.raises(KeyError, match="'Nope' is not a test set"):
        load_testset("Nope", workdir=workdir, config="config/tiny.yaml")


def test_missing_data_without_a_workflow_names_the_command(tmp_path):
    (tmp_path / "config").mkdir()
    for f in ("tiny.yaml", "schema.yaml"):
        shutil.copy(ROOT / "config" / f, tmp_path / "config" / f)
    with pytest.raises(DataUnavailableError, match=r"snakemake --cores 1 .*Synth-Test-O\.tsv"):
        load_testset("Synth-Test-O", workdir=tmp_path, config="config/tiny.yaml", build=False)


@pytest.mark.peer
def test_evaluate_equals_the_command_and_ir_measures(api_work, tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    workdir, run_path, kg = api_work
    sc = load_testset(SC, workdir=workdir, config="config/tiny.yaml")
    measures = ["MRR", "Hits@10", "MR", "nDCG@20", "RR@10", "P@10", "RR"]
    res = evaluate(run_path, sc, measures=measures, name="Mine", bootstrap=20)
    assert res.run_depth == 60 and not res.run_complete
    agg = res.aggregate.set_index("measure")
    assert np.isnan(agg.loc["MR", "micro"]) and np.isnan(agg.loc["nDCG@20", "micro"])  # cut run; per question

    # the command on the same run file: the same evaluation.csv values
    _cli_evaluate(workdir, [run_path], tmp_path / "cli", tmp_path / "none", "--name", "Mine")
    cli = pd.read_csv(tmp_path / "cli" / "evaluation.csv").iloc[0]
    for measure, agg_name, column in [("MRR", "micro", "micro_mrr"), ("MRR", "macro", "macro_mrr"),
                                      ("Hits@10", "micro", "micro_hits@10"), ("Hits@10", "macro", "macro_hits@10"),
                                      ("nDCG@20", "macro", "ndcg_cut_20"), ("RR", "macro", "recip_rank"),
                                      ("P@10", "macro", "P_10")]:
        assert res.value(measure, agg_name) == pytest.approx(cli[column], abs=1e-10)  # the csv keeps 10 decimals, measure
    assert res.table["micro_mrr_lo"].iloc[0] == pytest.approx(cli["micro_mrr_lo"], abs=1e-10)

    # ir_measures (pytrec_eval) on the run without the entities the macro filter removes (a question's train ∪
    # valid answers), which kgeval drops itself
    known = set()
    for h, r, t in np.concatenate([kg.splits["train"], kg.splits["valid"]]).tolist():
        known.add(("tail", kg.entities[h], kg.relations[r], kg.entities[t]))
        known.add(("head", kg.entities[t], kg.relations[r], kg.entities[h]))
    run = pd.read_csv(run_path, sep=" ", header=None, names=["query_id", "Q0", "doc_id", "rank", "score", "tag"])
    q = sc.questions.set_index("qid")
    keep = [(q.at[a, "side"], q.at[a, "entity"], q.at[a, "relation"], d) not in known
            for a, d in zip(run["query_id"], run["doc_id"])]
    run = run[keep]
    assert len(run) < len(pd.read_csv(run_path, sep=" ", header=None))  # the filter removed something
    qrels = sc.qrels.rename(columns={"qid": "query_id", "docno": "doc_id"})
    theirs = ir_measures.calc_aggregate([ir_measures.RR @ 10, ir_measures.RR, ir_measures.nDCG @ 20,
                                         ir_measures.P @ 10], qrels, run[["query_id", "doc_id", "score"]])
    assert res.value("RR@10") == pytest.approx(theirs[ir_measures.RR @ 10], abs=1e-12)
    assert res.value("RR") == pytest.approx(theirs[ir_measures.RR], abs=1e-12)
    assert res.value("nDCG@20") == pytest.approx(theirs[ir_measures.nDCG @ 20], abs=1e-12)
    assert res.value("P@10") == pytest.approx(theirs[ir_measures.P @ 10], abs=1e-12)
    assert 0 < res.value("RR@10") < res.value("RR")

    # the same run as a DataFrame and as a dict: the same values
    as_df = evaluate(run[["query_id", "doc_id", "score"]], sc, measures=measures, name="Mine", bootstrap=20)
    as_dict = {}
    for a, d, s in zip(run["query_id"], run["doc_id"], run["score"]):
        as_dict.setdefault(a, {})[d] = float(s)
    by_dict = evaluate(as_dict, sc, measures=measures, name="Mine", bootstrap=20)
    for other in (as_df, by_dict):
        pd.testing.assert_frame_equal(other.aggregate, res.aggregate)
        pd.testing.assert_frame_equal(other.per_question, res.per_question)


def test_place_equals_the_commands_placement(api_work, tmp_path):
    workdir, run_path, _ = api_work
    sc = load_testset(SC, workdir=workdir, config="config/tiny.yaml")
    res = evaluate(run_path, sc, name="Mine", bootstrap=20)
    ours = place(res, trials=50)
    _cli_evaluate(workdir, [run_path], tmp_path / "cli", workdir / "results", "--name", "Mine",
                  "--tukey-trials", "50")
    cli = pd.read_csv(tmp_path / "cli" / "placement.csv")
    assert len(ours) == len(cli) == 6 * len(STUDY)
    for col in ("rank", "value", "opponent_value", "t_p_holm", "hsd_p", "items"):
        np.testing.assert_allclose(ours[col].to_numpy(float), cli[col].to_numpy(float), rtol=1e-9, atol=1e-10,
                                   equal_nan=True)  # the csv keeps 10 significant decimals
    # compare: the study's rows of evaluation.csv and this system's, best first by micro MRR
    table = compare(res, measures=["MRR", "nDCG@20"])
    study = pd.read_csv(workdir / "results" / "metrics" / SC / "evaluation.csv")
    assert list(table.columns) == ["rank", "#", "System", "micro_mrr", "macro_mrr", "ndcg_cut_20", "evaluated",
                                   "micro_mrr_better_than", "macro_mrr_better_than", "ndcg_cut_20_better_than"]
    expect = sorted([*zip(study["System"], study["micro_mrr"]), ("Mine", res.value("MRR", "micro"))],
                    key=lambda x: -x[1])
    assert list(table["System"]) == [s for s, _ in expect]
    np.testing.assert_allclose(table["micro_mrr"], [v for _, v in expect], rtol=1e-12)
    assert table.loc[table["evaluated"], "System"].tolist() == ["Mine"]
    assert table["rank"].tolist() == list(range(1, len(STUDY) + 2))
    depth = load_testset(f"{SC}(2)", workdir=workdir, config="config/tiny.yaml")
    with pytest.raises(ValueError, match="without a depth"):
        place(evaluate(run_path, depth, name="Mine", bootstrap=20))


def test_the_documented_example_runs(api_work, monkeypatch, capsys):
    """docs/guide/python-api.md's code blocks, executed in the workflow folder as a reader would."""
    workdir, _, _ = api_work
    pytest.importorskip("ir_measures")
    text = (ROOT / "docs/guide/python-api.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) >= 2
    monkeypatch.chdir(workdir)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "python-api.md", "exec"), namespace)
    result, placement = namespace["result"], namespace["placement"]
    assert result.value("MRR", "macro") == pytest.approx(result.per_question["MRR"].mean(), abs=1e-12)
    assert result.value("MRR", "micro") == pytest.approx(result.table["micro_mrr"].iloc[0], abs=1e-12)
    assert placement["rank"].between(1, len(STUDY) + 1).all()
    assert set(placement["Opponent"]) == set(STUDY)
    assert "Popularity" in capsys.readouterr().out
    assert os.getcwd() == str(workdir)


def test_place_falls_back_to_the_shipped_pack_and_says_so(api_work, tmp_path, monkeypatch, capsys):
    """place(): the workflow's results first; without them the shipped reference pack (same placement), named in
    attrs["reference"] and on stderr; authors:DIR ranks only."""
    import dataclasses

    from kgeval.tables.reference import pack, provenance_record

    workdir, run_path, _ = api_work
    sc = load_testset(SC, workdir=workdir, config="config/tiny.yaml")
    res = evaluate(run_path, sc, name="Mine", bootstrap=20)
    local = place(res, trials=50)
    assert local.attrs["reference"] == f"Placed among the study's systems of {workdir / 'results'}/metrics/ " \
                                       "(local results)."
    m = workdir / "results" / "metrics" / SC
    clone = tmp_path / "clone"
    pack({SC: m / "evaluation.csv"}, {SC: m / "per_answer.parquet"}, {SC: m / "per_question.parquet"},
         clone / "reference" / "smoke", provenance_record({}, "smoke", 2, 3))
    monkeypatch.chdir(clone)
    bare = dataclasses.replace(res, testset=dataclasses.replace(sc, workdir=tmp_path / "empty"))
    shipped = place(bare, trials=50)
    assert shipped.attrs["reference"].startswith("Placed among the study's systems of the shipped reference "
                                                 "reference/smoke/metrics/, packed from the 'smoke'")
    assert "shipped reference reference/smoke" in capsys.readouterr().err
    pd.testing.assert_frame_equal(shipped, local)
    (tmp_path / "release" / SC).mkdir(parents=True)
    pd.DataFrame({"System": ["P", "Q"], "micro_mrr": [1.0, 0.0]}).to_csv(tmp_path / "release" / SC /
                                                                        "evaluation.csv", index=False)
    ranked = place(res, results=f"authors:{tmp_path / 'release'}")
    assert ranked["rank"].tolist() == [2, 2] and ranked["t_p"].isna().all()
    assert "rank only" in ranked.attrs["reference"] and "no significance test" in ranked.attrs["reference"]
    # a released system of the evaluated system's name is refused here too, as kgeval evaluate refuses it
    (tmp_path / "clash" / SC).mkdir(parents=True)
    pd.DataFrame({"System": ["Mine", "Q"], "micro_mrr": [1.0, 0.0]}).to_csv(tmp_path / "clash" / SC /
                                                                           "evaluation.csv", index=False)
    with pytest.raises(InputError, match=r"clash/.*evaluation.csv.*'Mine' is also a released system"):
        place(res, results=f"authors:{tmp_path / 'clash'}")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="No results folder .* and no shipped reference"):
        place(bare)


def test_compare_marks_significance_as_placement_and_scipy(api_work):
    """compare()'s marks (ranx.compare's superscripts): for the evaluated system, exactly placement's significant
    and better opponents (paired t-test with Holm over its comparisons; Tukey HSD); for every system, scipy's
    paired t-test with Holm's step-down applied by hand over that system's comparisons."""
    from scipy import stats

    from kgeval.external.placement import _study_items

    workdir, _, _ = api_work
    sc = load_testset(SC, workdir=workdir, config="config/tiny.yaml")
    # a strong system (every answer first, then a fixed list): significantly better than the random study systems
    rest = sc.questions[["qid"]].merge(pd.DataFrame({"docno": sorted(set(sc.qrels["docno"]))[:30]}), how="cross")
    run = pd.concat([sc.answers.assign(score=100.0), rest.assign(score=1.0)]).drop_duplicates(["qid", "docno"])
    res = evaluate(run, sc, name="Oracle", bootstrap=20)
    cols = ["micro_mrr", "macro_mrr"]
    placed = place(res, metrics=cols, trials=200)
    for test, flag in (("student", "significant_t"), ("tukey", "significant_hsd")):
        table = compare(res, measures=["MRR"], test=test, trials=200)
        assert table.attrs["test"] == test and table["#"].tolist() == list("abcd")
        letter = dict(zip(table["System"], table["#"]))
        mine = table.set_index("System").loc["Oracle"]
        for c in cols:
            rows = placed[placed["Metric"] == c]
            expect = sorted(letter[o] for o in rows.loc[rows[flag] & rows["better"], "Opponent"])
            assert len(expect) == len(STUDY)  # not vacuous: better than all three
            assert sorted(filter(None, mine[f"{c}_better_than"].split(","))) == expect
    # every row's marks against scipy + Holm by hand (micro MRR: one item per answer)
    table = compare(res, measures=["MRR"], test="student")
    items = _study_items(workdir / "results/metrics" / SC / "per_answer.parquet", "micro", ["micro_mrr"])
    wide = items.pivot_table(index=["qid", "entity"], columns="System", values="micro_mrr")
    wide = wide.join(res.evaluation.per_answer.set_index(["qid", "entity"])["micro_mrr"].rename("Oracle"),
                     how="inner")
    systems = table["System"].tolist()
    X = wide[systems].dropna().to_numpy()
    for a, name in enumerate(systems):
        others = [b for b in range(len(systems)) if b != a]
        p = np.array([stats.ttest_rel(X[:, a], X[:, b]).pvalue for b in others])
        order = np.argsort(p)
        adj = np.minimum(np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order]), 1)
        holm = np.empty_like(p)
        holm[order] = adj
        means = X.mean(0)
        expect = [table["#"][b] for b, q in zip(others, holm) if q < 0.05 and means[a] > means[b]]
        assert table.loc[a, "micro_mrr_better_than"] == ",".join(expect), name
    md = table.markdown()
    assert md.splitlines()[2] == "| # | Model | Micro MRR | Macro MRR |"
    assert md.splitlines()[4].startswith("| a | Oracle | **") and "<sup>bcd</sup>" in md.splitlines()[4]
    tex = table.latex()
    assert "\\toprule" in tex and "$^{bcd}$" in tex and "\\hphantom{$^{acd}$}" in tex


@pytest.mark.peer
def test_to_ranx_gives_kgevals_values_in_ranx(api_work):
    """TestCollection.to_ranx() and Result.to_ranx(): ranx.evaluate on them gives kgeval's per-question values
    (a run without ties: ranx orders tied scores its own way)."""
    ranx = pytest.importorskip("ranx")
    workdir, _, kg = api_work
    from helpers import random_scorer, write_run

    from kgeval.data.questions import load_questions

    qs = load_questions(workdir / f"resources/testsets/{SC}.questions.tsv", kg)
    path = workdir.parent / "untied.run"
    write_run(path, kg, qs, random_scorer(kg, seed=5, ties=False), depth=40)
    sc = load_testset(SC, workdir=workdir, config="config/tiny.yaml")
    res = evaluate(path, sc, measures=["RR", "nDCG@20", "P@10", "R@20"], name="Mine", bootstrap=20)
    qrels, run = sc.to_ranx(), res.to_ranx()
    assert run.name == "Mine" and len(run) == len(sc.questions) and len(qrels) == len(sc.questions)
    # the evaluated run: at most 40 documents a question, none of the question's train ∪ valid answers
    assert res.run.groupby("qid").size().max() <= 40 and len(res.run) < 40 * len(sc.questions)
    theirs = ranx.evaluate(qrels, run, ["mrr", "ndcg@20", "precision@10", "recall@20"])
    for ours, key in (("RR", "mrr"), ("nDCG@20", "ndcg@20"), ("P@10", "precision@10"), ("R@20", "recall@20")):
        assert res.value(ours) == pytest.approx(theirs[key], abs=1e-12), ours
