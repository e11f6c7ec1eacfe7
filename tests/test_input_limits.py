"""Issue 39, item 5: every reader of a user's file bounds what it reads (kgeval.limits) and refuses an oversize
file in one line that names the limit and the variable that raises it, quickly and in constant memory."""

from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from kgeval.data.tsv import iter_rows
from kgeval.errors import InputError
from kgeval.limits import read_text, scan
from kgeval.pools.annotation import read_export

GB = 1 << 30


def _kgeval(args: list[str], cwd: Path, env: dict[str, str] | None = None, address_space: int | None = None):
    """``kgeval ARGS`` in a fresh interpreter, under an address-space limit when given; (rc, stderr, seconds)."""

    def limit() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "kgeval.cli", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, preexec_fn=limit, timeout=300)
    return proc.returncode, proc.stderr, time.perf_counter() - start


def _release_with_nul_table(folder: Path, size: int) -> Path:
    """A release folder whose FB-Test-O/evaluation.csv is a header and then ``size`` bytes of NUL (a sparse file:
    ``truncate`` fills with NUL bytes without writing them)."""
    table = folder / "FB-Test-O" / "evaluation.csv"
    table.parent.mkdir(parents=True)
    table.write_text("System,micro_mrr\n")
    os.truncate(table, size)
    return table


@pytest.mark.parametrize("raised", [False, True], ids=["over-the-size-limit", "nul-bytes-under-a-raised-limit"])
def test_reanalyze_refuses_a_huge_table_under_a_memory_limit(tmp_path, raised):
    """d99e1f8: pandas read the whole table (a header and 2 GB of NUL: killed at 21 GB, the staging folder left
    behind). Now a 5 GB table is refused by its size at once and, with the size limit raised above it, at its
    first NUL byte, both under a 3 GB address-space limit, in one line, leaving no staging folder."""
    table = _release_with_nul_table(tmp_path / "release", 5 * GB)
    out = tmp_path / "out"
    env = {"KGEVAL_MAX_INPUT_MB": "8192"} if raised else {}
    rc, err, seconds = _kgeval(["reanalyze", "release", "--out", "out"], tmp_path, env, address_space=3 * GB)
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) >= 1 and "Traceback" not in err, err
    assert lines[-1].startswith(f"kgeval: error: {Path('release/FB-Test-O/evaluation.csv')}"), err
    if raised:
        assert lines[-1].endswith("evaluation.csv:2: holds a NUL byte: not a text file"), err
    else:
        assert "5,368,709,120 bytes, over the limit of 4,096 MB" in lines[-1] and "KGEVAL_MAX_INPUT_MB" in lines[-1]
    assert table.stat().st_size == 5 * GB
    assert not out.exists() or not [p.name for p in out.iterdir() if p.name.startswith(".kgeval-")]


def test_every_limit_names_its_line_and_variable(tmp_path, monkeypatch):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"a\tb\n" * 5 + b"x" * 3000 + b"\n")
    monkeypatch.setenv("KGEVAL_MAX_LINE_KB", "2")
    with pytest.raises(InputError, match=r"t\.tsv:6: a line of more than 2,048 bytes, over the limit of 2 KB .*"
                                         r"KGEVAL_MAX_LINE_KB=<KB>"):
        scan(path)
    monkeypatch.setenv("KGEVAL_MAX_LINE_KB", "3")
    assert scan(path) == b""
    monkeypatch.setenv("KGEVAL_MAX_ROWS", "5")
    with pytest.raises(InputError, match=r"t\.tsv:6: more than 5 lines, over the limit of 5 lines .*KGEVAL_MAX_ROWS"):
        iter_rows(path, 2).__next__()
    monkeypatch.setenv("KGEVAL_MAX_ROWS", "6")
    assert read_text(path).count("\n") == 6
    # a line split across two blocks of the streaming read is measured whole
    monkeypatch.setattr("kgeval.limits.BLOCK", 1000)
    with pytest.raises(InputError, match=r"t\.tsv:6: a line of more than 2,048 bytes"):
        monkeypatch.setenv("KGEVAL_MAX_LINE_KB", "2")
        scan(path)
    monkeypatch.setenv("KGEVAL_MAX_LINE_KB", "nope")
    with pytest.raises(Exception, match=r"\$KGEVAL_MAX_LINE_KB='nope': expected a positive whole number of KB"):
        scan(path)


def test_a_compressed_file_is_bounded_by_what_it_expands_to(tmp_path, monkeypatch):
    """A gzip run file of 10 KB that expands to 2 MB: refused by the expanded size."""
    path = tmp_path / "FB-Test-O.run.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b"q1 Q0 e1 1 0.5 mine\n" * 100_000)
    assert path.stat().st_size < 100_000
    monkeypatch.setenv("KGEVAL_MAX_INPUT_MB", "1")
    with pytest.raises(InputError, match=r"more than 1,048,576 bytes once uncompressed, over the limit of 1 MB"):
        scan(path)


def test_an_annotation_sheet_with_a_nul_byte_names_its_line(tmp_path):
    sheet = tmp_path / "b.A.tsv"
    sheet.write_bytes(b"batch\titem\n" + b"b1\t1\n" + b"b1\t2\0\n")
    with pytest.raises(InputError, match=r"b\.A\.tsv:3: holds a NUL byte: not a text file"):
        read_export(sheet)


def test_a_config_over_the_size_limit_is_one_line(tmp_path):
    config = tmp_path / "big.yaml"
    config.write_text("seed: 0\n")
    os.truncate(config, 5 * GB)
    rc, err, seconds = _kgeval(["validate-config", str(config)], tmp_path, address_space=3 * GB)
    assert rc == 2 and err.strip().splitlines()[-1].startswith(f"kgeval: error: {config}: 5,368,709,120 bytes, "
                                                               "over the limit of 4,096 MB"), err
