"""Issue 39, item 2: a command's outputs are committed all together or not at all, one command at a time per
output folder, and never over a file that kgeval did not write there.

Each test reproduces the issue's report on d99e1f8 (where it fails): a rename refused half way through a commit
(an immutable ``summary.md``, or ``os.replace`` failing on its n-th call), a second command on a folder that a
running one holds, ``annotate-merge`` with an ``--into`` that cannot be replaced, and a user's file inside the
output folder that carries an output's name or lies in an output's subfolder."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import test_cli_safety
from test_cli_safety import argv, one_line_error

from kgeval.cli import main
from kgeval.io import OutputStage

env = test_cli_safety.env  # the fixture: a folder of tiny inputs every command can read


def tree(folder: Path) -> dict[str, str]:
    """Every file (its SHA-256) and folder under ``folder``: a folder made or removed shows too."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder"
            for p in sorted(folder.rglob("*"))}


def run_stage(folder: Path, files: dict[str, str], command: str = "evaluate") -> None:
    """A command's run that writes ``files`` (relative path -> text) into ``folder`` through its staging folder."""
    with OutputStage(command, folder=folder) as stage:
        for rel, text in files.items():
            (stage.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (stage.root / rel).write_text(text)


FIRST = {"evaluation.csv": "System\nFirst\n", "summary.md": "first\n", "placement.csv": "first\n",
         "dumps/First/scores.npy": "1", "dumps/First/meta.json": "{}"}
SECOND = {"evaluation.csv": "System\nSecond\n", "summary.md": "second\n", "annotation_sheet.tsv": "second\n",
          "dumps/Second/scores.npy": "2", "dumps/Second/meta.json": "{}"}


@contextlib.contextmanager
def replace_fails_on_call(n: int):
    """``os.replace`` (and ``os.rename``) fail on their n-th call, as a rename refused by the filesystem."""
    real_replace, real_rename, calls = os.replace, os.rename, [0]

    def failing(real):
        def move(src, dst, *args, **kwargs):
            calls[0] += 1
            if calls[0] == n:
                raise OSError(errno.EPERM, "Operation not permitted", str(dst))
            return real(src, dst, *args, **kwargs)
        return move

    os.replace, os.rename = failing(real_replace), failing(real_rename)
    try:
        yield calls
    finally:
        os.replace, os.rename = real_replace, real_rename


def test_a_rename_failing_at_any_point_of_a_commit_leaves_the_previous_run_intact(tmp_path):
    """For every n, a commit whose n-th rename fails leaves the folder exactly as the previous run left it (no
    file of the new run, none of the previous run's gone, no folder made); the first n that is never reached
    commits the second run whole. On d99e1f8 the second failure already left the second run's evaluation.csv
    beside the first run's summary.md, and the previous run's placement.csv gone."""
    out = tmp_path / "o"
    run_stage(out, FIRST)
    (out / "my notes.txt").write_text("mine")
    before = tree(out)
    for n in range(1, 100):
        with replace_fails_on_call(n) as calls:
            try:
                run_stage(out, SECOND)
            except OSError as exc:
                assert exc.errno == errno.EPERM
                assert tree(out) == before, f"rename {n} failed: the folder is not the previous run's"
                continue
        assert calls[0] < n  # the whole commit ran: every rename came before the n-th
        break
    else:
        pytest.fail("the commit never completed")
    assert n > 3  # the failures above covered a commit with several renames
    after = tree(out)
    assert {k: v for k, v in after.items() if not k.startswith(".")} == {
        **{rel: hashlib.sha256(text.encode()).hexdigest() for rel, text in SECOND.items()},
        "my notes.txt": hashlib.sha256(b"mine").hexdigest(), "dumps": "folder", "dumps/Second": "folder"}


def test_an_immutable_output_stops_evaluate_with_the_previous_run_intact(env, capsys, tmp_path):
    """The issue's reproduction: ``chattr +i o/summary.md``, then a second ``evaluate`` into ``o``: exit 2, one
    line naming summary.md, and ``o`` exactly as the first run left it (d99e1f8: the second run's
    evaluation.csv beside the first run's summary.md, placement.csv gone)."""
    out = tmp_path / "o"
    first = argv("evaluate", env, out)
    assert main(first + ["--name", "First"]) == 0
    capsys.readouterr()
    before = tree(out)
    summary = out / "summary.md"
    with immutable(summary):
        line = one_line_error(capsys, main(argv("evaluate", env, out) + ["--name", "Second"]))
        assert tree(out) == before
    assert line == f"kgeval: error: {summary}: Operation not permitted"
    assert list(pd.read_csv(out / "evaluation.csv")["System"]) == ["First"]


@contextlib.contextmanager
def immutable(path: Path):
    """``chattr +i path`` where the filesystem and user allow it; elsewhere every rename or link of ``path``
    fails as the kernel refuses one of an immutable file."""
    if os.geteuid() == 0 and shutil.which("chattr") \
            and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0:
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        return
    real_replace, real_link = os.replace, os.link

    def refuse(real):
        def op(src, dst, *args, **kwargs):
            if path in (Path(src), Path(dst)):
                raise OSError(errno.EPERM, "Operation not permitted", str(src), str(dst))
            return real(src, dst, *args, **kwargs)
        return op

    os.replace, os.link = refuse(real_replace), refuse(real_link)
    try:
        yield
    finally:
        os.replace, os.link = real_replace, real_link


def test_annotate_merge_with_an_into_that_cannot_be_replaced_writes_nothing(env, capsys, tmp_path):
    """``annotate-merge --into J --merged J`` with J immutable: exit 2 and neither the labels nor the report
    written (d99e1f8 wrote both, then failed on J)."""
    d = env["dir"]
    into = tmp_path / "judgments.txt"
    into.write_text("a\tr\tb\tY\n")
    args = ["annotate-merge", "--export", str(d / "b.tsv"), "--a", str(d / "b.A.tsv"), "--b", str(d / "b.B.tsv"),
            "--adjudicator", str(d / "b.C.tsv"), "--out", str(tmp_path / "labels.txt"), "--report",
            str(tmp_path / "report.md"), "--into", str(into), "--merged", str(into)]
    before = tree(tmp_path)
    with immutable(into):
        line = one_line_error(capsys, main(args))
    assert tree(tmp_path) == before  # no labels, no report, no temporary or backup file left
    assert line == f"kgeval: error: {into}: Operation not permitted"
    assert main(args) == 0  # the same command once J can be replaced
    assert len(into.read_text().splitlines()) == 5 and (tmp_path / "labels.txt").is_file()
    capsys.readouterr()


HOLD = textwrap.dedent("""
    import sys, time
    from kgeval.io import OutputStage
    with OutputStage("evaluate", folder=sys.argv[1]) as stage:
        (stage.root / "evaluation.csv").write_text("held")
        print("holding", flush=True)
        time.sleep(float(sys.argv[2]))
""")


def holder(out: Path, seconds: float) -> subprocess.Popen:
    """A second process that runs a command's stage on ``out`` and holds it for ``seconds``."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(out), str(seconds)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.stdout.readline().strip() == "holding"
    return proc


def test_a_second_command_on_a_held_output_folder_is_refused_in_one_line(capsys, tmp_path):
    """While one command writes into ``o``, a second one on ``o`` stops at once with one line naming the other
    (d99e1f8 ran both and mixed their files); once the first has finished, or was killed with SIGKILL, the
    folder is free again: a lock of a dead process never blocks."""
    out = tmp_path / "o"
    synth = ["synth", "--out", str(out), "--entities", "20", "--relations", "4", "--no-annotations"]
    proc = holder(out, 60)
    try:
        line = one_line_error(capsys, main(synth))
        assert line.startswith(f"kgeval: error: {out}: another kgeval command (kgeval evaluate, process {proc.pid} "
                               "on ")
        assert "is writing into this folder" in line
        assert not (out / "train.txt").exists()
    finally:
        proc.kill()
        proc.wait()
    assert main(synth) == 0  # the killed holder's lock went with it
    assert (out / "train.txt").is_file() and not (out / "evaluation.csv").exists()
    assert not list(out.glob(".kgeval-staging-*")) and not (out / ".kgeval-lock").exists()
    proc = holder(out, 0.5)  # a holder that finishes: its file is the only one of its run
    assert proc.wait(timeout=30) == 0
    assert (out / "evaluation.csv").read_text() == "held" and (out / "train.txt").is_file()
    capsys.readouterr()


def test_two_stages_of_one_process_on_one_folder_exclude_each_other(tmp_path):
    """The lock holds between threads of one process too (each stage has its own lock)."""
    from kgeval.io import OutputLocked

    with OutputStage("reanalyze", folder=tmp_path / "o"), pytest.raises(OutputLocked, match="another kgeval"):
        OutputStage("reanalyze", folder=tmp_path / "o")


def test_a_users_file_with_an_outputs_name_is_refused_never_deleted(env, capsys, tmp_path):
    """``o/dumps/mine.txt`` of the user's survives a rerun of evaluate (d99e1f8 replaced the whole dumps/
    folder, exit 0), and a user's ``o/evaluation.csv`` stops evaluate in one line before anything moves
    (d99e1f8 wrote over it)."""
    out = tmp_path / "o"
    assert main(argv("evaluate", env, out) + ["--name", "First"]) == 0
    (out / "dumps" / "mine.txt").write_text("mine")
    (out / "dumps" / "First" / "notes.txt").write_text("also mine")
    assert main(argv("evaluate", env, out) + ["--name", "Second"]) == 0
    assert (out / "dumps" / "mine.txt").read_text() == "mine"
    assert sorted(p.name for p in (out / "dumps").iterdir()) == ["First", "Second", "mine.txt"]
    assert [p.name for p in (out / "dumps" / "First").iterdir()] == ["notes.txt"]  # only kgeval's files went
    capsys.readouterr()

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "evaluation.csv").write_text("my own table\n")
    (fresh / "dumps").write_text("a file where kgeval writes a folder\n")
    before = tree(fresh)
    line = one_line_error(capsys, main(argv("evaluate", env, fresh) + ["--name", "Second"]))
    assert line.startswith(f"kgeval: error: {fresh / 'dumps'}: is in the way of the output") \
        or line.startswith(f"kgeval: error: {fresh / 'evaluation.csv'}: exists and kgeval evaluate did not write "
                           "it here")
    assert tree(fresh) == before
    (fresh / "dumps").unlink()
    line = one_line_error(capsys, main(argv("evaluate", env, fresh) + ["--name", "Second"]))
    assert line == (f"kgeval: error: {fresh / 'evaluation.csv'}: exists and kgeval evaluate did not write it here "
                    f"(it is not listed in {fresh / '.kgeval-outputs.json'}); kgeval never writes over your files: "
                    "move it away or choose another output folder")
    assert (fresh / "evaluation.csv").read_text() == "my own table\n"


def test_another_commands_files_are_not_this_commands_to_replace(tmp_path):
    """Each command's files are listed apart: a second command's output with a name the first one wrote is
    refused, and each command's rerun removes only its own stale files."""
    from kgeval.errors import InputError

    out = tmp_path / "o"
    run_stage(out, {"a.csv": "1", "shared.csv": "1"}, command="synth")
    with pytest.raises(InputError, match=r"shared.csv: exists and kgeval reanalyze did not write it here \(kgeval "
                                         r"synth wrote it\)"):
        run_stage(out, {"shared.csv": "2"}, command="reanalyze")
    run_stage(out, {"b.csv": "2"}, command="reanalyze")
    run_stage(out, {"a.csv": "3"}, command="synth")  # synth's stale shared.csv goes, reanalyze's b.csv stays
    assert {k: v for k, v in tree(out).items() if not k.startswith(".")} == {
        "a.csv": hashlib.sha256(b"3").hexdigest(), "b.csv": hashlib.sha256(b"2").hexdigest()}


def test_a_commit_killed_half_way_is_put_back_by_the_next_command(tmp_path):
    """SIGKILL cannot be held: a commit killed between two renames leaves its backups and journal in
    ``.kgeval-trash-<host>-<pid>-*``. The next command on the folder puts the previous run back before it
    starts, so the folder is never left mixed."""
    out = tmp_path / "o"
    run_stage(out, FIRST)
    before = tree(out)
    kill_after = textwrap.dedent("""
        import os, sys
        from pathlib import Path
        from kgeval.io import OutputStage
        real, n = os.replace, [0]
        def replace(src, dst):
            real(src, dst)
            n[0] += Path(dst).parent == Path(sys.argv[1])
            if n[0] == 2:  # two of the new files in place, two to come
                os.kill(os.getpid(), 9)
        os.replace = replace
        with OutputStage("evaluate", folder=sys.argv[1]) as stage:
            for rel, text in {"evaluation.csv": "x", "summary.md": "x", "other.md": "x", "z.md": "x"}.items():
                (stage.root / rel).write_text(text)
    """)
    done = subprocess.run([sys.executable, "-c", kill_after, str(out)], capture_output=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == -9
    assert tree(out) != before and list(out.glob(".kgeval-trash-*"))  # mixed, with what puts it back
    run_stage(out, {"late.csv": "y"}, command="reanalyze")  # any command on the folder
    assert {k: v for k, v in tree(out).items() if k != "late.csv" and not k.startswith(".kgeval-outputs")} \
        == {k: v for k, v in before.items() if not k.startswith(".kgeval-outputs")}
    assert not list(out.glob(".kgeval-trash-*")) and not list(out.glob(".kgeval-staging-*"))


def test_two_synth_runs_at_once_leave_one_whole_run(capsys, tmp_path):
    """Two real ``kgeval synth`` processes started together on one ``--out`` (one with annotations, one
    without: different sets of files): each exits 0 or is refused in one line, and the folder holds exactly one
    run's files, byte for byte, never a mix. An invariant under any timing; the deterministic reproduction of a
    second command during a first is the held folder above."""
    def synth(out: Path, seed: int) -> list[str]:
        return [sys.executable, "-c", "import sys; from kgeval.cli import main; sys.exit(main(sys.argv[1:]))",
                "synth", "--out", str(out), "--entities", "300", "--relations", "8",
                "--seed", str(seed)] + (["--no-annotations"] if seed == 2 else [])

    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for seed in (1, 2):
        subprocess.run(synth(tmp_path / f"ref{seed}", seed), check=True, capture_output=True, env=environ)
    refs = [{k: v for k, v in tree(tmp_path / f"ref{seed}").items() if not k.startswith(".")} for seed in (1, 2)]
    assert refs[0] != refs[1]
    out = tmp_path / "o"
    procs = [subprocess.Popen(synth(out, seed), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                              env=environ) for seed in (1, 2)]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    for rc, err in results:
        assert rc == 0 or (rc == 2 and err.strip().splitlines()[-1].startswith(f"kgeval: error: {out}: another "
                                                                                 "kgeval command")), err
    assert any(rc == 0 for rc, _ in results)
    assert {k: v for k, v in tree(out).items() if not k.startswith(".")} in refs


def test_a_set_of_files_outside_an_output_folder_is_renamed_under_its_folders_lock(tmp_path):
    """``annotate-merge``'s or a checkpoint's files: while one commit holds their folder, another one waits
    (here: gives up after its timeout with one line) instead of interleaving its renames."""
    import threading

    from kgeval.io import OutputLocked
    from kgeval.io.lock import folders_locked

    holding, release = threading.Event(), threading.Event()

    def hold():
        with folders_locked([tmp_path]):
            holding.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert holding.wait(10)
        with pytest.raises(OutputLocked, match="another kgeval command"), folders_locked([tmp_path], timeout=0.2):
            pass
    finally:
        release.set()
        t.join()
    with folders_locked([tmp_path], timeout=0.2):  # free again
        pass


def test_a_manifest_of_the_earlier_form_still_names_what_kgeval_wrote(tmp_path):
    """A folder last written by d99e1f8 lists top-level names only (``dumps`` meant the whole folder, which that
    version replaced whole): its files count as kgeval's, anything unlisted stays."""
    out = tmp_path / "o"
    (out / "dumps" / "First").mkdir(parents=True)
    (out / "dumps" / "First" / "scores.npy").write_text("1")
    (out / "evaluation.csv").write_text("old")
    (out / "notes.txt").write_text("mine")
    (out / ".kgeval-outputs.json").write_text('{"command": "evaluate", "entries": ["dumps", "evaluation.csv"]}')
    run_stage(out, {"evaluation.csv": "new", "dumps/Second/scores.npy": "2"})
    assert {k: v for k, v in tree(out).items() if not k.startswith(".")} == {
        "dumps": "folder", "dumps/Second": "folder", "evaluation.csv": hashlib.sha256(b"new").hexdigest(),
        "dumps/Second/scores.npy": hashlib.sha256(b"2").hexdigest(), "notes.txt": hashlib.sha256(b"mine").hexdigest()}
