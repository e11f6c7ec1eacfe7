"""``kgeval evaluate``: TREC run files, checkpoints and PyKEEN models judged like the study's models.

Hand-computed values on the five-entity graph of ``conftest.tiny_kg``; pytrec_eval for the trec measures; a
complete run file against the ranking engine on the same scores (the filter and tie policy must be the same).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import torch
from conftest import tiny_kg
from helpers import random_scorer, run_engine, write_run

from kgeval.cli import main as cli_main
from kgeval.data.kg import KnowledgeGraph
from kgeval.data.questions import AnswerIndex, save_questions
from kgeval.data.testsets import full_test
from kgeval.errors import InputError
from kgeval.external.evaluate import mean_interval
from kgeval.external.runfile import dump_run, read_run, run_ranking
from kgeval.metrics.evaluate import evaluate, qrels_at_depth
from kgeval.metrics.steps import evaluate_testset
from kgeval.scores.dumps import SCHEMAS_V1, load_dump, save_ranking
from kgeval.scores.ranking import docno_ranks, judged_entities, macro_filter, rank_questions


def tiny_files(tmp_path: Path) -> tuple[KnowledgeGraph, dict[str, Path]]:
    kg = tiny_kg()
    ts = full_test(kg, "T")
    files = {"kg": tmp_path / "kg.npz", "tsv": tmp_path / "T.tsv", "questions": tmp_path / "T.questions.tsv"}
    kg.save(files["kg"])
    ts.save(files["tsv"], kg)
    save_questions(ts.questions(kg), files["questions"], kg)
    return kg, files


# tiny_kg: entities a b c d e, relations r s; train (a r b) (a r c) (b s c); valid (c r d); test (a r d) (d s e).
# Questions: head0 (?, r, d) answer a [c filtered: valid]; head1 (?, s, e) answer d; tail0 (a, r, ?) answer d
# [b, c filtered: train]; tail1 (d, s, ?) answer e.
HAND_RUN = """\
head0 Q0 b 1 0.9 mine
head0 Q0 c 2 0.8 mine
head0 Q0 a 3 0.7 mine
head0 Q0 d 4 0.7 mine
head1 Q0 a 1 3 mine
head1 Q0 b 2 2 mine
head1 Q0 c 3 1 mine
tail0 Q0 d 1 0.5 mine
tail0 Q0 b 2 0.4 mine
"""


def hand_dump(tmp_path: Path, allow_missing: bool = True):
    kg, files = tiny_files(tmp_path)
    (tmp_path / "mine.run").write_text(HAND_RUN)
    dump_run(tmp_path / "mine.run", files["kg"], files["tsv"], files["questions"], tmp_path / "dump", "mine", "T",
             allow_missing=allow_missing)
    return kg, load_dump(tmp_path / "dump")


def test_hand_made_run_micro_macro_and_depth(tmp_path):
    kg, dump = hand_dump(tmp_path)
    assert dump.meta["schema_version"] == 2 and dump.meta["run_depth"] == 4 and not dump.complete
    ev = evaluate(dump, qrels_at_depth(dump), measures=["recip_rank", "P_1", "map"], families=True)
    ranks = dict(zip(ev.per_answer["qid"], ev.per_answer["rank"]))
    # head0: c filtered (valid fact); b above a; d ties with a -> realistic 1 + 1 + 1/2 = 2.5
    # head1: answer d not in the run -> not retrieved; tail0: b filtered, d first; tail1: no line (allowed) -> 0
    assert ranks == {"head0": 2.5, "head1": np.inf, "tail0": 1.0, "tail1": np.inf}
    s = ev.summary
    assert s["micro_mrr"] == pytest.approx((0.4 + 0 + 1 + 0) / 4)
    assert s["macro_mrr"] == pytest.approx(0.35)  # one answer per question: macro = micro
    assert (s["micro_hits@1"], s["micro_hits@3"], s["micro_hits@4"]) == (0.25, 0.5, 0.5)
    # beyond the run's depth (4) nothing is known: Hits@5…10, MR and the rank-magnitude families are empty
    for key in ("micro_hits@5", "micro_hits@10", "micro_mr", "macro_mr", "micro_gmr", "micro_amri",
                "micro_umf_a-1_p1_uniform", "macro_ah@10"):
        assert np.isnan(s[key]), key
    # the Hits@10-like unified step is empty too (10 > K); HMR = 1 / MRR is kept
    assert np.isnan(s["micro_umf_h10_p1_uniform"]) and s["micro_hmr"] == pytest.approx(1 / 0.35)
    assert all(np.isfinite(s[k]) for k in ("micro_amrr", "micro_zmrr", "micro_ah@3", "macro_zh@1"))
    # trec_eval's order breaks the head0 tie by docno descending: b, d, a -> 1/3
    rr = dict(zip(ev.per_question["qid"], ev.per_question["recip_rank"]))
    assert rr == {"head0": pytest.approx(1 / 3), "head1": 0.0, "tail0": 1.0, "tail1": 0.0}
    assert dump.run_entity[0, :3].tolist() == [1, 3, 0] and dump.run_entity[2, :2].tolist() == [3, -1]


@pytest.mark.peer
def test_hand_made_run_macro_equals_pytrec_eval(tmp_path):
    """pytrec_eval gets the same run without the lines kgeval filters (c for head0, b for tail0)."""
    kg, dump = hand_dump(tmp_path)
    names = ["recip_rank", "P_1", "P_5", "map", "map_cut_20", "ndcg_cut_20", "Rprec", "bpref", "success_1"]
    ev = evaluate(dump, qrels_at_depth(dump), measures=names)
    run: dict = {}
    for line in HAND_RUN.splitlines():
        qid, _, doc, _, score, _ = line.split()
        if (qid, doc) not in {("head0", "c"), ("tail0", "b")}:
            run.setdefault(qid, {})[doc] = float(score)
    qrels = {"head0": {"a": 1}, "head1": {"d": 1}, "tail0": {"d": 1}, "tail1": {"e": 1}}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "P.1", "P.5", "map", "map_cut.20", "ndcg_cut.20",
                                                 "Rprec", "bpref", "success.1"}).evaluate(run)
    assert "tail1" not in ref  # trec_eval without -c skips it; kgeval scores it zero (trec_eval -c)
    for _, row in ev.per_question.iterrows():
        for m in names:
            assert row[m] == pytest.approx(ref[row["qid"]][m] if row["qid"] in ref else 0.0, abs=1e-12), m
    assert ev.summary["recip_rank"] == pytest.approx((1 / 3 + 0 + 1 + 0) / 4)


def test_missing_question_is_an_error_without_the_flag(tmp_path):
    with pytest.raises(InputError, match=r"mine\.run: 1 of the 4 questions of T have no line \(first: tail1\); "
                                         r"--allow-missing"):
        hand_dump(tmp_path, allow_missing=False)


@pytest.mark.parametrize("line, problem", [
    ("head0 Q0 a 1 0.5", r"expected 6 columns .* found 5"),
    ("head0 Q0 a 1 0.5 t x", r"expected 6 columns .* found 7"),
    ("head0 Q0 a 1 0.5 t x y z", r"expected 6 columns .* found 9"),
    ("head9 Q0 a 1 0.5 t", r"question id 'head9' is not a question of T"),
    ("head0 Q0 /m/zz 1 0.5 t", r"docno '/m/zz' is not an entity of tiny"),
    ("head0 Q0 b 1 0.5 t", r"docno b is listed twice for question head0 \(first on line 1\)"),
    ("head0 Q0 a 1 nan t", r"score 'nan' is NaN"),
    ("head0 Q0 a 1 high t", r"score 'high' is not a finite number"),
    ("head0 Q0 a 1 inf t", r"score 'inf' is not a finite number"),
    ("head0 Q0 a one 0.5 t", r"rank 'one' is not an integer"),
])
@pytest.mark.parametrize("gz", [False, True])
def test_malformed_run_lines_name_file_and_line(tmp_path, line, problem, gz):
    kg, files = tiny_files(tmp_path)
    text = "head0 Q0 b 1 0.9 t\n\n" + line + "\n"  # the blank line 2 counts: the bad line is line 3
    path = tmp_path / ("bad.run.gz" if gz else "bad.run")
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    with pytest.raises(InputError, match=rf"bad\.run(\.gz)?:3: {problem}"):
        read_run(path, full_test(kg, "T").questions(kg), kg, allow_missing=True, testset="T")


# ---- a run that ranks every entity = the engine on the same scores ---------------------------------------------
def test_complete_run_equals_the_engine(tmp_path, synth_kg):
    kg = synth_kg
    ts = full_test(kg, "O")
    qs = ts.questions(kg)
    scorer = random_scorer(kg, ties=True)
    known = AnswerIndex(kg.known(("train", "valid")), kg.num_entities, kg.num_relations)
    judged = judged_entities(ts, qs)
    engine = rank_questions(scorer, qs, judged, known, docno_ranks(kg.entities), k=kg.num_entities)
    save_ranking(engine, tmp_path / "engine", {"model": "x"})
    write_run(tmp_path / "O.run", kg, qs, scorer)
    run = read_run(tmp_path / "O.run", qs, kg)
    save_ranking(run_ranking(run, qs, judged, known, docno_ranks(kg.entities)), tmp_path / "run", {"model": "x"})
    a, b = load_dump(tmp_path / "engine"), load_dump(tmp_path / "run")
    assert b.complete and b.retrieved.all() and b.meta["run_depth"] == kg.num_entities
    for f in ("n_gt", "n_eq", "candidate", "n_candidates"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert np.array_equal(a.run_entity, b.run_entity)
    measures = ["recip_rank", "map_cut_20", "ndcg_cut_20", "P_10"]
    ea = evaluate(a, qrels_at_depth(a), measures=measures, families=True).summary
    eb = evaluate(b, qrels_at_depth(b), measures=measures, families=True).summary
    assert ea.keys() == eb.keys() and np.isfinite(eb["micro_mr"])
    for k in ea:
        assert eb[k] == pytest.approx(ea[k], rel=1e-12, abs=1e-12), k


@pytest.mark.peer
def test_cut_run_on_pooled_set_equals_pytrec_eval(tmp_path, synth_kg, synth_dir):
    """A depth-20 run with filtered entries, ties and one missing question on the judged synthetic pools."""
    from kgeval.data.testsets import pooled_test, sample_test

    kg = synth_kg
    seed = sample_test(kg, "S", synth_dir["sample_idxs"], synth_dir["samples"])
    ts = pooled_test(kg, "SC", seed, synth_dir["annotations"], synth_dir["pooling_depth"])
    qs = ts.questions(kg)
    write_run(tmp_path / "SC.run", kg, qs, random_scorer(kg, seed=4, ties=True), depth=20, drop={qs.qid[3]})
    known = AnswerIndex(kg.known(("train", "valid")), kg.num_entities, kg.num_relations)
    judged = judged_entities(ts, qs)
    ranking = run_ranking(read_run(tmp_path / "SC.run", qs, kg, allow_missing=True), qs, judged, known,
                          docno_ranks(kg.entities))
    save_ranking(ranking, tmp_path / "d", {"model": "x"})
    dump = load_dump(tmp_path / "d")
    qrels = qrels_at_depth(dump)
    names = ["recip_rank", "map_cut_20", "ndcg_cut_20", "P_10", "Rprec", "bpref", "success_10", "map"]
    ev = evaluate(dump, qrels, measures=names)
    # pytrec_eval's run: the file's lines minus those kgeval filters (train/valid answers that are not test answers)
    E = kg.entities
    f_rows, f_ents = macro_filter(qs, judged, known)
    filt = {(qs.qid[q], E[e]) for q, e in zip(f_rows, f_ents)}
    run: dict = {}
    for line in (tmp_path / "SC.run").read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        if (qid, doc) not in filt:
            run.setdefault(qid, {})[doc] = float(score)
    qd: dict = {}
    for q, e, rel in zip(qrels.q, qrels.entity, qrels.rel):
        qd.setdefault(qs.qid[q], {})[E[e]] = int(rel)
    ref = pytrec_eval.RelevanceEvaluator(qd, {"recip_rank", "map_cut.20", "ndcg_cut.20", "P.10", "Rprec", "bpref",
                                              "success.10", "map"}).evaluate(run)
    assert qs.qid[3] not in ref and len(filt) > 0
    for _, row in ev.per_question.iterrows():
        for m in names:
            assert row[m] == pytest.approx(ref.get(row["qid"], {}).get(m, 0.0), abs=1e-12), (row["qid"], m)
    assert 0 < ev.summary["macro_mrr"] <= 1 and np.isnan(ev.summary["macro_mr"])


def test_mean_interval_is_bca_around_the_mean():
    x = np.r_[np.zeros(60), np.ones(40)]
    lo, hi = mean_interval(x, repeats=2000, seed=1)
    # normal approximation 0.4 ± 1.96·sqrt(0.24/100) = [0.304, 0.496]
    assert lo == pytest.approx(0.304, abs=0.02) and hi == pytest.approx(0.496, abs=0.02)
    assert mean_interval(x, 500, 3) == mean_interval(x, 500, 3)


# ---- the command: run files, a kgeval checkpoint, the pipeline's columns ---------------------------------------
def test_evaluate_command_runs_and_checkpoint(workdir, synth_kg, tmp_path, monkeypatch, capsys):
    from kgeval.data.questions import load_questions
    from kgeval.models import build_model
    from kgeval.models.checkpoint import save_checkpoint

    monkeypatch.chdir(workdir)
    kg = synth_kg
    runs = tmp_path / "myruns"
    runs.mkdir()
    for t, depth in (("Synth-Test-S", 30), ("Synth-Test-S-C", 30)):
        qs = load_questions(workdir / f"resources/testsets/{t}.questions.tsv", kg)
        write_run(runs / f"{t}.run", kg, qs, random_scorer(kg, seed=7, ties=True), depth=depth)
    with gzip.open(runs / "Synth-Test-O.run.gz", "wb") as fh:  # gzip, every entity ranked
        qs = load_questions(workdir / "resources/testsets/Synth-Test-O.questions.tsv", kg)
        write_run(tmp_path / "o.run", kg, qs, random_scorer(kg, seed=7, ties=True))
        fh.write((tmp_path / "o.run").read_bytes())
    torch.manual_seed(0)
    model = build_model("DistMult", kg.num_entities, kg.num_relations, dim=8)
    ckpt = tmp_path / "models/Synth/DistMult/model.pt"
    save_checkpoint({"model_name": "DistMult", "model_hparams": {"dim": 8}, "dataset": kg.name,
                     "dataset_fingerprint": kg.fingerprint(),
                     "state_dict": {k: v.detach() for k, v in model.state_dict().items()}}, ckpt)
    out = tmp_path / "eval"
    rc = cli_main(["evaluate", str(runs), str(ckpt), "--dataset", "Synth", "--out", str(out), "--name", "Mine",
                   "--config", "config/tiny.yaml", "--bootstrap", "200"])
    assert rc == 0
    printed = capsys.readouterr().out
    table = pd.read_csv(out / "evaluation.csv")
    assert list(zip(table["System"], table["TestSet"])) == [
        ("Mine", "Synth-Test-O"), ("Mine", "Synth-Test-S"), ("Mine", "Synth-Test-S-C"),
        ("DistMult", "Synth-Test-O"), ("DistMult", "Synth-Test-S"), ("DistMult", "Synth-Test-S-C")]
    # the pipeline's table of the same dumps has the same columns (but TestSet and the intervals)
    ref = evaluate_testset({"Mine": str(out / "dumps/Mine/Synth-Test-S-C"),
                            "DistMult": str(out / "dumps/DistMult/Synth-Test-S-C")},
                           workdir / "resources/datasets/Synth/kg.npz", tmp_path / "e.csv", tmp_path / "c.csv",
                           tmp_path / "q.parquet", tmp_path / "a.parquet",
                           measures=["map", "map_cut_20", "ndcg_cut_20", "P_10", "recip_rank", "Rprec", "success_10",
                                     "bpref", "infAP", "condensed_map_cut_20", "condensed_ndcg_cut_20",
                                     "unjudged_10"])
    assert [c for c in table.columns if c != "TestSet" and not c.endswith(("_lo", "_hi"))] == list(ref.columns)
    sc = table[table["TestSet"] == "Synth-Test-S-C"].set_index("System")
    for col in ("micro_mrr", "macro_mrr", "ndcg_cut_20", "bpref"):
        assert sc[col].to_numpy() == pytest.approx(ref.set_index("System").loc[["Mine", "DistMult"], col].to_numpy())
    for m in ("micro_mrr", "macro_mrr"):
        assert (table[f"{m}_lo"] <= table[m]).all() and (table[m] <= table[f"{m}_hi"]).all()
    # the complete gzip run reports MR, the depth-30 runs do not; the checkpoint ranks everything
    mr = table.set_index(["System", "TestSet"])["micro_mr"]
    assert np.isfinite(mr[("Mine", "Synth-Test-O")]) and np.isnan(mr[("Mine", "Synth-Test-S")])
    assert np.isfinite(mr[("DistMult", "Synth-Test-S-C")])
    # the checkpoint's dump equals the pipeline's dump step on the same file
    from kgeval.scores.steps import dump_scores
    t = workdir / "resources/testsets"
    dump_scores(ckpt, workdir / "resources/datasets/Synth/kg.npz", t / "Synth-Test-S-C.tsv",
                t / "Synth-Test-S-C.questions.tsv", tmp_path / "pipe", "DistMult", "Synth-Test-S-C", k=100,
                device="cpu")
    a, b = load_dump(tmp_path / "pipe"), load_dump(out / "dumps/DistMult/Synth-Test-S-C")
    assert a.meta["schema_version"] == b.meta["schema_version"] == 1
    for f in ("n_gt", "n_eq", "score", "run_entity"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    summary = (out / "summary.md").read_text()
    assert "realistic ranks" in summary and "docno descending" in summary and "train ∪ valid" in summary
    assert "| Mine | Synth-Test-S | " in summary and "30 (cut)" in summary and "complete" in summary
    # without a results folder the placement is skipped with a one-line note, then the summary
    assert printed.startswith("No results folder results and no shipped reference (reference/default, "
                              "reference/smoke) with tables of")
    assert "\n# kgeval evaluate\n" in printed and "BCa bootstrap, 200 seeded resamples" in summary


def test_evaluate_command_errors(workdir, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(workdir)
    (tmp_path / "x.run").write_text("head0 Q0 nothing 1 1 t\n")
    assert cli_main(["evaluate", str(tmp_path / "x.run"), "--dataset", "Synth", "--out", str(tmp_path / "o"),
                     "--config", "config/tiny.yaml"]) == 2
    assert "which test set is this run for? Write TESTSET=" in capsys.readouterr().err
    assert cli_main(["evaluate", f"Synth-Test-S={tmp_path / 'x.run'}", "--dataset", "Synth", "--out",
                     str(tmp_path / "o"), "--config", "config/tiny.yaml"]) == 2
    assert "x.run:1: docno 'nothing' is not an entity of Synth" in capsys.readouterr().err


def test_version1_dump_has_no_retrieved_column(tmp_path, synth_kg):
    """Models' dumps keep schema version 1 (the files the pipeline wrote before runs existed)."""
    import pyarrow.parquet as pq

    r = run_engine(synth_kg, full_test(synth_kg, "O"), random_scorer(synth_kg, ties=True), k=10)
    save_ranking(r, tmp_path / "d", {"model": "x"})
    assert pq.read_schema(tmp_path / "d/judged.parquet").equals(SCHEMAS_V1["judged.parquet"], check_metadata=False)
    d = load_dump(tmp_path / "d")
    assert d.meta["schema_version"] == 1 and d.retrieved.all() and d.complete
    assert d.score.dtype == np.float32
    ev = evaluate(d, qrels_at_depth(d), measures=[])
    assert ev.per_answer["rank_optimistic"].dtype == np.int64  # integer ranks, as before


def test_libkge_checkpoint_is_a_system(tmp_path, synth_kg):
    """A LibKGE checkpoint (any .pt without a kgeval sidecar) goes through the existing import."""
    from libkge_fakes import build_case

    from kgeval.external.systems import load_scorer, parse_system
    from kgeval.models.libkge import libkge_model

    _, path, digest = build_case(tmp_path, synth_kg, "complex", True, {}, synth_kg.num_entities,
                                 synth_kg.num_relations)
    system = parse_system(str(path), ["T"])
    assert (system.kind, system.name) == ("libkge", "complex")
    model, direct = load_scorer(system, synth_kg), libkge_model(path, synth_kg, digest)
    q = torch.tensor([[0, 1], [5, 3]])
    for side in (0, 1):
        assert torch.equal(model.score_questions(q, side), direct.score_questions(q, side))
