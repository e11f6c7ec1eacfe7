"""Pair decisions of ``kgeval evaluate``: an outside system against each study system under every labelling of
the unjudged triples (``kgeval.bounds.placement``), by hand and through the command on the tiny fixtures."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from helpers import random_scorer, write_run

from kgeval.bounds.pairs import decisions, pair_bounds
from kgeval.bounds.placement import one_against_many
from kgeval.cli import main as cli_main
from kgeval.data.questions import load_questions
from kgeval.judgments.labels import match_positions, state
from kgeval.judgments.metrics import bounded_metric as metric
from kgeval.metrics.evaluate import Qrels, qrels_at_depth
from kgeval.metrics.steps import evaluate_testset
from kgeval.scores.dumps import load_dump

POOLED = "Synth-Test-S-C"
STUDY = ("Alpha", "Beta")


def test_one_against_two_by_hand():
    """k = 2, three questions. Judged: q0 {1: rel, 2: non}, q1 {4: rel}, q2 {7: rel, 8: non, 9: non}; 3, 5 and 6
    are unjudged. Δ = M_X − M_study, per question then the mean:

    P@2, X − A: q0 0.5 + 0.5·x3 − 0.5·x3 = 0.5; q1 0.5·(x5 − x6) ∈ [−0.5, 0.5]; q2 0 → [0, 1/3], undecided.
    P@2, X − B: q0 0.5·x3 ∈ [0, 0.5]; q1 0 (5 is an unknown both list: it cancels); q2 0.5 → [1/6, 1/3], decided.
    Success@2, X − A: q0 1 − x3 ∈ [0, 1]; q1 0; q2 0 → [0, 1/3], undecided; X − B: 0, 0, 1 → 1/3, decided.
    RR@2, X − A: q0 1 − x3 ∈ [0, 1]; q1 max(x5, 1/2) − 1 ∈ [−1/2, 0]; q2 1/2 − 1 → [−1/3, 1/6], undecided;
    X − B: 0; max(x5, 1/2) − 1 ∈ [−1/2, 0]; 1/2 → [0, 1/6], undecided."""
    own = np.array([[1, 3], [5, 4], [8, 7]])
    study = np.array([[[3, 2], [4, 6], [7, 8]],   # A
                      [[1, 2], [4, 5], [8, 9]]])  # B
    qrels = Qrels(np.array([0, 0, 1, 2, 2, 2]), np.array([1, 2, 4, 7, 8, 9]), np.array([1, 0, 1, 1, 0, 0], np.int8))
    got = one_against_many(own, study, qrels, 10, ("P", "Success", "RR"))
    expected = {"P@2": ([0, 1 / 6], [1 / 3, 1 / 3], [False, True]),
                "Success@2": ([0, 1 / 3], [1 / 3, 1 / 3], [False, True]),
                "RR@2": ([-1 / 3, 0], [1 / 6, 1 / 6], [False, False])}
    assert list(got) == list(expected)
    for name, (lo, hi, decided) in expected.items():
        np.testing.assert_allclose(got[name][0], lo, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(got[name][1], hi, atol=1e-12, err_msg=name)
        assert got[name][2].tolist() == decided, name


def test_questions_without_a_relevant_entity_are_left_out():
    """The macro filter: a fourth question with no relevant judgment does not dilute the mean."""
    own = np.array([[1, 3], [5, 4], [8, 7], [0, 1]])
    study = np.array([[[3, 2], [4, 6], [7, 8], [2, 3]]])
    qrels = Qrels(np.array([0, 0, 1, 2, 2]), np.array([1, 2, 4, 7, 8]), np.array([1, 0, 1, 1, 0], np.int8))
    lo, hi, decided = one_against_many(own, study, qrels, 10, ("P",))["P@2"]
    np.testing.assert_allclose([lo[0], hi[0]], [0, 1 / 3], atol=1e-12)
    assert not decided[0]


# ---- through the command ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def study_with_dumps(workdir, synth_kg, tmp_path_factory):
    """results/metrics/<pooled>/ and results/scores/<pooled>/<system>/ of two study systems (depth-20 runs)."""
    runs = tmp_path_factory.mktemp("pair_runs")
    qs = load_questions(workdir / f"resources/testsets/{POOLED}.questions.tsv", synth_kg)
    # Alpha ranks as the outside system does (seed 99): every pair with it is decided, tied
    for name, seed in zip(STUDY, (99, 21)):
        (runs / name).mkdir()
        write_run(runs / name / f"{POOLED}.run", synth_kg, qs, random_scorer(synth_kg, seed=seed, ties=False),
                  depth=20)
    dumps = tmp_path_factory.mktemp("pair_eval")
    assert cli_main(["evaluate", *(str(runs / s) for s in STUDY), "--dataset", "Synth", "--out", str(dumps),
                     "--config", str(workdir / "config/tiny.yaml"), "--schema", str(workdir / "config/schema.yaml"),
                     "--resources", str(workdir / "resources"), "--testsets", POOLED, "--bootstrap", "20",
                     "--results", str(dumps / "none")]) == 0
    results = tmp_path_factory.mktemp("pair_results")
    m = results / "metrics" / POOLED
    m.mkdir(parents=True)
    evaluate_testset({s: str(dumps / "dumps" / s / POOLED) for s in STUDY}, workdir / "resources/datasets/Synth/kg.npz",
                     m / "evaluation.csv", m / "lp_per_rel_type.csv", m / "per_question.parquet",
                     m / "per_answer.parquet", measures=["map_cut_20", "ndcg_cut_20", "P_10"])
    for s in STUDY:
        shutil.copytree(dumps / "dumps" / s / POOLED, results / "scores" / POOLED / s)
    return results


def _evaluate_mine(workdir, synth_kg, tmp_path, results):
    runs = tmp_path / "Mine"
    runs.mkdir()
    qs = load_questions(workdir / f"resources/testsets/{POOLED}.questions.tsv", synth_kg)
    write_run(runs / f"{POOLED}.run", synth_kg, qs, random_scorer(synth_kg, seed=99, ties=False), depth=20)
    out = tmp_path / "eval"
    rc = cli_main(["evaluate", str(runs), "--dataset", "Synth", "--out", str(out), "--config",
                   str(workdir / "config/tiny.yaml"), "--schema", str(workdir / "config/schema.yaml"),
                   "--resources", str(workdir / "resources"), "--testsets", POOLED, "--bootstrap", "20",
                   "--results", str(results), "--tukey-trials", "20"])
    assert rc == 0
    return out


def test_evaluate_marks_pairs_decided(workdir, synth_kg, study_with_dumps, tmp_path):
    out = _evaluate_mine(workdir, synth_kg, tmp_path, study_with_dumps)
    pl = pd.read_csv(out / "placement.csv")
    mine = load_dump(out / "dumps" / "Mine" / POOLED)
    study = [load_dump(study_with_dumps / "scores" / POOLED / s) for s in STUDY]
    k = 10  # tiny.yaml's bounds.k (the schema's default)
    entity = np.stack([d.run_entity[:, :k].astype(np.int64) for d in [mine, *study]])  # the outside system first
    code, qmask = state(entity, qrels_at_depth(mine), mine.questions.num_entities)
    assert 0 < qmask.sum() and (code == -1).any()  # some questions count and some entries are unjudged
    pos = match_positions(entity[:, qmask])
    rows = pl.drop_duplicates("Opponent").set_index("Opponent").loc[list(STUDY)]
    n_decided = {}
    for base in ("P", "Success", "RR", "DCG", "RBP"):
        lo, hi = pair_bounds(code[:, qmask], pos, metric(base, k))
        decided, _ = decisions(lo, hi)
        name = f"{base}@{k}"
        np.testing.assert_allclose(rows[f"{name}_delta_lo"], lo[0, 1:], atol=1e-12, err_msg=name)
        np.testing.assert_allclose(rows[f"{name}_delta_hi"], hi[0, 1:], atol=1e-12, err_msg=name)
        assert rows[f"{name}_decided"].astype(bool).tolist() == decided[0, 1:].tolist(), name
        assert (lo[0, 1:] <= hi[0, 1:]).all()
        n_decided[name] = int(decided[0, 1:].sum())
    assert all(n_decided[f"{b}@{k}"] >= 1 for b in ("P", "Success", "RR", "DCG", "RBP"))  # Alpha's tie
    assert (rows.loc["Alpha"].filter(like="_delta_") == 0).all()
    # every row of a study system carries the same pair columns, whatever its metric
    assert (pl.groupby("Opponent")["P@10_delta_lo"].nunique() == 1).all()
    summary = (out / "summary.md").read_text()
    assert f"Pair decisions on {POOLED}" in summary
    assert "Mine: " + ", ".join(f"{n} decides {d} of 2" for n, d in n_decided.items()) in summary
    tex = (out / "summary.tex").read_text()  # the LaTeX table's notes carry the same paragraph
    assert f"Pair decisions on {POOLED}" in tex
    assert "Mine: " + ", ".join(f"{n} decides {d} of 2" for n, d in n_decided.items()) in tex


def test_evaluate_without_study_dumps_says_so(workdir, synth_kg, study_with_dumps, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(study_with_dumps / "metrics", results / "metrics")
    out = _evaluate_mine(workdir, synth_kg, tmp_path, results)
    pl = pd.read_csv(out / "placement.csv")
    assert not any(c.endswith("_decided") for c in pl.columns)
    summary = (out / "summary.md").read_text()
    assert f"Pair decisions on {POOLED} need the study systems' score dumps: not available in {results}/scores/" \
           f"{POOLED} (Alpha, Beta missing)." in summary


def test_pair_decisions_from_a_reference_pack_equal_those_from_the_dumps(workdir, synth_kg, study_with_dumps,
                                                                         tmp_path):
    """A pack keeps every study system's top k on the pooled test set (runs/<test set>/top<k>.parquet, int32
    entities), so a new user without a results folder gets the same pair decisions as from the score dumps."""
    import datetime as dt

    import pyarrow.parquet as pq

    from kgeval.external import placement
    from kgeval.judgments.lists import read_lists
    from kgeval.tables.reference import pack, provenance_record

    files = placement.study_files(study_with_dumps, [POOLED])[POOLED]
    runs = {POOLED: {s: study_with_dumps / "scores" / POOLED / s for s in STUDY}}
    prov = provenance_record({"a": 1}, "default", cores=2, jobs=3, now=dt.datetime(2026, 1, 2))
    record = pack({POOLED: files["evaluation"]}, {POOLED: files["micro"]}, {POOLED: files["macro"]},
                  tmp_path / "pack", prov, runs=runs, k=10)
    top = tmp_path / "pack" / "runs" / POOLED / "top10.parquet"
    assert record["runs"][POOLED] == {"k": 10, "systems": 2, "rows": len(pq.read_table(top)),
                                      "bytes": top.stat().st_size}
    assert str(pq.read_schema(top).field("entity").type) == "int32"
    k, lists = read_lists(tmp_path / "pack", POOLED, STUDY)
    for s in STUDY:  # the packed lists are the dumps' runs, question by question
        d = load_dump(study_with_dumps / "scores" / POOLED / s)
        np.testing.assert_array_equal(lists[s].loc[np.asarray(d.questions.qid).astype(str)].to_numpy(),
                                      d.run_entity[:, :10])
    assert read_lists(tmp_path / "pack", POOLED, [*STUDY, "Gamma"]) is None  # a system the pack lacks

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    from_dumps = pd.read_csv(_evaluate_mine(workdir, synth_kg, tmp_path / "a", study_with_dumps) / "placement.csv")
    out = _evaluate_mine(workdir, synth_kg, tmp_path / "b", tmp_path / "pack")
    from_pack = pd.read_csv(out / "placement.csv")
    cols = [c for c in from_dumps.columns if c.endswith(("_delta_lo", "_delta_hi", "_decided"))]
    assert len(cols) == 15
    pd.testing.assert_frame_equal(from_pack[["Opponent", "Metric", *cols]], from_dumps[["Opponent", "Metric", *cols]])
    assert f"Pair decisions on {POOLED} (published judgments, top 10" in (out / "summary.md").read_text()
