"""Probe the README's promise on the file and command-line side, as a careless user and an attacker would (issue
49): your files are never written over, renamed or moved; outputs appear together or not at all; bad input gets
one line. Each case runs a command (in this process, as ``kgeval`` would) on a fresh folder of tiny inputs and
checks three things: the exit status, that stderr is one ``kgeval: error: …`` line (or nothing, for a case that
must succeed) and that no file the user owns changed. It prints ``case | expected | got | ok`` and exits 1 when
any case fails.

    python benchmarks/probe_promise.py [--out probe.tsv] [--slow] [--kills]

``--slow`` adds two processes building one fresh ``$KGEVAL_HOME`` at once (about a minute); ``--kills`` adds a
SIGKILL inside every writing command's commit, then a rerun (11 cases, several minutes). It needs no data
mirror and no network (``kgeval reproduce``'s cases copy the committed reference/smoke). The HTTP routes are
h49b's probe; this one covers files and the command line.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from kgeval.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import heartbeat_main, write_sheet  # noqa: E402

SRC = "https://en.wikipedia.org/wiki/X"


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file and link under ``folder`` (its SHA-256, or where a link points)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        if p.is_symlink():
            out[rel] = "-> " + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run(args: list[str]) -> tuple[int, str]:
    """``kgeval ARGS`` in this process: (exit status, stderr)."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # a traceback: the worst answer
            return 99, f"{type(exc).__name__}: {exc}"
    return rc, err.getvalue()


def verdict(rc: int, err: str, want_ok: bool) -> str:
    lines = [line for line in err.strip().splitlines() if line and " INFO " not in line and " WARNING " not in line]
    if want_ok:
        return "ok" if rc == 0 else f"rc {rc}: {lines[-1][:120] if lines else ''}"
    if rc == 0:
        return "rc 0 (accepted)"
    if rc == 99 or "Traceback" in err:
        return f"traceback: {err.strip().splitlines()[-1][:120]}"
    if len(lines) != 1 or not lines[0].startswith("kgeval: error: "):
        return f"{len(lines)} lines: {' / '.join(lines)[:120]}"
    return "one line"


def sheet(path: Path, n: int = 4) -> Path:
    return write_sheet(path, n)


def ls_tasks(db: Path) -> list[dict]:
    from kgeval.campaign.labelstudio import tasks
    from kgeval.campaign.store import connect

    conn = connect(db)
    t = tasks(conn)
    conn.close()
    return t


def ann(who, choice, source="", note="", seconds=4.5) -> dict:
    res = [{"from_name": "label", "to_name": "question_text", "type": "choices", "value": {"choices": [choice]}}]
    if source:
        res.append({"from_name": "source", "type": "textarea", "value": {"text": [source]}})
    if note:
        res.append({"from_name": "note", "type": "textarea", "value": {"text": [note]}})
    return {"completed_by": who, "result": res, "lead_time": seconds, "was_cancelled": False}


def judgments(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]


class Probe:
    def __init__(self, base: Path):
        self.base = base
        self.rows: list[tuple[str, str, str, bool]] = []

    def case(self, name: str, args_of, want_ok: bool = False, setup=None, extra=None) -> None:
        """``args_of(folder)`` on a fresh folder holding a user's files (``setup(folder)`` adds more); the user's
        files must not change unless the case succeeds and ``extra(folder)`` says what else must hold."""
        folder = Path(tempfile.mkdtemp(prefix="case ", dir=self.base))  # a space in every path
        user = folder / "mine"
        user.mkdir()
        sheet(user / "sheet ü.tsv")
        (user / "notes.txt").write_text("my notes\n")
        if setup is not None:
            try:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    setup(folder)
            except BaseException as exc:  # noqa: BLE001 - a setup that fails is a finding too
                self.rows.append((name, "setup", f"setup failed: {type(exc).__name__}: {exc}"[:160], False))
                return
        try:  # the arguments first: they may make the campaign file the case runs on
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                args = args_of(folder)
        except BaseException as exc:  # noqa: BLE001
            self.rows.append((name, "setup", f"setup failed: {type(exc).__name__}: {exc}"[:160], False))
            return
        before = fingerprint(user)
        rc, err = run(args)
        got = verdict(rc, err, want_ok)
        ok = got == ("ok" if want_ok else "one line")
        if not want_ok and fingerprint(user) != before:
            got, ok = got + "; a user's file changed", False
        if ok and extra is not None:
            problem = extra(folder)
            if problem:
                got, ok = got + "; " + problem, False
        self.rows.append((name, "succeeds" if want_ok else "one line, nothing changed", got, ok))


def campaign_cases(p: Probe) -> None:
    def db(folder: Path) -> Path:
        # the campaign file is the command's to write (import) or read: outside the user's folder, its state
        # checked by its judgments
        path = folder / "c ampaign.db"
        if not path.exists():
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["campaign", "create", str(path), "--sheet", str(folder / "mine/sheet ü.tsv")]) == 0
        return path

    def judged(folder: Path) -> Path:
        path = db(folder)
        if judgments(path):
            return path
        export = folder / "first.json"
        t = ls_tasks(path)
        t[0]["annotations"] = [ann(1, "Y", SRC), ann(2, "Y", SRC)]
        export.write_text(json.dumps(t[:1]))
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["campaign", "import", str(path), str(export)]) == 0
        return path

    for url in ("javascript:alert(1)//", "data:text/html,<b>x", "http://x\x1b[2J/", "ftp://x/", "//x", " "):
        p.case(f"add-person --base-url {url!r}", lambda f, u=url: ["campaign", "add-person", db(f), "ann", "--role",
                                                                 "annotator", "--base-url", u])
    for name in ("", "a\x1bb", "x" * 101):
        p.case(f"add-person name {name[:12]!r}", lambda f, n=name: ["campaign", "add-person", db(f), n, "--role",
                                                                  "annotator"])
    p.case("add-person twice", lambda f: ["campaign", "add-person", db(f), "ann", "--role", "annotator"],
           setup=lambda f: main(["campaign", "add-person", str(db(f)), "ann", "--role", "annotator"]))
    p.case("campaign create over an existing file", lambda f: ["campaign", "create", f / "mine/notes.txt", "--sheet",
                                                              f / "mine/sheet ü.tsv"])
    p.case("campaign create in a missing folder", lambda f: ["campaign", "create", f / "nope/x.db", "--sheet",
                                                            f / "mine/sheet ü.tsv"])

    # export: OUT holding the user's files, OUT a file, OUT the campaign itself, OUT a link to the user's folder
    def users_judgments(f: Path) -> None:
        (f / "mine/out").mkdir()
        (f / "mine/out/judgments.txt").write_text("mine\n")
        (f / "mine/out/tasks.json").write_text("[]\n")

    p.case("export over a user's judgments.txt", lambda f: ["campaign", "export", judged(f), f / "mine/out"],
           setup=users_judgments)
    p.case("export label-studio over a user's tasks.json",
           lambda f: ["campaign", "export", judged(f), f / "mine/out", "--format", "label-studio"],
           setup=users_judgments)
    p.case("export OUT = an existing file", lambda f: ["campaign", "export", judged(f), f / "mine/notes.txt"])
    p.case("export OUT = the campaign file", lambda f: ["campaign", "export", judged(f), db(f)])
    p.case("export OUT = a link to the user's folder", lambda f: ["campaign", "export", judged(f), f / "link"],
           setup=lambda f: (users_judgments(f), (f / "link").symlink_to(f / "mine/out")))
    p.case("export into a fresh folder with spaces and ü", lambda f: ["campaign", "export", judged(f), f / "ö ut dir"],
           want_ok=True, extra=lambda f: None if (f / "ö ut dir/judgments.txt").is_file() else "no judgments.txt")
    p.case("export twice into its own folder",
           lambda f: ["campaign", "export", judged(f), f / "o"], want_ok=True,
           setup=lambda f: main(["campaign", "export", str(judged(f)), str(f / "o")]))

    # import: malformed Label Studio exports and a bad late task
    def bad_import(name: str, text_of) -> None:
        def setup(f: Path) -> None:
            (f / "bad.json").write_text(text_of(f))

        p.case(f"import {name}", lambda f: ["campaign", "import", judged(f), f / "bad.json"], setup=setup,
               extra=lambda f: None if judgments(db(f)) == 2 else f"{judgments(db(f))} judgments, not the 2 of before")

    def late(mutate):
        def text(f: Path) -> str:
            t = ls_tasks(db(f))
            for task in t:
                task["annotations"] = [ann(7, "N"), ann(8, "N")]
            mutate(t)
            return json.dumps(t)
        return text

    bad_import("a list of numbers", lambda f: "[1, 2, 3]")
    bad_import("5,000 nested brackets", lambda f: "[" * 5000 + "]" * 5000)
    bad_import("annotations an object", lambda f: json.dumps([{"data": {"item": "1"}, "annotations": {"a": 1}}]))
    bad_import("result of numbers", lambda f: json.dumps([{"data": {"item": "1"}, "annotations": [{"result": [1]}]}]))
    bad_import("a choice that is a number", lambda f: json.dumps(
        [{"data": {"item": "1"}, "annotations": [{"result": [{"from_name": "label", "value": {"choices": [3]}}]}]}]))
    bad_import("an empty file", lambda f: "")
    bad_import("a NUL byte", lambda f: "[\x00]")
    bad_import("a late note of 6,000 characters", late(lambda t: t[-1]["annotations"].__setitem__(
        1, ann(8, "N", note="x" * 6000))))
    bad_import("a late seconds of 10**400", lambda f: _last(late(lambda t: None)(f), '"lead_time": 4.5',
                                                          '"lead_time": 1' + "0" * 400))
    bad_import("a late negative seconds", late(lambda t: t[-1]["annotations"].__setitem__(1, ann(8, "N", seconds=-3))))
    bad_import("a late can't-tell adjudication", late(lambda t: t[-1].__setitem__(
        "annotations", [ann(7, "Y", SRC), ann(8, "N"), ann(9, "can't tell")])))
    bad_import("a late task twice", late(lambda t: t[-1].__setitem__("data", t[0]["data"])))
    bad_import("a late source with ESC", late(lambda t: t[-1].__setitem__(
        "annotations", [ann(7, "Y", SRC + "\x1b[2J"), ann(8, "Y", SRC)])))
    bad_import("a late task judged already", late(lambda t: t[0].__setitem__(
        "annotations", [ann(1, "Y", SRC), ann(2, "N")])))

    def imported_nothing(f: Path) -> str | None:
        return None if judgments(db(f)) == 2 else f"{judgments(db(f))} judgments, expected the 2 of before"

    for mutate, label in ((lambda t: t[-1]["annotations"].__setitem__(1, ann(8, "N", note="x" * 6000)), "note"),
                          (lambda t: t[-1].__setitem__("data", t[0]["data"]), "duplicate")):
        p.case(f"import a bad late {label}: nothing of the file is in",
               lambda f: ["campaign", "import", judged(f), f / "bad.json"],
               setup=lambda f, m=mutate: (f / "bad.json").write_text(late(m)(f)),
               extra=imported_nothing)


def file_cases(p: Probe) -> None:
    def triples(f: Path) -> None:
        (f / "mine/triples.tsv").write_text("/m/0h1\t/film/film/genre\t/m/0t1\n")

    p.case("annotate-export --out = the triples", lambda f: ["annotate-export", "--kg", f / "kg.npz", "--triples",
                                                            f / "mine/triples.tsv", "--templates", f / "t.tsv",
                                                            "--batch", "b", "--out", f / "mine/triples.tsv"],
           setup=triples)
    p.case("synth --out = a user's file", lambda f: ["synth", "--out", f / "mine/notes.txt", "--entities", "60"])
    p.case("synth --out holding a user's train.txt", lambda f: ["synth", "--out", f / "mine", "--entities", "60",
                                                               "--relations", "4"],
           setup=lambda f: (f / "mine/train.txt").write_text("mine\n"))
    p.case("synth --out inside a read-only folder", lambda f: ["synth", "--out", f / "ro/sub", "--entities", "60",
                                                              "--relations", "4"],
           setup=lambda f: ((f / "ro").mkdir(), (f / "ro").chmod(0o500)) if os.geteuid() else None,
           want_ok=os.geteuid() == 0)  # root writes anywhere: then the case must just succeed
    p.case("synth twice into its own folder", lambda f: ["synth", "--out", f / "s", "--entities", "60",
                                                        "--relations", "4"], want_ok=True,
           setup=lambda f: main(["synth", "--out", str(f / "s"), "--entities", "60", "--relations", "4"]))
    # too small for the test sets the study draws: refused with the counts, nothing written
    p.case("synth --entities 20 --relations 4 (tiny)", lambda f: ["synth", "--out", f / "t", "--entities", "20",
                                                                 "--relations", "4"])

    def mirror(f: Path) -> None:
        (f / "mirror/x").mkdir(parents=True)
        payload = b"kgeval\n" * 100
        (f / "mirror/x/file.bin").write_bytes(payload)
        (f / "mine/m.tsv").write_text("mirror_path\turl\tsha256\tbytes\n"
                                      f"x/file.bin\thttp://127.0.0.1:9/{'0' * 40}/file.bin\t"
                                      f"{hashlib.sha256(payload).hexdigest()}\t{len(payload)}\n")
        (f / "mine/x").mkdir()
        (f / "mine/x/file.bin").write_text("the user's own file.bin\n")

    p.case("fetch over a user's file", lambda f: ["fetch", "--manifest", f / "mine/m.tsv", "--out", f / "mine",
                                                 "--mirror", f / "mirror"], setup=mirror)
    p.case("validate-config of an empty file", lambda f: ["validate-config", f / "mine/empty.yaml"],
           setup=lambda f: (f / "mine/empty.yaml").write_text(""))
    p.case("validate-config of a 2 MB line", lambda f: ["validate-config", f / "mine/long.yaml"],
           setup=lambda f: (f / "mine/long.yaml").write_text("a: " + "x" * 2_000_000 + "\n"))


def archive_cases(p: Probe) -> None:
    def tar(path: Path, members, mode="w:gz") -> Path:
        with tarfile.open(path, mode) as t:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        return path

    def extract(f: Path, arc: Path) -> list[str]:
        # extract_splits is a workflow step: called through a tiny script so the probe sees its one line
        code = ("import sys; from kgeval.data.steps import extract_splits as e; from kgeval.errors import "
                "KgevalError\ntry:\n e(sys.argv[1], sys.argv[2], {s: sys.argv[2] + '/' + s for s in "
                "('train', 'valid', 'test')})\nexcept KgevalError as x:\n print('kgeval: error:', x, file=sys.stderr);"
                " sys.exit(2)")
        return [sys.executable, "-c", code, str(arc), str(f / "out")]

    cases = {
        "a file then a folder of its name": lambda f: tar(f / "mine/a.tar.gz", [("train.txt", b"a\tr\tb\n"),
                                                                                ("train.txt/x", b"y")]),
        "a truncated .tar.gz": lambda f: _cut(tar(f / "mine/a.tar.gz", [("train.txt", os.urandom(100_000))])),
        "a member with '..'": lambda f: tar(f / "mine/a.tar.gz", [("../evil.txt", b"x")]),
        "not an archive": lambda f: _written(f / "mine/a.tar.gz", b"hello"),
    }
    for name, make in cases.items():
        folder = Path(tempfile.mkdtemp(prefix="case ", dir=p.base))
        (folder / "mine").mkdir()
        arc = make(folder)
        before = fingerprint(folder / "mine")
        done = subprocess.run(extract(folder, arc), capture_output=True, text=True)
        lines = done.stderr.strip().splitlines()
        got = ("one line" if done.returncode != 0 and len(lines) == 1 and lines[0].startswith("kgeval: error: ")
               else f"rc {done.returncode}: {lines[-1][:100] if lines else ''}")
        ok = got == "one line" and fingerprint(folder / "mine") == before and not (folder / "evil.txt").exists()
        p.rows.append((f"extract_splits: {name}", "one line, nothing changed", got, ok))


class _Marker:
    """Unpickling this calls ``fn(*args)``: a data file that runs code (here it only creates a marker)."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _kg2(root: Path, test: dict | None = None, legacy: bool = False, mapping: bytes | None = None,
         tail: int = 3) -> Path:
    """An ogbl-wikikg2 folder of OGB's layout (dicts of numpy int64 arrays), ``test`` replacing test.pt's dict,
    ``mapping`` the bytes of mapping/nodeidx2entityid.csv.gz."""
    import numpy as np
    import torch

    (root / "split/time").mkdir(parents=True)
    t = np.array([[0, 0, 1], [1, 1, 2], [2, 0, tail]])
    for name in ("train", "valid", "test"):
        d = {"head": t[:, 0], "relation": t[:, 1], "tail": t[:, 2], "head_neg": np.zeros((3, 4), np.int64),
             "tail_neg": np.ones((3, 4), np.int64)}
        torch.save(test if name == "test" and test is not None else d, root / f"split/time/{name}.pt",
                   _use_new_zipfile_serialization=not legacy)
    if mapping is not None:
        (root / "mapping").mkdir()
        (root / "mapping/nodeidx2entityid.csv.gz").write_bytes(mapping)
    return root


def _gzip_bomb(line: bytes, gigabytes: float) -> bytes:
    """A gzip of a few MB that expands to ``gigabytes`` of ``line`` repeated (one member, concatenated)."""
    import zlib

    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = c.compress(line * ((10 << 20) // len(line))) + c.flush()
    h = zlib.compressobj(9, zlib.DEFLATED, 31)
    return h.compress(b"node idx,entity id\n") + h.flush() + member * int(gigabytes * 100)


def scale_cases(p: Probe) -> None:
    """Issue 60: the scale stage's inputs: pickled files that run code, compressed bombs, NUL and long-line
    splits, doctored ids in a graph file."""
    import resource

    import numpy as np
    import torch

    def marker_absent(f: Path) -> str | None:
        return "the file's code ran (marker created)" if (f / "marker").exists() else None

    def graph(f: Path, **arrays) -> list:
        """``scale evaluate`` of the clean folder's graph with ``arrays`` replaced, and a model file for it."""
        from kgeval.scale.store import save_arrays

        _kg2(f / "kg")
        main(["scale", "graph", "--from", "wikikg2", str(f / "kg"), "--out", str(f / "g")])
        with np.load(f / "g/graph.npz") as z:
            g = {n: z[n].copy() for n in z.files}
        for name, (row, col, value) in arrays.items():
            g[name][row, col] = value
        save_arrays(f / "mine/graph.npz", g)
        np.savez(f / "m.npz", model="distmult", entity=np.ones((4, 2)), relation=np.ones((2, 2)))
        return ["scale", "evaluate", f / "mine/graph.npz", "--system", f"m={f / 'm.npz'}", "--out", f / "ev",
                "--sample-size", "100"]

    three = {"head": np.zeros(1, np.int64), "relation": np.zeros(1, np.int64), "tail": np.zeros(1, np.int64)}
    payloads = {
        "os.system": lambda f: _Marker(os.system, f"touch '{f / 'marker'}'"),
        "os.mkdir": lambda f: _Marker(os.mkdir, str(f / "marker")),
        "builtins.open": lambda f: _Marker(open, str(f / "marker"), "w"),
        "an object array": lambda f: np.array([_Marker(os.mkdir, str(f / "marker"))], dtype=object),
    }
    for what, payload in payloads.items():
        for legacy in (False, True):
            p.case(f"scale graph --from wikikg2: test.pt runs {what} ({'legacy' if legacy else 'zip'})",
                   lambda f, pl=payload, lg=legacy: ["scale", "graph", "--from", "wikikg2",
                                                     _kg2(f / "mine/kg", three | {"note": pl(f)}, lg), "--out",
                                                     f / "out"], extra=marker_absent)
    p.case("scale graph --from wikikg2: test.pt holds tensors", lambda f: [
        "scale", "graph", "--from", "wikikg2", _kg2(f / "mine/kg", {k: torch.zeros(1, dtype=torch.long)
                                                                    for k in three}), "--out", f / "out"])
    p.case("scale graph --from wikikg2: clean folder", lambda f: [
        "scale", "graph", "--from", "wikikg2", _kg2(f / "mine/kg"), "--out", f / "out"], want_ok=True)
    peak = {}

    def bounded(f: Path) -> str | None:
        grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak["before"]) / 1024
        return f"peak memory grew {grew:.0f} MB" if grew > 1024 else None

    for label, line, gb in (("2 GB of rows", b"0,Q0\n", 2), ("2 GB of NUL", b"\0", 2),
                            ("2 GB in one line", b"x", 2)):
        p.case(f"scale graph --from wikikg2: mapping gzip bomb, {label}", lambda f, ln=line, g=gb: (
            peak.update(before=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
            ["scale", "graph", "--from", "wikikg2", _kg2(f / "mine/kg", mapping=_gzip_bomb(ln, g)), "--out",
             f / "out"])[1], extra=bounded)
    p.case("scale graph --from wikikg2: mapping not gzip", lambda f: [
        "scale", "graph", "--from", "wikikg2", _kg2(f / "mine/kg", mapping=b"node idx,entity id\n0,Q0\n"),
        "--out", f / "out"])
    p.case("scale graph --from wikikg2: one stray id 2^33, no mapping", lambda f: [
        "scale", "graph", "--from", "wikikg2", _kg2(f / "mine/kg", tail=2**33), "--out", f / "out"])

    def w5m(f: Path, train: bytes | None, size: int = 0) -> Path:
        root = f / "w5m"  # beside the user's folder: the probe's fingerprint would read a 2 GB file whole
        root.mkdir()
        for split in ("train", "valid", "test"):
            (root / f"wikidata5m_transductive_{split}.txt").write_text("Q1\tP1\tQ2\n")
        if train is not None:
            (root / "wikidata5m_transductive_train.txt").write_bytes(train)
        if size:
            os.truncate(root / "wikidata5m_transductive_train.txt", size)  # sparse: NUL bytes, never written
        return root

    for label, train, size in (("a 2 GB NUL split", b"", 2 << 30), ("a 2 MB line", b"Q1\tP1\t" + b"x" * 2_000_000,
                                                                    0),
                               ("an id with a NUL byte", b"Q1\tP1\tQ\x002\n", 0),
                               ("an id with a trailing space", b"Q1\tP1\tQ2 \n", 0),
                               ("an empty field", b"Q1\t\tQ2\n", 0), ("not UTF-8", b"Q1\tP1\tQ\xff\n", 0)):
        p.case(f"scale graph --from wikidata5m: {label}", lambda f, t=train, s=size: [
            "scale", "graph", "--from", "wikidata5m", w5m(f, t, s), "--out", f / "out"])
    for label, arrays in (("a test id = the entity count", {"test": (0, 2, 4)}),
                          ("a relation id -1", {"test": (1, 1, -1)}),
                          ("a train id 2^31 - 1", {"train": (0, 0, 2**31 - 1)}),
                          ("OGB negatives out of range", {"test_tail_neg": (2, 3, 4)}),
                          ("negative OGB negatives", {"test_head_neg": (0, 0, -3)})):
        p.case(f"scale evaluate of a graph file with {label}", lambda f, a=arrays: graph(f, **a))
    p.case("scale evaluate of the clean graph file", lambda f: graph(f), want_ok=True)


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _last(text: str, old: str, new: str) -> str:
    """``text`` with its last ``old`` replaced (the last task's last annotation)."""
    head, _, tail = text.rpartition(old)
    return head + new + tail


def _cut(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def home_case(p: Probe) -> None:
    """Two processes building one fresh $KGEVAL_HOME at once (issue 49, item 8)."""
    root = Path(__file__).resolve().parents[1]
    home = Path(tempfile.mkdtemp(prefix="home ", dir=p.base))
    code = ("from kgeval import home; from kgeval.config import load_config_file, validate_config; "
            "from kgeval.data.cache import DataBuilder; import sys; r = sys.argv[1]; "
            f"cfg = validate_config(home.locate_defaults(load_config_file({str(root / 'config/tiny.yaml')!r})), "
            f"{str(root / 'config/schema.yaml')!r}, models=False); "
            "DataBuilder(cfg, cfg['manifest'], r).build_testset('Synth-Test-S')")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(home / "resources")], stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    errs = [proc.communicate()[1] for proc in procs]
    ok = all(proc.returncode == 0 for proc in procs)
    got = "both built" if ok else "; ".join(e.strip().splitlines()[-1][:100] for e in errs if e.strip())
    p.rows.append(("two processes on one fresh KGEVAL_HOME", "both succeed", got, ok))


# ---- kills inside every command's commit (issue 60, item 3) ---------------------------------------------------
TEMPORARY = (".kgeval-part-", ".kgeval-old-", ".kgeval-staging-", ".kgeval-trash-")


def _kgeval(args: list, pause: str | None = None) -> tuple[int | None, str]:
    """``kgeval ARGS`` in a subprocess; with ``pause`` held at that point and SIGKILLed there: (None, "") once
    killed, or the exit status and stderr of a run that never got there."""
    import kgeval
    from kgeval.io.pause import kill_at

    rc, err = kill_at(args, pause, dict(os.environ, PYTHONPATH=str(Path(kgeval.__file__).parents[1])))
    return rc, err[-200:]


def _outputs(folder: Path) -> dict[str, str]:
    return {k: v for k, v in fingerprint(folder).items() if not Path(k).name.startswith(".")}


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.startswith(TEMPORARY))


def reproduce_cases(p: Probe) -> None:
    """``kgeval reproduce`` reads two folders a user hands it (issue 61): it writes nothing, and a broken or
    hostile manifest, provenance record, table or dump is one line, read within kgeval.limits' bounds."""
    smoke = Path(__file__).resolve().parents[1] / "reference" / "smoke"

    def packs(damage=None):
        def setup(f: Path) -> None:
            shutil.copytree(smoke, f / "mine/pack")
            shutil.copytree(smoke, f / "mine/ours")
            if damage is not None:
                damage(f / "mine/ours")
        return setup

    def args(f: Path, *extra) -> list:
        return ["reproduce", f / "mine/ours", "--against", f / "mine/pack", *extra]

    def write(name: str, data: bytes):
        return lambda d: (d / name).write_bytes(data)

    def first_eval(d: Path) -> Path:
        return sorted(d.glob("metrics/*/evaluation.csv"))[0]

    p.case("reproduce a pack against itself", args, want_ok=True, setup=packs())
    p.case("reproduce against a missing folder", lambda f: ["reproduce", f / "mine/ours", "--against", f / "nope"],
           setup=packs())
    p.case("reproduce --testsets ''", lambda f: args(f, "--testsets", ""), setup=packs())
    p.case("reproduce --testsets of neither side", lambda f: args(f, "--testsets", "Nope"), setup=packs())
    for name, damage in {
        "manifest.json not JSON": write("manifest.json", b"{not json"),
        "manifest.json a list": write("manifest.json", b"[]"),
        "manifest.json 64 MB of NUL bytes": write("manifest.json", b"\0" * (64 << 20)),
        "manifest.json a link to a folder": lambda d: ((d / "manifest.json").unlink(),
                                                       (d / "manifest.json").symlink_to(d / "metrics")),
        "provenance.json not UTF-8": write("provenance.json", b"\xff\xfe{}"),
        "an evaluation.csv without its header": lambda d: first_eval(d).write_text("garbage,,,\n"),
        "an evaluation.csv with a NUL byte": lambda d: first_eval(d).write_bytes(b"System,micro_mrr\nX,\0\n"),
    }.items():
        p.case(f"reproduce: {name}", args, setup=packs(damage))


def kill_cases(p: Probe) -> None:
    """Each writing command killed (SIGKILL) at a point inside its commit, into a fresh folder and over its own
    earlier outputs, then run again: no temporary may remain, the outputs must equal an uninterrupted run's, and
    the user's files beside them must not change."""
    base = Path(tempfile.mkdtemp(prefix="kills ", dir=p.base))
    graph = base / "in" / "graph.npz"
    assert _kgeval(["scale", "graph", "--shape", "wikikg2", "--factor", "0.0005", "--out", graph.parent])[0] == 0
    db = base / "in" / "c.db"
    sheet(base / "in" / "sheet.tsv", 6)
    assert _kgeval(["campaign", "create", db, "--sheet", base / "in" / "sheet.tsv"])[0] == 0
    commands = {
        "scale graph": lambda out: ["scale", "graph", "--shape", "wikikg2", "--factor", "0.0005", "--out", out],
        "scale evaluate": lambda out: ["scale", "evaluate", graph, "--out", out, "--systems", "2", "--k", "5",
                                       "--sample-size", "100", "--negatives", "20", "--bootstrap", "100",
                                       "--pool-depths", "1,5", "--pool-questions", "50", "--plan-budget", "20"],
        "campaign export": lambda out: ["campaign", "export", db, out],
    }
    for command, args in commands.items():
        ref = base / f"{command} ref"
        _kgeval(args(ref))
        want = _outputs(ref)
        for point in ("commit_start", "commit_midway"):
            for earlier in (False, True):
                if command == "scale evaluate" and earlier:
                    continue  # the slowest command: its fresh folder only
                out = base / f"{command} {point} {earlier}"
                out.mkdir()
                (out / "mine.txt").write_text("the user's\n")
                if earlier:
                    _kgeval(args(out))
                rc, err = _kgeval(args(out), pause=point)
                left = _temporaries(out)
                rerun = _kgeval(args(out))[0]
                got = ("never reached the point: " + err if rc is not None else
                       f"rc {rerun}; {len(left)} temporaries after the kill, {len(_temporaries(out))} after the rerun"
                       + ("" if _outputs(out) == {**want, "mine.txt": _outputs(out).get("mine.txt")} else
                          "; outputs differ from an uninterrupted run")
                       + ("" if (out / "mine.txt").read_text() == "the user's\n" else "; the user's file changed"))
                ok = rc is None and rerun == 0 and not _temporaries(out) and "differ" not in got and "user" not in got
                p.rows.append((f"kill -9 in {command} at {point}{' over earlier outputs' if earlier else ''}",
                               "rerun whole, no temporary", got, ok))
    out = base / "create"
    out.mkdir()
    rc, err = _kgeval(["campaign", "create", out / "c.db", "--sheet", base / "in" / "sheet.tsv"],
                      pause="campaign_create_before_rename")
    half = (out / "c.db").exists()
    rerun = _kgeval(["campaign", "create", out / "c.db", "--sheet", base / "in" / "sheet.tsv"])[0]
    got = (f"rc {rerun}; campaign file after the kill: {half}; {len(_temporaries(out))} temporaries after the rerun"
           if rc is None else "never reached the point: " + err)
    p.rows.append(("kill -9 in campaign create before its rename", "no file, rerun whole, no temporary", got,
                   rc is None and not half and rerun == 0 and not _temporaries(out)))


def main_() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="also write the table as TSV here")
    ap.add_argument("--slow", action="store_true", help="add the two-process KGEVAL_HOME case (about a minute)")
    ap.add_argument("--kills", action="store_true", help="add the kills inside every command's commit (SIGKILL, "
                    "then a rerun; several minutes)")
    a = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="kgeval probe "))
    p = Probe(base)
    try:
        campaign_cases(p)
        file_cases(p)
        archive_cases(p)
        scale_cases(p)
        reproduce_cases(p)
        if a.slow:
            home_case(p)
        if a.kills:
            kill_cases(p)
    finally:
        for d in base.rglob("*"):
            if d.is_dir():
                with contextlib.suppress(OSError):
                    d.chmod(0o700)
        shutil.rmtree(base, ignore_errors=True)
    width = max(len(r[0]) for r in p.rows)
    print(f"{'case':{width}} | expected | got | ok")
    for name, want, got, ok in p.rows:
        print(f"{name:{width}} | {want} | {got} | {'ok' if ok else 'FAIL'}")
    bad = sum(not r[3] for r in p.rows)
    print(f"{len(p.rows)} cases, {len(p.rows) - bad} kept the promise, {bad} did not")
    if a.out:
        with open(a.out, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, delimiter="\t", lineterminator="\n").writerows(
                [("case", "expected", "got", "ok"), *[(n, w, g, int(o)) for n, w, g, o in p.rows]])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(heartbeat_main(main_, __file__))
