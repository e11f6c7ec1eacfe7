"""Issue 31: the user-facing commands keep their promise. Every sub-command is run with an output equal to an
input, an output in a read-only folder, a missing input and a full disk; each gives one line on stderr
(``kgeval: error: …``), a non-zero exit, and leaves every input byte for byte as it was. Then one test per
numbered defect of the issue (its reproduction command), and the command line's help (issue 32, section 4)."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from kgeval.cli import COMMANDS, build_parser, main
from kgeval.data.questions import load_questions
from kgeval.pools.annotation import EXPORT_HEADER, export_batch

ALL = sorted(COMMANDS)


# ---- a folder of tiny inputs every command can read ----------------------------------------------------------
def _fill(sheet: Path, out: Path, labels: dict[str, str]) -> None:
    """A completed copy of an exported sheet: ``labels`` by item (Y gets a source link), N elsewhere."""
    with open(sheet, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    for row in rows[1:]:
        row[8] = labels.get(row[1], "N")
        row[9] = "https://en.wikipedia.org/wiki/X" if row[8] == "Y" else ""
    with open(out, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter="\t", lineterminator="\n").writerows(rows)


@pytest.fixture(scope="module")
def env(workdir, synth_dir, synth_kg, pooled, tmp_path_factory):
    from helpers import random_scorer, write_run
    from test_sampling_estimates import judged_plan

    from kgeval.docs_figures import DOCS_FIGURES

    d = tmp_path_factory.mktemp("inputs")
    kg = synth_kg
    shutil.copy(workdir / "resources/datasets/Synth/kg.npz", d / "kg.npz")
    test = kg.splits["test"][:4]
    (d / "triples.tsv").write_text("".join(f"{kg.entities[h]}\t{kg.relations[r]}\t{kg.entities[t]}\n"
                                           for h, r, t in test.tolist()))
    (d / "templates.tsv").write_text("relation\ttemplate\tsource\n")
    export_batch(test, kg, {}, d / "b.tsv", "b1")
    _fill(d / "b.tsv", d / "b.A.tsv", {"1": "Y"})
    _fill(d / "b.tsv", d / "b.B.tsv", {})
    rows = list(csv.reader(open(d / "b.tsv", encoding="utf-8"), delimiter="\t"))
    with open(d / "b.C.tsv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(EXPORT_HEADER)
        w.writerow(rows[1][:8] + ["N", "", ""])
    (d / "into.txt").write_text("")
    splits = d / "splits"
    splits.mkdir()
    for role in ("train", "valid", "test"):
        shutil.copy(synth_dir[role], splits / f"{role}.txt")
    from test_reanalyze import hand_tables

    hand_tables(d / "release")
    for rel in DOCS_FIGURES.values():
        from PIL import Image

        (d / "results" / rel).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (40, 20), "white").save(d / "results" / rel)
    (d / "model_quality.csv").write_text("Model\n")
    mirror = d / "mirror"
    (mirror / "x").mkdir(parents=True)
    payload = b"kgeval\n" * 20000
    (mirror / "x/file.bin").write_bytes(payload)
    (d / "resources.tsv").write_text(
        "mirror_path\turl\tsha256\tbytes\n"
        f"x/file.bin\thttp://127.0.0.1:9/{'0' * 40}/file.bin\t{hashlib.sha256(payload).hexdigest()}\t{len(payload)}\n")
    for f in ("tiny.yaml", "schema.yaml"):
        shutil.copy(workdir / "config" / f, d / f)
    qs = load_questions(workdir / "resources/testsets/Synth-Test-S.questions.tsv", kg)
    write_run(d / "Synth-Test-S.run", kg, qs, random_scorer(kg, seed=3), depth=30)
    (d / "sp").mkdir()
    dumps, *_ = judged_plan(d / "sp", kg, pooled[1])
    from test_sampling_reference import _pack_from_dumps

    (d / "pack/runs/Synth-Test-S-C").mkdir(parents=True)
    _pack_from_dumps(dumps, kg, 10, d / "pack/runs/Synth-Test-S-C/top10.parquet")
    from kgeval.scale.steps import graph_step

    graph_step("wikikg2", 0.0005, 0, d / "scale.npz")  # kgeval scale evaluate's input
    (d / "rr/metrics/T").mkdir(parents=True)  # kgeval reproduce's results folder, compared with itself
    (d / "rr/metrics/T/evaluation.csv").write_text("System,micro_mrr\nA,0.5\n")
    return {"dir": d, "work": workdir}


def argv(cmd: str, env: dict, out: Path | None) -> list[str]:
    """The command line of ``cmd`` on the env's inputs, writing to ``out``."""
    d, w = env["dir"], env["work"]
    out = str(out)
    return {
        "build-kg": ["build-kg", str(d / "splits"), "--out", out],
        "synth": ["synth", "--out", out, "--entities", "20", "--relations", "4"],
        "fetch": ["fetch", "--manifest", str(d / "resources.tsv"), "--out", out, "--mirror", str(d / "mirror")],
        "validate-config": ["validate-config", str(d / "tiny.yaml"), "--schema", str(d / "schema.yaml")],
        "annotate-export": ["annotate-export", "--kg", str(d / "kg.npz"), "--triples", str(d / "triples.tsv"),
                            "--templates", str(d / "templates.tsv"), "--batch", "b1", "--out", out],
        "annotate-disagreements": ["annotate-disagreements", "--export", str(d / "b.tsv"), "--a", str(d / "b.A.tsv"),
                                   "--b", str(d / "b.B.tsv"), "--out", out],
        "annotate-merge": ["annotate-merge", "--export", str(d / "b.tsv"), "--a", str(d / "b.A.tsv"), "--b",
                           str(d / "b.B.tsv"), "--adjudicator", str(d / "b.C.tsv"), "--out", out, "--report",
                           str(Path(out).parent / "report.md"), "--into", str(d / "into.txt"), "--merged",
                           str(Path(out).parent / "merged.txt")],
        "reanalyze": ["reanalyze", str(d / "release"), "--out", out],
        "model-table": ["model-table", str(d / "model_quality.csv")],
        "docs-figures": ["docs-figures", "--results", str(d / "results"), "--out", out],
        "sample-estimate": ["sample-estimate", "--plan", str(d / "sp/plan"), "--labels", str(d / "sp/labels.txt"),
                            "--scores", str(d / "sp/scores"), "--kg", str(d / "sp/kg.npz"), "--k", "5",
                            "--max-depth", "30", "--out", out],
        "sample-plan": ["sample-plan", "--testset", "Synth-Test-S-C", "--reference", str(d / "pack"), "--budget",
                        "10", "--config", str(w / "config/tiny.yaml"), "--schema", str(w / "config/schema.yaml"),
                        "--resources", str(w / "resources"), "--templates", str(d / "templates.tsv"), "--out", out],
        "evaluate": ["evaluate", f"Synth-Test-S={d / 'Synth-Test-S.run'}", "--dataset", "Synth", "--out", out,
                     "--config", str(w / "config/tiny.yaml"), "--schema", str(w / "config/schema.yaml"),
                     "--resources", str(w / "resources"), "--results", str(d / "no-results"), "--bootstrap", "20",
                     "--templates", str(d / "templates.tsv")],
        "campaign": ["campaign", "create", out, "--sheet", str(d / "b.tsv")],
        "baseline": ["baseline", "popularity", "--out", out, "--dataset", "Synth", "--testsets", "Synth-Test-S",
                     "--workdir", str(w), "--config", str(d / "tiny.yaml")],
        "scale": ["scale", "evaluate", str(d / "scale.npz"), "--out", out, "--systems", "2", "--k", "5",
                  "--sample-size", "100", "--negatives", "20", "--bootstrap", "100", "--pool-depths", "1,5"],
        "reproduce": ["reproduce", str(d / "rr"), "--against", str(d / "rr")],
    }[cmd]


#: an input of each command that its output may be pointed at (None: the command writes nothing)
SAME = {"build-kg": "splits/train.txt", "synth": "triples.tsv", "fetch": "resources.tsv", "validate-config": None,
        "annotate-export": "triples.tsv", "annotate-disagreements": "b.A.tsv", "annotate-merge": "b.A.tsv",
        "reanalyze": "release", "model-table": None, "docs-figures": "results", "evaluate": "Synth-Test-S.run",
        "sample-estimate": "sp/scores", "sample-plan": "pack", "campaign": "b.tsv", "baseline": "tiny.yaml",
        "scale": "scale.npz", "reproduce": None}
#: an input of each command to take away (None: the command reads none)
MISSING = {"build-kg": "splits/valid.txt", "synth": None, "fetch": "resources.tsv", "validate-config": "tiny.yaml",
           "annotate-export": "triples.tsv", "annotate-disagreements": "b.B.tsv", "annotate-merge": "b.tsv",
           "reanalyze": "release", "model-table": "model_quality.csv", "docs-figures": "results",
           "evaluate": "Synth-Test-S.run", "sample-estimate": "sp/labels.txt",
           "sample-plan": "pack/runs/Synth-Test-S-C/top10.parquet", "campaign": "b.tsv", "baseline": "tiny.yaml",
           "scale": "scale.npz", "reproduce": "rr/metrics/T/evaluation.csv"}


def fingerprint(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder`` (new and removed files show too)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (INFO|WARNING) ")


def one_line_error(capsys, rc: int) -> str:
    """The one error line on stderr (log lines of the work done before it aside); a non-zero exit."""
    err = capsys.readouterr().err
    assert rc != 0
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if not LOG_LINE.match(line)]
    assert len(lines) == 1 and lines[0].startswith("kgeval: error: "), err
    assert err.strip().splitlines()[-1] == lines[0]
    return lines[0]


def refused(capsys, env, args) -> str:
    before = fingerprint(env["dir"])
    line = one_line_error(capsys, main(args))
    assert fingerprint(env["dir"]) == before
    return line


@contextlib.contextmanager
def tmpfs(path: Path, options: str):
    """A small tmpfs at ``path`` (root only); skips the test where it cannot be mounted."""
    path.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@pytest.mark.parametrize("cmd", ALL)
def test_output_equal_to_an_input(cmd, env, capsys):
    if SAME[cmd] is None:
        pytest.skip(f"{cmd} writes no file")
    line = refused(capsys, env, argv(cmd, env, env["dir"] / SAME[cmd]))
    assert "input" in line or "not a folder" in line


@pytest.mark.parametrize("cmd", ALL)
def test_missing_input(cmd, env, capsys, tmp_path):
    if MISSING[cmd] is None:
        pytest.skip(f"{cmd} reads no input file")
    gone = env["dir"] / MISSING[cmd]
    aside = tmp_path / "aside"
    shutil.move(gone, aside)
    try:
        line = refused(capsys, env, argv(cmd, env, tmp_path / "out" / "o.txt"))
    finally:
        shutil.move(aside, gone)
    assert str(gone) in line or gone.name in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("cmd", ALL)
def test_read_only_output_folder(cmd, env, capsys, tmp_path):
    if SAME[cmd] is None:
        pytest.skip(f"{cmd} writes no file")
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        cm = contextlib.nullcontext(ro)
    else:  # root writes through file modes: a read-only tmpfs instead
        cm = tmpfs(tmp_path / "ro", "ro,size=64k")
    with cm as ro:
        line = refused(capsys, env, argv(cmd, env, ro / "o"))
    assert str(ro) in line and ("Read-only" in line or "Permission denied" in line)


@pytest.mark.parametrize("cmd", ALL)
def test_output_below_a_file(cmd, env, capsys, tmp_path):
    """The read-only case where mounting is impossible: a folder that cannot be made."""
    if SAME[cmd] is None:
        pytest.skip(f"{cmd} writes no file")
    (tmp_path / "file").write_text("x")
    line = refused(capsys, env, argv(cmd, env, tmp_path / "file" / "o"))
    assert str(tmp_path / "file") in line
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("cmd", ALL)
def test_full_disk(cmd, env, capsys, tmp_path):
    if SAME[cmd] is None:
        pytest.skip(f"{cmd} writes no file")
    with tmpfs(tmp_path / "full", "size=64k") as full:
        with contextlib.suppress(OSError), open(full / "filler", "wb") as fh:
            while True:
                fh.write(b"\0" * 4096)
                fh.flush()
        line = refused(capsys, env, argv(cmd, env, full / "o"))
        assert "No space left on device" in line and str(full) in line
        assert sorted(p.name for p in full.iterdir()) in (["filler"], ["filler", "o"])
        assert not (full / "o").is_dir() or not [p for p in (full / "o").iterdir() if p.name != ".kgeval-outputs.json"]


# ---- the numbered defects of issue 31, each as its reproduction command ---------------------------------------
def test_1_an_annotators_sheet_is_never_the_output(env, capsys):
    d = env["dir"]
    for args in (argv("annotate-disagreements", env, d / "b.A.tsv"), argv("annotate-export", env, d / "triples.tsv"),
                 argv("annotate-export", env, d / "kg.npz")):
        assert "would overwrite the input" in refused(capsys, env, args)


def _foreign_checkpoint(folder: Path) -> Path:
    import torch

    from kgeval.io import sha256_file, write_json

    folder.mkdir(parents=True)
    pt = folder / "mine.pt"
    torch.save({"weights": torch.zeros(3)}, pt)
    write_json(Path(str(pt) + ".json"), {"sha256": sha256_file(pt)})
    return pt


def test_2_a_users_checkpoint_is_never_set_aside(env, capsys, tmp_path):
    pt = _foreign_checkpoint(tmp_path / "ckpt")
    before = fingerprint(tmp_path / "ckpt")
    args = argv("evaluate", env, tmp_path / "out")
    args[1] = str(pt)
    line = one_line_error(capsys, main(args))
    assert line == f"kgeval: error: {pt}: not a kgeval checkpoint"
    assert fingerprint(tmp_path / "ckpt") == before  # no mine.pt.corrupt, the sidecar in place
    # the outside-systems step of the workflow reads it the same way
    from kgeval.errors import InputError
    from kgeval.external.steps import import_system

    w = env["work"]
    with pytest.raises(InputError, match="not a kgeval checkpoint"):
        import_system("Mine", {"dataset": "Synth", "system": str(pt)}, str(w / "resources/datasets/Synth/kg.npz"),
                      str(w / "resources/testsets/Synth-Test-S.tsv"),
                      str(w / "resources/testsets/Synth-Test-S.questions.tsv"), str(tmp_path / "dump"),
                      "Synth-Test-S")
    assert fingerprint(tmp_path / "ckpt") == before


class Payload:
    """A pickle that runs code when loaded: it creates a file."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_3_a_pykeen_pickle_runs_nothing_without_the_opt_in(env, capsys, tmp_path):
    import pickle

    folder = tmp_path / "pk"
    folder.mkdir()
    ran = tmp_path / "payload-ran"
    (folder / "trained_model.pkl").write_bytes(pickle.dumps(Payload(ran)))
    args = argv("evaluate", env, tmp_path / "out")
    args[1] = str(folder)
    line = one_line_error(capsys, main(args))
    assert line.startswith(f"kgeval: error: {folder / 'trained_model.pkl'}: a PyKEEN model is a full pickle")
    assert "--trust-pickle" in line and not ran.exists()
    help_text = build_parser()[0]._subparsers._group_actions[0].choices["evaluate"].format_help()
    assert "runs whatever code the file holds" in " ".join(help_text.split())


def test_4_a_failed_merge_changes_no_file(env, capsys, tmp_path):
    d = env["dir"]
    into = tmp_path / "judgments.txt"
    into.write_text("a\tr\tb\tY\nc\tr\td\tN\ne\tr\tf\tY\n")
    (tmp_path / "report.md").mkdir()
    args = ["annotate-merge", "--export", str(d / "b.tsv"), "--a", str(d / "b.A.tsv"), "--b", str(d / "b.B.tsv"),
            "--adjudicator", str(d / "b.C.tsv"), "--out", str(tmp_path / "labels.txt"), "--report",
            str(tmp_path / "report.md"), "--into", str(into), "--merged", str(into)]
    line = one_line_error(capsys, main(args))
    assert line == f"kgeval: error: {tmp_path / 'report.md'}: is a folder; expected a file to write"
    assert len(into.read_text().splitlines()) == 3 and not (tmp_path / "labels.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judgments.txt", "report.md"]  # no temporary left
    args[args.index("--report") + 1] = str(tmp_path / "report.json")
    assert main(args) == 0
    assert "\t4 added\t0 already present" in capsys.readouterr().out
    assert len(into.read_text().splitlines()) == 7


def test_5_evaluate_never_writes_into_the_results_folder(env, capsys, tmp_path):
    results = tmp_path / "results"
    (results / "metrics/Synth-Test-S").mkdir(parents=True)
    (results / "metrics/Synth-Test-S/evaluation.csv").write_text("System\n")
    args = argv("evaluate", env, results / "metrics/Synth-Test-S")
    args[args.index("--results") + 1] = str(results)
    line = one_line_error(capsys, main(args))
    assert line.startswith(f"kgeval: error: {results / 'metrics/Synth-Test-S'}: the output folder lies inside "
                           f"the input {results}")
    assert (results / "metrics/Synth-Test-S/evaluation.csv").read_text() == "System\n"


@pytest.mark.parametrize("option,value,expected", [
    ("--tukey-trials", "-3", "-3 is out of range: expected an integer from 10 to 100,000"),
    ("--bootstrap", "0", "0 is out of range: expected an integer from 20 to 100,000"),
    ("--bootstrap", "1", "1 is out of range: expected an integer from 20 to 100,000"),
    ("--bootstrap", "x", "'x' is not an integer from 20 to 100,000"),
    ("--unjudged-k", "0", "0 is out of range: expected an integer from 1 to 1,000"),
])
def test_6_numeric_options_are_bounded(env, capsys, tmp_path, option, value, expected):
    line = refused(capsys, env, argv("evaluate", env, tmp_path / "out") + [option, value])
    assert line == f"kgeval: error: kgeval evaluate: argument {option}: {expected} (see kgeval evaluate --help)"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["../../escaped", "", "a/b", "..", "tab\there", "a\\b"])
def test_7_a_name_is_a_label_not_a_path(env, capsys, tmp_path, name):
    out = tmp_path / "deep" / "out"
    line = refused(capsys, env, argv("evaluate", env, out) + ["--name", name])
    assert line.startswith("kgeval: error: kgeval evaluate: argument --name: ")
    assert not (tmp_path / "deep").exists() and not (tmp_path / "escaped").exists()



def test_7_folder_names_of_reanalyze_are_labels(env, capsys, tmp_path):
    line = refused(capsys, env, argv("reanalyze", env, tmp_path / "o") + ["--names", "original=../x"])
    assert line == ("kgeval: error: kgeval reanalyze: --names: '../x': a name is a label, not a path (no '/', '\\', "
                    "'.' or '..') (see kgeval reanalyze --help)")


def test_8_one_line_instead_of_a_traceback(env, capsys, tmp_path):
    d = env["dir"]
    pt = _foreign_checkpoint(tmp_path / "c")
    side = Path(str(pt) + ".json")
    for text, problem in (("{not json", "malformed JSON"), ("[1, 2]", "a JSON list, expected an object")):
        side.write_text(text)
        args = argv("evaluate", env, tmp_path / "out")
        args[1] = str(pt)
        line = one_line_error(capsys, main(args))
        assert line.startswith(f"kgeval: error: {side}: not a kgeval checkpoint sidecar: ") and problem in line
    # the batch name is checked before any output is written
    args = argv("evaluate", env, tmp_path / "out") + ["--batch", "bad name/x"]
    assert "argument --batch: 'bad name/x'" in refused(capsys, env, args)
    assert not (tmp_path / "out").exists()
    args = argv("annotate-merge", env, tmp_path / "m" / "l.txt")
    args[args.index("--into") + 1] = str(tmp_path / "no-into.txt")
    assert refused(capsys, env, args) == f"kgeval: error: {tmp_path / 'no-into.txt'}: no such file or folder"
    # an existing file as the output folder
    (tmp_path / "file").write_text("x")
    line = refused(capsys, env, argv("evaluate", env, tmp_path / "file"))
    assert line == f"kgeval: error: {tmp_path / 'file'}: exists and is not a folder (the output is a folder)"
    assert (tmp_path / "file").read_text() == "x"
    assert refused(capsys, env, ["model-table", str(d / "nope.csv")]) == \
        f"kgeval: error: {d / 'nope.csv'}: No such file or directory"


def test_9_reanalyze_errors_and_notes(env, capsys, tmp_path):
    from test_reanalyze import hand_tables

    line = one_line_error(capsys, main(["reanalyze", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]))
    assert line == f"kgeval: error: {tmp_path / 'nope'}: no such file or folder"
    rel = tmp_path / "rel"
    hand_tables(rel)
    s = rel / "FB-Test-S/evaluation.csv"
    df = pd.read_csv(s)
    pd.DataFrame({**df, "System": ["W", "X", "Y", "Z"]}).to_csv(s, index=False)
    line = one_line_error(capsys, main(["reanalyze", str(rel), "--out", str(tmp_path / "o")]))
    assert line.startswith(f"kgeval: error: {s}: lists other systems than {rel / 'FB-Test-O/evaluation.csv'}: "
                           "['W', 'X', 'Y'] only here, ['A', 'B', 'C'] only there")
    s.write_text("System,micro_mrr\n")
    line = one_line_error(capsys, main(["reanalyze", str(rel), "--out", str(tmp_path / "o")]))
    assert line == f"kgeval: error: {s}: a header and no rows: the table lists no system"
    df.loc[1, "micro_mrr"] = np.nan
    df.to_csv(s, index=False)
    assert main(["reanalyze", str(rel), "--out", str(tmp_path / "o")]) == 0
    notes = (tmp_path / "o/notes.txt").read_text()
    assert "τ of micro_mrr between FB-Test-O and FB-Test-S is empty: no value for FB-Test-S/B" in notes
    taus = pd.read_csv(tmp_path / "o/taus_between_testsets.csv")
    assert taus[(taus["b"] == "FB-Test-S") & (taus["Metric"] == "micro_mrr")]["tau"].isna().all()


@pytest.mark.parametrize("args,expected", [
    (["--relations", "0"], "argument --relations: 0 is out of range: expected an integer from 4 to 10,000"),
    (["--entities", "15"], "argument --entities: 15 is out of range: expected an integer from 20 to 1,000,000"),
    (["--entities", "-5"], "argument --entities: -5 is out of range"),
    (["--seed", "-1"], "argument --seed: -1 is out of range: expected an integer ≥ 0"),
    (["--entities", "990000", "--relations", "4"], "need about"),
])
def test_10_synth_applies_the_schemas_bounds(capsys, tmp_path, args, expected):
    line = one_line_error(capsys, main(["synth", "--out", str(tmp_path / "s"), *args]))
    assert expected in line
    assert not (tmp_path / "s").exists()


def test_10_bounds_come_from_the_schema():
    import yaml

    spec = yaml.safe_load((ROOT / "config/schema.yaml").read_text())["$defs"]["synth"]["properties"]
    parser = build_parser()[0]._subparsers._group_actions[0].choices["synth"]
    entities = next(a for a in parser._actions if a.dest == "entities")
    assert entities.type.bounds() == (spec["num_entities"]["minimum"], spec["num_entities"]["maximum"])


def test_11_a_reused_out_keeps_no_file_of_the_previous_run(env, capsys, tmp_path):
    from helpers import random_scorer, write_run

    from kgeval.data.kg import KnowledgeGraph

    w = env["work"]
    kg = KnowledgeGraph.load(w / "resources/datasets/Synth/kg.npz")
    qs = load_questions(w / "resources/testsets/Synth-Test-S-C.questions.tsv", kg)
    write_run(tmp_path / "Synth-Test-S-C.run", kg, qs, random_scorer(kg, seed=4), depth=30)
    out = tmp_path / "out"
    out.mkdir()
    (out / "my notes.txt").write_text("mine")
    first = argv("evaluate", env, out)
    first[1] = f"Synth-Test-S-C={tmp_path / 'Synth-Test-S-C.run'}"
    assert main(first + ["--name", "First"]) == 0
    assert {"unjudged.csv", "unjudged_questions.csv", "annotation_sheet.tsv"} <= {p.name for p in out.iterdir()}
    assert main(argv("evaluate", env, out) + ["--name", "Second"]) == 0  # no run on the pooled set: no sheet
    names = sorted(p.name for p in out.iterdir())
    assert names == [".kgeval-outputs.json", "dumps", "evaluation.csv", "my notes.txt", "per_category.csv",
                     "per_relation.csv", "summary.md", "summary.tex"]
    assert sorted(p.name for p in (out / "dumps").iterdir()) == ["Second"]
    assert list(pd.read_csv(out / "evaluation.csv")["System"]) == ["Second"]
    assert (out / "my notes.txt").read_text() == "mine"
    capsys.readouterr()


def test_12_duplicate_keys_and_missing_outside_files(capsys, tmp_path):
    text = (ROOT / "config/tiny.yaml").read_text()
    dup = tmp_path / "dup.yaml"
    dup.write_text(text + "\nseeds: [0, 1]\n")
    first = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith("seeds:"))
    last = len(text.splitlines()) + 2
    line = one_line_error(capsys, main(["validate-config", str(dup)]))
    assert line == (f"kgeval: error: {dup}:{last}:1: malformed YAML: duplicate key 'seeds' (first on line {first}, "
                    f"again on line {last})")
    nested = tmp_path / "nested.yaml"
    nested.write_text("a:\n  b: 1\n  c: 2\n  b: 3\n")
    line = one_line_error(capsys, main(["validate-config", str(nested)]))
    assert "nested.yaml:4:3: malformed YAML: duplicate key 'b' (first on line 2, again on line 4)" in line
    ext = tmp_path / "ext.yaml"
    ext.write_text(text.replace("system: resources/models/Synth/TransE/seed1.pt", "system: mine/nowhere.pt"))
    line = one_line_error(capsys, main(["validate-config", str(ext)]))
    assert line == ("kgeval: error: config key external_systems/TransE-seed1/system: mine/nowhere.pt: no such file "
                    "or folder")
    assert main(["validate-config", str(ROOT / "config/tiny.yaml")]) == 0  # the workflow builds its own


# ---- issue 32, section 4: the command line's help ----------------------------------------------------------
def test_version_and_help(capsys):
    from kgeval import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"kgeval {__version__}\n"
    assert main(["--help"]) == 0
    top = capsys.readouterr().out
    assert "``" not in top and ":func:" not in top and "kgeval: error: <path>: <problem>" in top
    parser = build_parser()[0]
    for name, sub in parser._subparsers._group_actions[0].choices.items():
        text = sub.format_help()
        assert "\nexample:\n  kgeval " + name.split()[0] in text.replace("KGEVAL_MIRROR=/data/mirror ", ""), name
        assert len(sub.description) > 60, name
        for action in sub._actions:
            if action.option_strings and action.default not in (None, False, [], argparse_suppress()) \
                    and action.dest != "help":
                assert sub._get_formatter()._get_help_string(action).count("default") >= 1, (name, action.dest)


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


def test_positional_output_still_works_with_a_deprecation_line(capsys, tmp_path):
    assert main(["synth", str(tmp_path / "s"), "--entities", "20", "--relations", "4", "--no-annotations"]) == 0
    err = capsys.readouterr().err
    assert f"kgeval: warning: the positional output folder is deprecated; write --out {tmp_path / 's'}" in err
    assert (tmp_path / "s/train.txt").is_file()


def test_an_input_inside_the_output_folder_is_never_replaced(env, capsys, tmp_path):
    """A run file that sits where the command writes (OUT/evaluation.csv) stops the command before anything
    moves: the run file and the folder stay as they were."""
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(env["dir"] / "Synth-Test-S.run", out / "evaluation.csv")
    before = fingerprint(out)
    args = argv("evaluate", env, out)
    args[1] = f"Synth-Test-S={out / 'evaluation.csv'}"
    line = one_line_error(capsys, main(args))
    assert line == (f"kgeval: error: {out / 'evaluation.csv'}: replacing it would remove the input "
                    f"{out / 'evaluation.csv'}: choose another output folder")
    assert fingerprint(out) == before and sorted(p.name for p in out.iterdir()) == ["evaluation.csv"]


def test_a_killed_commands_staging_folder_goes_with_the_next_run(tmp_path, capsys):
    """What a SIGKILL leaves (a staging folder of a process that is gone) is removed by the next run into the
    same folder; a staging folder of a live process stays."""
    import socket
    import sys

    out = tmp_path / "out"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = out / f".kgeval-staging-{socket.gethostname()}-{gone.stdout.strip()}-abc"
    alive = out / f".kgeval-staging-{socket.gethostname()}-{os.getppid()}-abc"
    for folder in (dead, alive):
        folder.mkdir(parents=True)
        (folder / "train.txt").write_text("partial")
    assert main(["synth", "--out", str(out), "--entities", "20", "--relations", "4", "--no-annotations"]) == 0
    assert not dead.exists() and (alive / "train.txt").read_text() == "partial"
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [".kgeval-outputs.json", alive.name]
    capsys.readouterr()
