"""Bounds on what kgeval reads from a file you give it: its size, the length of a line, the number of lines and
NUL bytes (a text file never holds one).

Every reader of a user's file (run files, annotation sheets, judgments, model folders' text files, configs, the
tables ``reanalyze`` reads) checks the file here before parsing it. The check streams the file in blocks, so a
file of any size is refused in constant memory: a size over the limit by ``stat`` at once (compressed run files
by what they expand to), a NUL byte, an over-long line or too many lines at the block that holds it. Parsers
such as pandas would otherwise read the whole file first and need many times its size in memory (a header and
2 GB of NUL bytes took ``reanalyze`` past 20 GB). A binary file that is read whole (a LibKGE checkpoint) is
checked by its size (:func:`check_size`).

The limits are generous for every file the study uses and are raised with environment variables:

* ``KGEVAL_MAX_INPUT_MB``: bytes of one input file (uncompressed), default 4096 MB (a run file of FB-Test-O's
  40,932 questions at the default run depth of 1,000 is about 1.4 GB);
* ``KGEVAL_MAX_LINE_KB``: bytes of one line, default 1024 KB;
* ``KGEVAL_MAX_ROWS``: lines of one file, default 100,000,000.

A reader that keeps what it parses (the scale stage's readers of real graphs) also bounds the lines by what the
other files allow (:func:`measure`'s ``max_rows``) and what it will hold by the memory available
(:func:`check_memory`; ``KGEVAL_MAX_MEMORY_MB`` sets it instead). A compressed file is never expanded to disk.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from .errors import ConfigError, InputError

MB, KB = 1 << 20, 1 << 10
# name: (environment variable, default, unit in bytes, words)
LIMITS: dict[str, tuple[str, int, int, str]] = {
    "bytes": ("KGEVAL_MAX_INPUT_MB", 4096, MB, "MB"),
    "line": ("KGEVAL_MAX_LINE_KB", 1024, KB, "KB"),
    "rows": ("KGEVAL_MAX_ROWS", 100_000_000, 1, "lines"),
}
BLOCK = 8 * MB
_OPENERS: dict[str, Callable[..., IO[bytes]]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
# other archives pandas reads (a run file may come as one): checked by their size only
_SIZE_ONLY = (".zip", ".zst", ".tar")


def env_number(var: str, words: str) -> int | None:
    """The positive whole number in the environment variable ``var`` (None when unset); ``words``: its unit."""
    raw = os.environ.get(var, "").strip()
    if not raw:
        return None
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"${var}={raw!r}: expected a positive whole number of {words}")
    return value


def limit(name: str) -> int:
    """The limit ``name`` (``bytes``, ``line`` or ``rows``) in bytes or lines, from its variable or default."""
    var, default, unit, words = LIMITS[name]
    value = env_number(var, words)
    return (default if value is None else value) * unit


def available_memory() -> int:
    """Bytes kgeval may use for what it reads: ``KGEVAL_MAX_MEMORY_MB`` where set, else the memory the system
    has available (Linux's MemAvailable: free memory and the page cache it can drop)."""
    mb = env_number("KGEVAL_MAX_MEMORY_MB", "MB")
    if mb is not None:
        return mb * MB
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * KB
    except (OSError, ValueError, IndexError):  # not Linux: the free pages
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - no way to ask: no bound of this kind
        return 1 << 62


def check_memory(path: str | Path, need: int, what: str) -> None:
    """Refuse to parse ``path`` when holding what it holds (``what``) takes about ``need`` bytes, more than
    :func:`available_memory`; checked before the parse, so a file is refused instead of the process killed."""
    have = available_memory()
    if need > have:
        raise InputError(path, None, f"{what} need about {need:,} bytes of memory, more than the {have:,} "
                                     "available (if the file is right, free memory or set "
                                     "KGEVAL_MAX_MEMORY_MB=<MB> to what kgeval may use)")


def _refuse(path: Path, line: int | None, name: str, what: str) -> InputError:
    var, _, unit, words = LIMITS[name]
    return InputError(path, line, f"{what}, over the limit of {limit(name) // unit:,} {words} on an input file "
                                  f"(a file kgeval reads is bounded; if the file is right, raise it with "
                                  f"{var}=<{words}>)")


def _open(path: Path) -> IO[bytes]:
    opener = _OPENERS.get(path.suffix.lower())
    return opener(path, "rb") if opener is not None else open(path, "rb")


def check_size(path: str | Path) -> None:
    """Refuse a (binary) file over the size limit before it is read whole into memory; a missing file raises
    the ``OSError`` of ``stat`` (``<path>: No such file or directory``), as a plain read would."""
    path = Path(path)
    size = path.stat().st_size
    if size > limit("bytes"):
        raise _refuse(path, None, "bytes", f"{size:,} bytes")


def scan(path: str | Path, keep: bool = False) -> bytes:
    """Check ``path`` against every limit, streaming it block by block; return its (uncompressed) bytes when
    ``keep``, else ``b""``. A refusal is an :class:`InputError` naming the file, the line and the limit."""
    return _scan(Path(path), keep)[0]


def measure(path: str | Path, max_rows: int | None = None, why: str = "") -> tuple[int, int]:
    """Check ``path`` against every limit in constant memory, and its lines against ``max_rows`` (what the
    other files allow, ``why`` saying so); its (uncompressed) bytes and lines, for the caller to weigh the
    parse (:func:`check_memory`) before it starts."""
    _, total, lines = _scan(Path(path), False, max_rows, why)
    return total, lines


def _scan(path: Path, keep: bool, bound: int | None = None, why: str = "") -> tuple[bytes, int, int]:
    """:func:`scan`, also returning the bytes and lines read; ``bound``: a tighter limit on the lines."""
    max_bytes, max_line, max_rows = limit("bytes"), limit("line"), limit("rows")
    check_size(path)
    if path.suffix.lower() in _SIZE_ONLY and not keep:
        return b"", path.stat().st_size, 0
    kept: list[bytes] = []
    total = rows = run = 0  # bytes so far, complete lines so far, bytes of the current line so far
    try:
        with _open(path) as fh:
            while block := fh.read(BLOCK):
                total += len(block)
                if total > max_bytes:
                    raise _refuse(path, None, "bytes", f"more than {max_bytes:,} bytes once uncompressed")
                nul = block.find(b"\0")
                if nul >= 0:
                    line = rows + block.count(b"\n", 0, nul) + 1
                    raise InputError(path, line, "holds a NUL byte: not a text file")
                # a bare CR ends a line too (old spreadsheets): count it as a break for the length only
                parts = block.replace(b"\r", b"\n").split(b"\n")
                longest = max(run + len(parts[0]), max(map(len, parts[1:]), default=0))
                if longest > max_line:
                    at = next(i for i, p in enumerate(parts) if len(p) + (run if i == 0 else 0) > max_line)
                    offset = sum(len(p) + 1 for p in parts[:at])  # the replace kept every offset
                    raise _refuse(path, rows + block.count(b"\n", 0, offset) + 1, "line",
                                  f"a line of more than {max_line:,} bytes")
                run = len(parts[-1]) + (run if len(parts) == 1 else 0)
                rows += block.count(b"\n")
                if rows > max_rows:
                    raise _refuse(path, max_rows + 1, "rows", f"more than {max_rows:,} lines")
                if bound is not None and rows + (run > 0) > bound:
                    raise InputError(path, bound + 1, f"more than {bound:,} lines: {why}")
                if keep:
                    kept.append(block)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:  # unreadable, or a damaged compressed stream
        raise InputError(path, None, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return b"".join(kept), total, rows + (run > 0)


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a user's text file, checked against every limit."""
    return scan(path, keep=True)


def read_text(path: str | Path, encoding: str = "utf-8-sig") -> str:
    """The text of a user's file (a byte-order mark dropped), checked against every limit; a byte that is not
    UTF-8 is an error naming its line."""
    data = read_bytes(path)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(path, data[: exc.start].count(b"\n") + 1, f"not valid UTF-8: {exc.reason}") from None


def read_csv(path: str | Path, **kwargs: Any):
    """``pandas.read_csv`` of a user's file, after the file passed every limit."""
    import pandas as pd

    scan(path)
    return pd.read_csv(path, **kwargs)
