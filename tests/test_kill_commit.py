"""``kill -9`` inside every writing command's commit (issue 60, item 3): the command is held at a named point
(:func:`kgeval.io.pause_point`: every temporary complete, or one output renamed and the rest not), killed there
with SIGKILL, then run again; the rerun leaves no temporary of kgeval's in the folder and every output equal,
byte for byte, to an uninterrupted run's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import kgeval
from kgeval.io.pause import kill_at
from kgeval.io.stage import STAGING, TRASH
from kgeval.io.temps import OLD, PART

pytest.importorskip("starlette")

SRC = str(Path(kgeval.__file__).parents[1])
TEMPORARY = (PART, OLD, STAGING, TRASH)
POINTS = ("commit_start", "commit_midway")


def cli(args: list[str], pause: str | None = None) -> int | None:
    """Run ``kgeval ARGS`` in a subprocess; with ``pause``, hold it at that point and SIGKILL it there (None)."""
    rc, err = kill_at(args, pause, dict(os.environ, PYTHONPATH=SRC))
    if pause is not None and rc is not None:
        pytest.fail(f"kgeval {args[0]} ended (rc {rc}) before {pause}: {err}")
    assert rc in (None, 0), err
    return rc


def temporaries(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.name.startswith(TEMPORARY))


def outputs(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


@pytest.fixture(scope="module")
def inputs(synth_kg, pooled, tmp_path_factory):
    from test_campaign import write_sheet
    from test_sampling_estimates import judged_plan

    from kgeval.campaign.build import create_campaign
    from kgeval.scale.steps import graph_step

    d = tmp_path_factory.mktemp("kill-inputs")
    (d / "sp").mkdir()
    judged_plan(d / "sp", synth_kg, pooled[1])
    graph_step("wikikg2", 0.0005, 0, d / "scale.npz")
    write_sheet(d / "sheet.tsv", 6)
    create_campaign(d / "c.db", d / "sheet.tsv")
    return d


def argv(command: str, d: Path, out: Path) -> list:
    return {
        "campaign export": ["campaign", "export", d / "c.db", out],
        "sample-estimate": ["sample-estimate", "--plan", d / "sp/plan", "--labels", d / "sp/labels.txt", "--scores",
                            d / "sp/scores", "--kg", d / "sp/kg.npz", "--k", "5", "--max-depth", "30", "--out", out],
        "scale graph": ["scale", "graph", "--shape", "wikikg2", "--factor", "0.0005", "--out", out],
        "scale evaluate": ["scale", "evaluate", d / "scale.npz", "--out", out, "--systems", "2", "--k", "5",
                           "--sample-size", "100", "--negatives", "20", "--bootstrap", "100", "--pool-depths", "1,5",
                           "--pool-questions", "50", "--plan-budget", "20"],
    }[command]


COMMANDS = ("campaign export", "sample-estimate", "scale graph", "scale evaluate")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_kill_in_the_commit_leaves_nothing_after_a_rerun(inputs, tmp_path, command):
    cli(argv(command, inputs, tmp_path / "ref"))
    want = outputs(tmp_path / "ref")
    assert want and not temporaries(tmp_path / "ref")
    # a fresh folder killed with every temporary complete; the same command's earlier outputs killed half-renamed
    for point, earlier in zip(POINTS, (False, True)):
        out = tmp_path / f"{point}-{earlier}"
        if earlier:
            cli(argv(command, inputs, out))
        assert cli(argv(command, inputs, out), pause=point) is None
        left = temporaries(out)
        assert left, "the kill left nothing to sweep: it did not land inside the commit"
        if point == "commit_start" and command == "scale graph":
            # the case: a full-size graph.npz under a temporary name, and only one (no second copy)
            parts = [p for p in left if p.startswith(".kgeval-part-")]
            assert len(parts) == 1 and (out / parts[0]).stat().st_size == len(want["graph.npz"]), left
        cli(argv(command, inputs, out))
        assert temporaries(out) == [], (point, earlier)
        assert outputs(out) == want, (point, earlier)


def test_a_kill_in_campaign_create_leaves_nothing_after_a_rerun(inputs, tmp_path):
    """campaign create has no output stage: its commit is the rename of its temporary database."""
    from kgeval.campaign.store import connect

    db = tmp_path / "c.db"
    args = ["campaign", "create", db, "--sheet", inputs / "sheet.tsv"]
    assert cli(args, pause="campaign_create_before_rename") is None
    assert temporaries(tmp_path) and not db.exists()  # killed before its rename: no campaign file yet
    cli(args)
    assert temporaries(tmp_path) == []
    conn = connect(db)
    assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 6
    conn.close()


def test_a_running_commands_temporaries_are_kept_and_a_users_files_never_swept(tmp_path):
    """The sweep removes only kgeval's names of a process of this host that is gone."""
    import socket

    from kgeval.io.temps import sweep

    host = socket.gethostname()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    files = {f".kgeval-part-{host}-{os.getpid()}-abcdefgh-x.csv.part": "running (this process)",
             f".kgeval-part-{host}-{dead.pid}-abcdefgh-x.csv.part": "dead",
             f".kgeval-part-otherhost-{dead.pid}-abcdefgh-x.csv.part": "another host's",
             f".x.csv.{'abcdefgh'}.part": "the old naming: could be a user's",
             "x.csv": "the user's",
             f".kgeval-old-{host}-{dead.pid}-abcdefgh-y.csv": "a backup whose destination is missing",
             f".kgeval-old-{host}-{dead.pid}-abcdefgh-x.csv": "a backup whose destination is in place"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    sweep(tmp_path)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {
        f".kgeval-part-{host}-{os.getpid()}-abcdefgh-x.csv.part": "running (this process)",
        f".kgeval-part-otherhost-{dead.pid}-abcdefgh-x.csv.part": "another host's",
        ".x.csv.abcdefgh.part": "the old naming: could be a user's",
        "x.csv": "the user's",
        "y.csv": "a backup whose destination is missing"}
