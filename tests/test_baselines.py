"""Baselines as run files (issue 52 §1): the scores on a hand-computed graph, ``kgeval.baseline`` and ``kgeval
baseline`` in an empty folder of an installed kgeval (data built into KGEVAL_HOME), and, with the mirror, the
README's path outside the checkout: a popularity run made and placed among the study's 13 in two commands."""

from __future__ import annotations

import gzip
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, needs_mirror, tiny_kg

import kgeval
from kgeval import api
from kgeval.cli import main as cli_main
from kgeval.data.kg import HEAD, TAIL
from kgeval.data.questions import Questions
from kgeval.errors import BadValueError
from kgeval.external.baselines import baseline_scores, write_baseline_runs

SC = "Synth-Test-S-C"


def test_popularity_and_frequency_scores_by_hand():
    """tiny_kg's training triples (a r b), (a r c), (b s c): a is r's head twice; a, b, c occur twice each in
    training, d and e never (overall frequency scaled by 1 / (2 + 1))."""
    kg = tiny_kg()
    pop = baseline_scores(kg, "popularity")
    third = 2 / 3
    np.testing.assert_allclose(pop[HEAD, 0], [2 + third, third, third, 0, 0])  # (?, r, x)
    np.testing.assert_allclose(pop[TAIL, 0], [third, 1 + third, 1 + third, 0, 0])  # (x, r, ?)
    np.testing.assert_allclose(pop[HEAD, 1], [third, 1 + third, third, 0, 0])
    np.testing.assert_allclose(pop[TAIL, 1], [third, third, 1 + third, 0, 0])
    freq = baseline_scores(kg, "frequency")
    assert (freq == np.array([2, 2, 2, 0, 0])).all()  # one list for every side and relation
    with pytest.raises(ValueError, match="unknown baseline"):
        baseline_scores(kg, "random")


def test_run_files_rank_ties_by_entity_id_and_are_deterministic(tmp_path):
    kg = tiny_kg()
    qs = Questions(np.array([HEAD, TAIL]), np.array([3, 0]), np.array([0, 0]), ["head0", "tail0"], 5, 2)
    for rep in ("a", "b"):
        (tmp_path / rep).mkdir()
        written = write_baseline_runs(kg, {"T": qs}, "popularity", tmp_path / rep, 3, "pop")
        assert written == {"T": (tmp_path / rep / "T.run.gz", 6)}
    with gzip.open(tmp_path / "a/T.run.gz", "rt") as fh:
        lines = [line.split() for line in fh.read().splitlines()]
    assert [(q, d, int(r)) for q, _, d, r, _, _ in lines] == [
        ("head0", "a", 1), ("head0", "b", 2), ("head0", "c", 3),  # b and c tie: id order
        ("tail0", "b", 1), ("tail0", "c", 2), ("tail0", "a", 3)]
    assert [float(s) for *_, s, _ in lines[:3]] == pytest.approx([2.666667, 0.666667, 0.666667])
    assert (tmp_path / "a/T.run.gz").read_bytes() == (tmp_path / "b/T.run.gz").read_bytes()  # same bytes


@pytest.fixture
def installed(workdir, tmp_path, monkeypatch):
    """An installed kgeval (no checkout) in an empty folder, with a user's copy of the tiny config."""
    monkeypatch.setattr(api.data, "_repo_root", lambda: None)
    monkeypatch.setenv("KGEVAL_HOME", str(tmp_path / "cache"))
    shutil.copy(ROOT / "config/tiny.yaml", tmp_path / "tiny.yaml")
    user = tmp_path / "anywhere"
    user.mkdir()
    monkeypatch.chdir(user)
    return user, tmp_path / "tiny.yaml"


def test_baseline_builds_into_the_cache_and_evaluates(installed, workdir):
    """kgeval.baseline in an empty folder: data built into KGEVAL_HOME, only runs/ written here, and the run's
    lists equal the training counts sorted here; a second call replaces what the first wrote."""
    user, config = installed
    written = kgeval.baseline("frequency", "runs", [SC], dataset="Synth", depth=20, config=config)
    assert written == {SC: user.joinpath("runs", f"{SC}.run.gz").relative_to(user)}
    assert sorted(p.name for p in user.iterdir()) == ["runs"]
    assert (installed[0].parent / "cache/resources/testsets" / f"{SC}.tsv").is_file()
    sc = kgeval.load_testset(SC, config=config)
    # frequency: every question gets the same top 20, the entities by their count in training, ties by id
    kg = sc.load_kg()
    counts = np.bincount(kg.splits["train"][:, [0, 2]].ravel(), minlength=kg.num_entities)
    top = [kg.entities[i] for i in sorted(range(kg.num_entities), key=lambda i: (-counts[i], i))[:20]]
    run = pd.read_csv(user / written[SC], sep=" ", header=None, names=["qid", "Q0", "docno", "rank", "score", "tag"])
    assert run["qid"].drop_duplicates().tolist() == sc.questions["qid"].tolist()
    assert (run.groupby("qid", sort=False)["docno"].apply(list) == pd.Series([top] * len(sc.questions))
            .set_axis(sc.questions["qid"])).all()
    assert set(run["tag"]) == {"frequency"}
    result = kgeval.evaluate(written[SC], sc, measures=["MRR"], bootstrap=20)
    assert 0 < result.value("MRR", "macro") < 1
    again = kgeval.baseline("frequency", "runs", [SC], dataset="Synth", depth=20, config=config)
    assert again == written  # what baseline wrote there before is replaced
    with pytest.raises(BadValueError, match="kind"):
        kgeval.baseline("random", "runs", [SC], dataset="Synth", config=config)


def test_the_command_refuses_a_file_of_yours_and_names_a_bad_test_set(installed, capsys):
    user, config = installed
    (user / "runs").mkdir()
    (user / "runs" / f"{SC}.run.gz").write_text("mine")
    argv = ["baseline", "popularity", "--out", "runs", "--dataset", "Synth", "--testsets", SC, "--config",
            str(config)]
    assert cli_main(argv) == 2
    assert "kgeval: error:" in capsys.readouterr().err
    assert (user / "runs" / f"{SC}.run.gz").read_text() == "mine"  # never overwritten
    assert cli_main([*argv[:-4], "--testsets", "Nope", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Nope" in err and "Traceback" not in err


@needs_mirror
def test_a_popularity_run_placed_among_the_13_outside_the_checkout(as_installed, tmp_path, monkeypatch):
    """The README's path after install, in an empty folder: two commands make a popularity run on FB-Test-S-C
    and place it among the reference pack's 13 systems; its MRRs are the README's (0.1783 micro, 0.2324 macro)."""
    from kgeval import home

    packaged = tmp_path / "site-packages" / "kgeval" / "_data"  # the wheel's copy of the default files (setup.py)
    packaged.mkdir(parents=True)
    for folder in ("config", "annotations", "reference"):
        (packaged / folder).symlink_to(ROOT / folder)
    monkeypatch.setattr(home, "checkout_root", lambda: None)
    monkeypatch.setattr(home, "PACKAGED", packaged)
    assert cli_main(["baseline", "popularity", "--out", "runs", "--testsets", "FB-Test-S-C"]) == 0
    assert cli_main(["evaluate", "runs", "--name", "Popularity", "--dataset", "FB15k-237", "--testsets",
                     "FB-Test-S-C", "--out", "eval"]) == 0
    table = pd.read_csv(as_installed / "eval/evaluation.csv").iloc[0]
    assert (round(table["micro_mrr"], 4), round(table["macro_mrr"], 4)) == (0.1783, 0.2324)
    placement = pd.read_csv(as_installed / "eval/placement.csv")
    assert placement["Opponent"].nunique() == 13
    assert sorted(p.name for p in as_installed.iterdir()) == ["eval", "runs"]


def test_the_data_build_reports_snakemakes_steps(tmp_path, caplog):
    """build_data's snakemake runs for minutes: its "N of M steps" lines become progress lines, and the whole
    output still goes to the log file."""
    import logging
    import sys

    lines = ["Building DAG of jobs...", "1 of 3 steps (33%) done", "2 of 3 steps (67%) done",
             "3 of 3 steps (100%) done"]
    cmd = [sys.executable, "-c", f"print({chr(10).join(lines)!r})"]
    log = tmp_path / "build.log"
    with caplog.at_level(logging.INFO, logger="kgeval"), open(log, "w", encoding="utf-8") as fh:
        assert api.data._follow(cmd, tmp_path, fh, log) == 0
    assert log.read_text().splitlines() == lines
    assert any("building the test set's data: 3/3 steps (100.0 %)" in r.getMessage() for r in caplog.records)
