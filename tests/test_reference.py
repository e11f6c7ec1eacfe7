"""Reference packs and the choice of reference of ``kgeval evaluate`` and ``kgeval.api.place``: the pack round
trip (placement from the pack equals placement from the results folder it was packed from), the provenance
sidecar, the fallback order (local results, then the shipped pack) with the sentence naming it, and the rank-only
placement among the authors' released tables (hand-made tables, hand-counted ranks)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from test_evaluate_placement import STUDY, TESTSETS, _evaluate, study_results  # noqa: F401 (fixture)

from kgeval.external import placement, reference
from kgeval.tables.reference import PROVENANCE, describe, pack, provenance_record, read_provenance


def _pack(results, out, name="tiny"):
    files = {t: placement.study_files(results, [t])[t] for t in TESTSETS}
    prov = provenance_record({"a": 1}, name, cores=2, jobs=7, now=dt.datetime(2026, 1, 2, 3, 4, 5))
    return pack({t: f["evaluation"] for t, f in files.items()}, {t: f["micro"] for t, f in files.items()},
                {t: f["macro"] for t, f in files.items()}, out, prov)


class Ev:
    """An evaluation as placement reads it: a summary and the per-item tables."""

    def __init__(self, summary, per_answer, per_question):
        self.summary, self.per_answer, self.per_question = summary, per_answer, per_question


def test_pack_round_trip_equals_the_results(study_results, tmp_path):  # noqa: F811
    record = _pack(study_results, tmp_path / "pack")
    p = tmp_path / "pack"
    # an evaluated system built from one study system's items, shifted: every test has items and p-values
    evals = {}
    for t in TESTSETS:
        pa = pd.read_parquet(study_results / "metrics" / t / "per_answer.parquet")
        pq_ = pd.read_parquet(study_results / "metrics" / t / "per_question.parquet")
        a = pa[pa["System"] == "Beta"].drop(columns="System")
        q = pq_[pq_["System"] == "Beta"].drop(columns="System")
        rng = np.random.default_rng(1)
        for df in (a, q):
            for c in placement.HEADLINE:
                if c in df.columns:
                    df[c] = np.clip(df[c].to_numpy() + rng.normal(0, 0.05, len(df)), 0, 1)
        summary = {c: float(df[c].mean()) for df in (a, q) for c in placement.HEADLINE if c in df.columns}
        evals[("Mine", t)] = Ev(summary, a, q)
    from_results = placement.placement_table(evals, placement.study_files(study_results, list(TESTSETS)), trials=50)
    from_pack = placement.placement_table(evals, placement.study_files(p, list(TESTSETS)), trials=50)
    assert len(from_results) == 6 * len(STUDY) * len(TESTSETS) and from_results["t_p"].notna().all()
    pd.testing.assert_frame_equal(from_pack, from_results)
    # only what placement reads, compactly: int32 entities, dictionary strings, zstd, smaller than the results
    t = TESTSETS[0]
    schema = pq.read_schema(p / "metrics" / t / "per_answer.parquet")
    assert schema.names == ["qid", "entity", "System", "micro_mrr", "micro_hits@10"]
    assert str(schema.field("entity").type) == "int32" and "dictionary" in str(schema.field("qid").type)
    meta = pq.ParquetFile(p / "metrics" / t / "per_answer.parquet").metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"
    assert pq.read_schema(p / "metrics" / t / "per_question.parquet").names == [
        "qid", "System", "macro_mrr", "macro_hits@10", "map_cut_20", "ndcg_cut_20"]
    assert (p / "metrics" / t / "evaluation.csv").read_bytes() == \
        (study_results / "metrics" / t / "evaluation.csv").read_bytes()
    packed = sum(f.stat().st_size for f in (p / "metrics").rglob("*.parquet"))
    original = sum(f.stat().st_size for f in (study_results / "metrics").rglob("*.parquet"))
    assert packed < original / 2
    assert record["testsets"][t]["systems"] == len(STUDY)
    assert record["testsets"][t]["per_answer_rows"] == len(pd.read_parquet(p / "metrics" / t / "per_answer.parquet"))
    assert record["bytes"] == sum(f.stat().st_size for f in (p / "metrics").rglob("*") if f.is_file())


def test_float32_only_where_exact(tmp_path):
    from kgeval.tables.reference import _compact

    df = pd.DataFrame({"qid": ["a", "b"], "System": ["S", "S"], "exact": [0.5, 0.25], "inexact": [0.1, 1 / 3]})
    table = _compact(df)
    assert str(table.schema.field("exact").type) == "float" and str(table.schema.field("inexact").type) == "double"
    assert table.column("inexact").to_pylist() == [0.1, 1 / 3]


def test_provenance_sidecar(study_results, tmp_path):  # noqa: F811
    _pack(study_results, tmp_path / "pack", name="smoke")
    prov = read_provenance(tmp_path / "pack")
    assert prov == json.loads((tmp_path / "pack" / PROVENANCE).read_text())
    assert prov["name"] == "smoke" and prov["date"] == "2026-01-02T03:04:05Z"
    assert prov["cores"] == 2 and prov["jobs"] == 7
    assert prov["config_hash"] == hashlib.sha256(json.dumps({"a": 1}, sort_keys=True).encode()).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", prov["kgeval_commit"])
    from kgeval import __version__

    assert prov["kgeval_version"] == __version__ and prov["machine"] and prov["cpu"]
    assert set(prov["testsets"]) == set(TESTSETS)
    text = describe(prov)
    assert "'smoke' configuration's run" in text and prov["config_hash"][:12] in text and "2 cores, 7 jobs" in text
    assert "not the study's 13" in text  # the smoke pack never passes for the study's systems
    assert "WARNING" not in describe({**prov, "name": "default"})
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / PROVENANCE).write_text("{not json")
    with pytest.raises(Exception, match=r"bad/provenance.json: not a provenance record"):
        read_provenance(tmp_path / "bad")


def test_fallback_local_results_then_shipped_pack(workdir, study_results, tmp_path, monkeypatch, capsys):  # noqa: F811
    shipped = tmp_path / "clone"
    _pack(study_results, shipped / "reference" / "smoke", name="smoke")
    shutil.copytree(workdir / "config", shipped / "config")  # the config's manifest path is relative
    monkeypatch.chdir(shipped)
    # a local results folder wins over the shipped pack
    ref = reference.resolve("auto", study_results, list(TESTSETS))
    assert ref.kind == "results" and ref.note == f"Placed among the study's systems of {study_results}/metrics/ " \
                                                 "(local results)."
    # without it, the shipped pack; a default run's pack would come first
    ref = reference.resolve("auto", tmp_path / "nowhere", list(TESTSETS))
    assert ref.kind == "pack" and ref.folder == reference.Path("reference/smoke")
    assert ref.note.startswith("Placed among the study's systems of the shipped reference reference/smoke/metrics/, "
                               "packed from the 'smoke' configuration's run")
    assert ref.note.endswith(f"; no local results folder {tmp_path / 'nowhere'} with these test sets.")
    shutil.copytree(shipped / "reference" / "smoke", shipped / "reference" / "default")
    assert reference.resolve("auto", tmp_path / "nowhere", list(TESTSETS)).folder.name == "default"
    shutil.rmtree(shipped / "reference" / "default")

    # the command says which it used, on stdout and in summary.md, and places as against the results
    rc, out = _evaluate(workdir, tmp_path, tmp_path / "nowhere")
    assert rc == 0
    printed = capsys.readouterr().out
    assert "Placed among the study's systems of the shipped reference reference/smoke/metrics/" in printed
    md = (out / "summary.md").read_text()
    assert "shipped reference reference/smoke/metrics/, packed from the 'smoke' configuration's run" in md
    # a pack packed without top-k lists: the pooled test set's pair decisions are named as missing, not computed
    assert "Pair decisions on Synth-Test-S-C: pair decisions need the study systems' top-k lists: this reference " \
           "pack has none" in md
    from_pack = pd.read_csv(out / "placement.csv")
    (tmp_path / "again").mkdir()
    rc, out2 = _evaluate(workdir, tmp_path / "again", study_results)
    assert rc == 0
    assert "(local results)" in (out2 / "summary.md").read_text()
    pd.testing.assert_frame_equal(from_pack, pd.read_csv(out2 / "placement.csv"))


def _authors(folder):
    """Released tables of two test sets: four systems, hand-chosen values."""
    for t, mrr in (("Synth-Test-O", [0.40, 0.30, 0.20, 0.10]), ("Synth-Test-S", [0.05, 0.06, 0.50, 0.07])):
        (folder / t).mkdir(parents=True)
        pd.DataFrame({"System": ["P", "Q", "R", "S"], "micro_mrr": mrr, "macro_mrr": mrr[::-1],
                      "micro_mr": [10.0, 20.0, 30.0, 40.0]}).to_csv(folder / t / "evaluation.csv", index=False)


def test_rank_only_among_the_authors_tables(tmp_path):
    _authors(tmp_path / "release")
    tables = reference.authors_tables(tmp_path / "release", list(TESTSETS))
    assert set(tables) == {"Synth-Test-O", "Synth-Test-S"}
    ev = Ev({"micro_mrr": 0.25, "macro_mrr": 0.35, "micro_mr": 25.0}, None, None)
    out = reference.rank_only({("Mine", "Synth-Test-O"): ev, ("Mine", "Synth-Test-S"): ev}, tables,
                              ["micro_mrr", "macro_mrr", "micro_mr"])
    rank = out.drop_duplicates(["TestSet", "Metric"]).set_index(["TestSet", "Metric"])["rank"]
    # O micro 0.40 0.30 better than 0.25: 3; macro 0.40 better than 0.35: 2; MR (lower is better) 10 20: 3
    # S micro 0.50 better: 2; macro 0.07 0.50 0.06 0.05 -> 0.50 better: 2
    assert rank.to_dict() == {("Synth-Test-O", "micro_mrr"): 3, ("Synth-Test-O", "macro_mrr"): 2,
                              ("Synth-Test-O", "micro_mr"): 3, ("Synth-Test-S", "micro_mrr"): 2,
                              ("Synth-Test-S", "macro_mrr"): 2, ("Synth-Test-S", "micro_mr"): 3}
    assert (out["systems"] == 5).all() and out["t_p"].isna().all() and not out["significant_t"].any()
    assert (out["items"] == 0).all()


def test_evaluate_with_the_authors_tables(workdir, tmp_path, capsys):
    _authors(tmp_path / "release")
    rc, out = _evaluate(workdir, tmp_path, tmp_path / "nowhere", "--reference", f"authors:{tmp_path / 'release'}")
    assert rc == 0
    printed = capsys.readouterr().out
    assert f"Ranked among the authors' released systems of {tmp_path / 'release'} (rank only)." in printed
    assert "no significance test is possible" in printed and "(No tables for Synth-Test-S-C.)" in printed
    md = (out / "summary.md").read_text()
    assert "no significance test is possible" in md and "<sup>" not in md and "Holm-corrected" not in md
    pl = pd.read_csv(out / "placement.csv")
    mine = pd.read_csv(out / "evaluation.csv").set_index("TestSet")
    for t in ("Synth-Test-O", "Synth-Test-S"):
        theirs = pd.read_csv(tmp_path / "release" / t / "evaluation.csv")["micro_mrr"]
        row = pl[(pl["TestSet"] == t) & (pl["Metric"] == "micro_mrr")]
        assert (row["rank"] == 1 + (theirs > mine.loc[t, "micro_mrr"]).sum()).all()
    rc, _ = _evaluate(workdir, tmp_path, tmp_path / "nowhere", "--reference", f"authors:{tmp_path / 'none'}")
    assert rc == 2
    assert capsys.readouterr().err.strip().endswith("none: not found: --reference authors:DIR needs the authors' "
                                                    "result folder (DIR/<test set>/evaluation.csv)")


def test_evaluate_builds_only_the_missing_data_once(workdir, tmp_path, monkeypatch, capsys):
    """Missing data: kgeval evaluate builds the dataset and the test sets it evaluates (only those, one build);
    when that fails, one line naming the whole command and KGEVAL_MIRROR."""
    from kgeval import api
    from kgeval.cli import main as cli_main

    w = tmp_path / "w"
    shutil.copytree(workdir / "config", w / "config")
    (w / "Snakefile").write_text("")  # a workflow folder: its data go to its resources/, not to KGEVAL_HOME
    monkeypatch.chdir(w)
    calls = []

    def fake_build(wd, config_path, targets):
        calls.append((wd, [str(t.relative_to(wd)) for t in targets]))
        for t in targets:
            t.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(workdir / t.relative_to(wd), t)

    monkeypatch.setattr(api.data, "build_data", fake_build)
    from helpers import random_scorer, write_run
    from test_evaluate_placement import synth_kg_of

    from kgeval.data.questions import load_questions

    kg = synth_kg_of(workdir)
    qs = load_questions(workdir / "resources/testsets/Synth-Test-O.questions.tsv", kg)
    write_run(tmp_path / "Synth-Test-O.run", kg, qs, random_scorer(kg, seed=5, ties=False), depth=20)
    argv = ["evaluate", str(tmp_path / "Synth-Test-O.run"), "--dataset", "Synth", "--testsets", "Synth-Test-O",
            "--out", "eval", "--config", "config/tiny.yaml", "--bootstrap", "20", "--results", "nowhere"]
    assert cli_main(argv) == 0
    assert calls == [(w, ["resources/datasets/Synth/kg.npz", "resources/testsets/Synth-Test-O.tsv",
                          "resources/testsets/Synth-Test-O.questions.tsv"])]
    assert "building the missing data (3 file(s)" in capsys.readouterr().err
    assert cli_main(argv) == 0 and len(calls) == 1  # built once: the second run finds the data

    def no_mirror(wd, config_path, targets):
        raise api.DataUnavailableError(f"could not build the test set's data (log: {wd}/logs/x.log); without "
                                       "network access set KGEVAL_MIRROR …")

    monkeypatch.setattr(api.data, "build_data", no_mirror)
    shutil.rmtree(w / "resources")
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("kgeval: error: resources/datasets/Synth/kg.npz: missing and could not build the test "
                              f"set's data (log: {w}/logs/x.log); set KGEVAL_MIRROR to a data mirror folder")
    assert err[-1].endswith("and rerun: KGEVAL_MIRROR=<mirror folder> kgeval " + " ".join(argv))
    assert len([line for line in err if line.startswith("kgeval: error")]) == 1
