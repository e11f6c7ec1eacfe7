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
def env(workdir, synth_dir, synth_kg, tmp_path_factory):
    from helpers import random_scorer, write_run

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
        "evaluate": ["evaluate", f"Synth-Test-S={d / 'Synth-Test-S.run'}", "--dataset", "Synth", "--out", out,
                     "--config", str(w / "config/tiny.yaml"), "--schema", str(w / "config/schema.yaml"),
                     "--resources", str(w / "resources"), "--results", str(d / "no-results"), "--bootstrap", "20",
                     "--templates", str(d / "templates.tsv")],
    }[cmd]


#: an input of each command that its output may be pointed at (None: the command writes nothing)
SAME = {"build-kg": "splits/train.txt", "synth": "triples.tsv", "fetch": "resources.tsv", "validate-config": None,
        "annotate-export": "triples.tsv", "annotate-disagreements": "b.A.tsv", "annotate-merge": "b.A.tsv",
        "reanalyze": "release", "model-table": None, "docs-figures": "results", "evaluate": "Synth-Test-S.run"}
#: an input of each command to take away (None: the command reads none)
MISSING = {"build-kg": "splits/valid.txt", "synth": None, "fetch": "resources.tsv", "validate-config": "tiny.yaml",
           "annotate-export": "triples.tsv", "annotate-disagreements": "b.B.tsv", "annotate-merge": "b.tsv",
           "reanalyze": "release", "model-table": "model_quality.csv", "docs-figures": "results",
           "evaluate": "Synth-Test-S.run"}


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
