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


# ---- item 2: one output-folder rule for every command that writes ----------------------------------------------
def test_campaign_export_never_replaces_a_users_file(tmp_path, capsys):
    import logging

    from test_campaign import Campaign, judge_all

    # an earlier test's main() left a log handler on its captured (closed) stderr
    logging.basicConfig(handlers=[logging.NullHandler()], force=True)
    camp = Campaign(tmp_path)
    judge_all(camp, {1: "yy", 2: "nn"})
    out = tmp_path / "out"
    out.mkdir()
    (out / "judgments.txt").write_text("my own judgments\n")
    (out / "tasks.json").write_text("[]\n")
    capsys.readouterr()
    line = one_line_error(capsys, main(["campaign", "export", str(camp.db), str(out)]))
    assert f"{out / 'judgments.txt'}: exists and kgeval campaign export did not write it here" in line
    line = one_line_error(capsys, main(["campaign", "export", str(camp.db), str(out), "--format", "label-studio"]))
    assert f"{out / 'tasks.json'}: exists" in line
    assert sorted(p.name for p in out.iterdir()) == ["judgments.txt", "tasks.json"]
    assert (out / "judgments.txt").read_text() == "my own judgments\n" and (out / "tasks.json").read_text() == "[]\n"
    # a folder of its own: written, then replaced by the same export, and both formats side by side
    mine = tmp_path / "mine"
    for fmt in ("kgeval", "kgeval", "label-studio"):
        assert main(["campaign", "export", str(camp.db), str(mine), "--format", fmt]) == 0
    assert {"judgments.txt", "report.md", "tasks.json", "labeling_config.xml"} <= {p.name for p in mine.iterdir()}


def test_a_named_output_file_replaces_only_what_the_command_wrote(tmp_path):
    from kgeval.errors import InputError
    from kgeval.io import MANIFEST, OutputStage

    user = tmp_path / "sheet.tsv"
    user.write_text("the user's\n")
    with pytest.raises(InputError, match="did not write it here"), OutputStage("annotate-export") as stage:
        stage.path(user).write_text("new\n")
    assert user.read_text() == "the user's\n" and sorted(p.name for p in tmp_path.iterdir()) == ["sheet.tsv"]
    mine = tmp_path / "mine.tsv"
    for text in ("first\n", "second\n"):  # its own file, listed beside it, is replaced on a rerun
        with OutputStage("annotate-export") as stage:
            stage.path(mine).write_text(text)
    assert mine.read_text() == "second\n" and (tmp_path / MANIFEST).is_file()
    with pytest.raises(InputError, match="kgeval annotate-export wrote it"), OutputStage("build-kg") as stage:
        stage.path(mine).write_text("other command\n")
    # the workflow's own atomic writes (command "") are Snakemake's outputs: no listing
    with OutputStage("") as stage:
        stage.path(user).write_text("workflow\n")
    assert user.read_text() == "workflow\n"


# ---- item 4: campaign import is one transaction ----------------------------------------------------------------
def _ls_export(camp, tmp_path, tasks_annotations) -> Path:
    import json

    from test_campaign import ls_annotation

    from kgeval.campaign.labelstudio import tasks
    from kgeval.campaign.store import connect

    conn = connect(camp.db)
    t = tasks(conn)
    conn.close()
    for task, anns in zip(t, tasks_annotations):
        task["annotations"] = [ls_annotation(*a) if isinstance(a, tuple) else a for a in anns]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(t[:len(tasks_annotations)]))
    return path


def _judgments(db) -> int:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]


@pytest.mark.parametrize("bad, problem", [
    ({"note": "x" * 5001}, "note: at most 5000 characters"),
    ({"seconds": -1}, "seconds -1.0: expected a duration"),
    ({"seconds": 10 ** 400}, "seconds inf: expected a duration"),
    ({"adjudicate": "can't tell"}, "the adjudicating annotation says can't tell"),
    ({"duplicate": True}, "the same item as task 1"),
])
def test_a_bad_late_task_leaves_nothing_in_and_the_corrected_file_imports(tmp_path, capsys, bad, problem):
    from test_campaign import SRC, Campaign

    camp = Campaign(tmp_path)
    good = [[(7, "Y", SRC), (8, "Y", SRC)], [(7, "N"), (8, "N")], [(7, "Y", SRC), (8, "N"), (9, "N")],
            [(7, "N"), (8, "N")], [(7, "N"), (8, "N")]]
    last = [(7, "Y", SRC), (8, "N")]
    if "adjudicate" in bad:
        last.append((9, bad["adjudicate"]))
    elif "duplicate" not in bad:
        from test_campaign import ls_annotation

        ann = ls_annotation(8, "N", note=bad.get("note", ""))
        ann["lead_time"] = bad.get("seconds", 4.5)
        last = [last[0], ann]
    path = _ls_export(camp, tmp_path, good + [last])
    if "duplicate" in bad:
        import json

        t = json.loads(path.read_text())
        t[-1]["data"] = t[0]["data"]
        path.write_text(json.dumps(t))
    before = (camp.db.read_bytes(), _judgments(camp.db))
    capsys.readouterr()
    line = one_line_error(capsys, main(["campaign", "import", str(camp.db), str(path)]))
    assert problem in line and str(path) in line
    assert _judgments(camp.db) == before[1] == 0
    fixed = _ls_export(camp, tmp_path, good + [[(7, "Y", SRC), (8, "N"), (9, "Y", SRC)]])
    assert main(["campaign", "import", str(camp.db), str(fixed)]) == 0
    assert _judgments(camp.db) == 2 * 6 + 2  # the corrected file: every task, two adjudications


def test_a_refused_judgment_rolls_back_the_whole_import(tmp_path, capsys):
    """The protocol's own refusal (an item already judged by that person) comes after earlier tasks were
    recorded: the transaction takes them back."""
    from test_campaign import SRC, Campaign

    camp = Campaign(tmp_path)
    first = _ls_export(camp, tmp_path, [[], [], [(7, "Y", SRC)]])
    assert main(["campaign", "import", str(camp.db), str(first)]) == 0
    n = _judgments(camp.db)
    again = _ls_export(camp, tmp_path, [[(7, "N"), (8, "N")], [(7, "N"), (8, "N")], [(7, "Y", SRC), (8, "Y", SRC)]])
    capsys.readouterr()
    line = one_line_error(capsys, main(["campaign", "import", str(camp.db), str(again)]))
    assert "already judged" in line and _judgments(camp.db) == n


# ---- item 10: malformed Label Studio exports give one line -----------------------------------------------------
@pytest.mark.parametrize("text, problem", [
    ('[{"data": {"item": "1"}, "annotations": [5]}]', "expected an object with a 'result' list"),
    ('[{"data": {"item": "1"}, "annotations": [{"result": [7]}]}]', "a result without a 'value' object"),
    ('[{"data": {"item": "1"}, "annotations": [{"result": [{"from_name": "label", "value": {"choices": [3]}}]}]}]',
     "expected a list of strings"),
    ('[{"data": {"item": "1"}, "annotations": {"x": 1}}]', "annotations: expected a list"),
    ('[{"data": "1"}]', "data.item is not an item"),
    ('[7]', "data.item is not an item"),
    ("[" * 5000 + "]" * 5000, "nested too deeply"),
])
def test_malformed_label_studio_exports_give_one_line(tmp_path, capsys, text, problem):
    from test_campaign import Campaign

    camp = Campaign(tmp_path)
    path = tmp_path / "bad.json"
    path.write_text(text)
    capsys.readouterr()
    line = one_line_error(capsys, main(["campaign", "import", str(camp.db), str(path)]))
    assert problem in line and _judgments(camp.db) == 0


# ---- item 11: add-person prints only an http(s) link, errors name the campaign file ---------------------------
@pytest.mark.parametrize("url", ["javascript:alert(1)//", "data:text/html,x", "http://a\x1b[31m/", "ftp://x/", "x"])
def test_add_person_refuses_a_link_that_is_not_http(tmp_path, capsys, url):
    from test_campaign import Campaign

    camp = Campaign(tmp_path)
    capsys.readouterr()
    line = one_line_error(capsys, main(["campaign", "add-person", str(camp.db), "zed", "--role", "annotator",
                                        "--base-url", url]))
    assert "--base-url" in line and "http:// or https://" in line


# ---- item 8: two processes on a fresh $KGEVAL_HOME -------------------------------------------------------------
def test_a_second_builder_waits_for_the_first_and_uses_what_it_built(tmp_path):
    """A builder that finds the cache's lock held waits (before the fix it built alongside and its rename met the
    other's folder: ``Directory not empty``); once the lock is free it builds, or finds built, the same files."""
    import fcntl
    import os
    import threading

    from conftest import ROOT

    from kgeval import home
    from kgeval.config import load_config_file, validate_config
    from kgeval.data.cache import LOCK, DataBuilder

    cfg = validate_config(home.locate_defaults(load_config_file(ROOT / "config/tiny.yaml")),
                          ROOT / "config/schema.yaml", models=False)
    root = tmp_path / "resources"
    root.mkdir()
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another process building (flock locks differ per open file)
    done: dict = {}
    worker = threading.Thread(target=lambda: done.update(DataBuilder(cfg, cfg["manifest"], root)
                                                         .build_testset("Synth-Test-S")))
    worker.start()
    worker.join(3.0)
    assert worker.is_alive() and not done and not (root / "synth").exists()  # waiting, nothing built
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    worker.join(300)
    assert done["tsv"].is_file() and not list(root.glob(".staging-*"))
    stamp = done["tsv"].stat().st_mtime_ns
    DataBuilder(cfg, cfg["manifest"], root).build_testset("Synth-Test-S")  # the second uses what is built
    assert done["tsv"].stat().st_mtime_ns == stamp


# ---- item 11: the smaller ones ---------------------------------------------------------------------------------
def test_rbp_p_is_bounded_and_refused_on_a_plan_that_is_not_on_rbp(scores_copy, capsys, tmp_path):
    for value, problem in (("2", "out of range"), ("nan", "not a number"), ("0.5", "is on P, not RBP")):
        line = one_line_error(capsys, main(_estimate(scores_copy, tmp_path / "est") + ["--rbp-p", value]))
        assert "--rbp-p" in line and problem in line
    assert not (tmp_path / "est").exists()


@pytest.mark.parametrize("path", ["/static/../api/{t}/next", "/x/..//j/{t}", "//live/{t}", "/a/../API/{t}?x=1",
                                  "/static/{t}"])
def test_the_request_log_never_keeps_a_token(path):
    from kgeval.campaign.server import redact

    token = "Ab3_d-9xYz0123456789abcdefghijkl"
    shown = redact(path.format(t=token))
    assert token not in shown and "…" in shown
    assert redact("/static/app.js") == "/static/app.js" and redact("/api/abc/next") == "/api/…/next"


def test_a_bar_in_a_system_name_stays_in_its_cell():
    import pandas as pd

    from kgeval.io import to_markdown

    md = to_markdown(pd.DataFrame({"System": ["a|b", "c"], "MRR": [0.5, 0.25]}))
    rows = [line for line in md.splitlines() if line.startswith("| a") or line.startswith("| c")]
    assert rows[0] == "| a\\|b | 0.5000 |" and rows[1].count("|") == 3
    # GFM splits a row on every unescaped bar: two cells, as many as the header has
    import re

    assert all(len(re.split(r"(?<!\\)\|", line)) == 4 for line in md.splitlines())


@pytest.mark.parametrize("url", ["https://en.wikipedia.org/wiki/X\x1b[2J", "https://x.org/\x07", "https://x.org/ a"])
def test_a_control_character_in_a_sheet_link_is_refused(url):
    from kgeval.errors import InputError
    from kgeval.pools.annotation.sheets import _check_url

    with pytest.raises(InputError, match=r"s.tsv:3: item 7: source link .* is not an http\(s\) URL"):
        _check_url("s.tsv", 3, "7", url)
    _check_url("s.tsv", 3, "7", "https://en.wikipedia.org/wiki/X")


def test_an_error_names_the_output_never_its_temporary_file(tmp_path):
    import errno

    from kgeval.io import OutputStage

    dest = tmp_path / "out" / "estimates.csv"
    with pytest.raises(OSError) as info, OutputStage("sample-estimate", folder=tmp_path / "out") as stage:
        tmp = stage.path(dest)
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp))
    assert info.value.filename == str(dest) and ".part" not in str(info.value)
    assert not (tmp_path / "out").exists()


def test_a_campaign_file_that_cannot_be_created_is_named(tmp_path, monkeypatch):
    import sqlite3

    from kgeval.campaign import store
    from kgeval.errors import InputError

    def failing(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store.sqlite3, "connect", failing)
    with pytest.raises(InputError) as info:
        store.create(tmp_path / "x.db", [], {})
    assert str(info.value) == f"{tmp_path / 'x.db'}: cannot be created: disk I/O error"
    assert list(tmp_path.iterdir()) == []  # no temporary file left


# ---- item 10: the four tar cases of extract_splits -------------------------------------------------------------
def _tar(path: Path, members: list[tuple[str, bytes | None, int | None]], mode: str = "w:gz") -> Path:
    """A tar with ``(name, data, claimed size)`` members (data None: a header alone, as a lying archive has)."""
    import io
    import tarfile

    with tarfile.open(path, mode) as tar:
        for name, data, size in members:
            info = tarfile.TarInfo(name)
            info.size = len(data or b"") if size is None else size
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _splits(path: Path, out: Path):
    from kgeval.data.steps import extract_splits

    return extract_splits(path, out, {s: str(out / f"{s}.norm") for s in ("train", "valid", "test")})


def test_a_file_then_a_folder_of_the_same_name_is_refused(tmp_path):
    from kgeval.errors import InputError

    arc = _tar(tmp_path / "a.tar.gz", [("d/train.txt", b"a\tr\tb\n", None), ("d/train.txt/x", b"y", None)])
    with pytest.raises(InputError, match=r"unsafe member 'd/train.txt/x': 'd/train.txt' is a file, not a folder"):
        _splits(arc, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.txt"))


def test_a_truncated_archive_is_one_line(tmp_path):
    import os

    from kgeval.errors import InputError

    data = os.urandom(200_000)  # incompressible: the cut lands inside the member's data
    arc = _tar(tmp_path / "a.tar.gz", [("train.txt", data, None), ("valid.txt", b"x", None)])
    arc.write_bytes(arc.read_bytes()[: len(arc.read_bytes()) // 2])
    with pytest.raises(InputError, match=r"a.tar.gz: not a readable tar archive, or a truncated or damaged one "
                                         r".*download it again"):
        _splits(arc, tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.txt")) if (tmp_path / "out").exists() else True


def test_a_member_larger_than_the_free_disk_is_refused_before_writing(tmp_path, monkeypatch):
    import shutil as sh
    import tarfile

    from kgeval.data import archive
    from kgeval.errors import InputError

    info = tarfile.TarInfo("train.txt")
    info.size = 8 << 30
    arc = tmp_path / "a.tar"
    with open(arc, "wb") as fh:  # a header claiming 8 GiB, its data a hole of a sparse file (no disk used)
        fh.write(info.tobuf())
        fh.truncate(512 + (8 << 30) + 1024)
    monkeypatch.setattr(archive.shutil, "disk_usage", lambda p: sh._ntuple_diskusage(10 << 30, 9 << 30, 1 << 30))
    with pytest.raises(InputError, match=r"its members take 8,589,934,592 bytes, more than the 1,073,741,824 bytes"):
        _splits(arc, tmp_path / "out")
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]


def test_a_disk_that_fills_while_extracting_is_one_line(tmp_path, monkeypatch):
    import errno

    from kgeval.data import archive
    from kgeval.errors import InputError

    def full(src, dst, *args):
        dst.write(src.read(1000))
        raise OSError(errno.ENOSPC, "No space left on device", dst.name)

    arc = _tar(tmp_path / "a.tar.gz", [("train.txt", b"a\tr\tb\n" * 1000, None)])
    monkeypatch.setattr(archive.shutil, "copyfileobj", full)
    with pytest.raises(InputError, match=r"a.tar.gz: the disk filled while extracting into .*nothing was extracted"):
        _splits(arc, tmp_path / "out")
    assert not any((tmp_path / "out").rglob("*")) or not list((tmp_path / "out").rglob("train.txt"))


def test_an_emptied_questions_file_is_one_line(tmp_path, synth_kg):
    from kgeval.data.questions import QUESTION_HEADER, load_questions
    from kgeval.errors import InputError

    for text in ("", "\t".join(QUESTION_HEADER) + "\n"):
        (tmp_path / "q.tsv").write_text(text)
        with pytest.raises(InputError, match=r"q.tsv: no questions \(an empty or truncated questions file"):
            load_questions(tmp_path / "q.tsv", synth_kg)
