"""Issue 49, the file and command-line half: a folder given as input is never renamed, every command that writes
follows one output-folder rule, ``campaign import`` is one transaction, a fresh ``$KGEVAL_HOME`` is built once
under a lock, and malformed inputs give one line. Each test reproduces the issue's case and failed before its fix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_cli_safety import argv, env, fingerprint, one_line_error  # noqa: F401  (env is a fixture)

from kgeval.cli import main


# ---- item 1: --scores is an input folder; nothing in it is renamed ---------------------------------------------
@pytest.fixture()
def scores_copy(env, tmp_path):  # noqa: F811
    """A private copy of the env's plan, labels and score dumps (tests below change the dumps folder)."""
    sp = tmp_path / "sp"
    shutil.copytree(env["dir"] / "sp", sp)
    return sp


def _estimate(sp: Path, out: Path) -> list[str]:
    return ["sample-estimate", "--plan", str(sp / "plan"), "--labels", str(sp / "labels.txt"), "--scores",
            str(sp / "scores"), "--kg", str(sp / "kg.npz"), "--k", "5", "--max-depth", "30", "--out", str(out)]


def test_a_users_subfolder_of_scores_is_refused_not_renamed(scores_copy, capsys, tmp_path):
    (scores_copy / "scores/notes").mkdir()
    (scores_copy / "scores/notes/todo.txt").write_text("mine\n")
    before = fingerprint(scores_copy)
    line = one_line_error(capsys, main(_estimate(scores_copy, tmp_path / "est")))
    assert "notes: not a score dump (no meta.json)" in line
    assert fingerprint(scores_copy) == before and not (scores_copy / "scores/notes.corrupt").exists()
    assert not (tmp_path / "est").exists()


def test_a_corrupted_dump_given_as_input_is_reported_not_set_aside(scores_copy, capsys, tmp_path):
    dump = sorted(p for p in (scores_copy / "scores").iterdir())[0]
    run = dump / "run.parquet"
    data = bytearray(run.read_bytes())
    data[len(data) // 2] ^= 0xFF
    run.write_bytes(bytes(data))
    before = fingerprint(scores_copy)
    line = one_line_error(capsys, main(_estimate(scores_copy, tmp_path / "est")))
    assert "run.parquet: SHA-256" in line and "set aside" not in line
    assert fingerprint(scores_copy) == before
    assert not list((scores_copy / "scores").glob("*.corrupt"))


def test_campaign_create_scores_leaves_a_users_subfolder_alone(scores_copy, env, capsys, tmp_path):  # noqa: F811
    (scores_copy / "scores/notes").mkdir()
    before = fingerprint(scores_copy)
    args = ["campaign", "create", str(tmp_path / "c.db"), "--sheet", str(scores_copy / "plan.tsv"),
            "--plan-items", str(scores_copy / "plan/sampling_plan.csv"), "--scores", str(scores_copy / "scores"),
            "--kg", str(scores_copy / "kg.npz"), "--k", "5", "--max-depth", "30"]
    line = one_line_error(capsys, main(args))
    assert "notes: not a score dump" in line
    assert fingerprint(scores_copy) == before and (scores_copy / "scores/notes").is_dir()
    assert not (tmp_path / "c.db").exists()
