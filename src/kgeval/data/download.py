"""Fetch a manifest resource from its URL or from a mirror folder, verifying the SHA-256 before it is used.

Order: when a mirror is configured and ``prefer_mirror`` is true (the default), the mirror copy is tried first
and the URL only if the mirror lacks the file; otherwise the URL is tried first and a failed download falls
back to the mirror. A file is written to a temporary path, hashed while it is written, and renamed into place
only when its size and SHA-256 match the manifest; on a mismatch nothing is left behind.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ..errors import ChecksumError, KgevalError
from ..io import atomic_path, sha256_file
from .manifest import Resource

log = logging.getLogger(__name__)

MIRROR_ENV = "KGEVAL_MIRROR"
# errors of the destination (full disk, quota, read-only): fetching stops instead of trying another source
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}


def resolve_mirror(configured: str | None) -> Path | None:
    """The mirror folder: the ``KGEVAL_MIRROR`` environment variable wins over the config key."""
    value = os.environ.get(MIRROR_ENV) or configured
    return Path(value).expanduser() if value else None


class _WriteFailed(Exception):
    """Writing the destination failed (a full disk, a quota): another source cannot help, so fetching stops."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


def _copy_hashed(src, dst: Path, progress: Callable[[int], None] | None = None) -> str:
    """Copy ``src`` to ``dst`` and return the SHA-256; a failed read raises as it is (the next source may
    deliver), a failed write as :class:`_WriteFailed`."""
    h = hashlib.sha256()
    try:
        out = open(dst, "wb")
    except OSError as exc:
        raise _WriteFailed(exc) from None
    try:
        while True:
            block = src.read(1 << 20)
            if not block:
                break
            h.update(block)
            try:
                out.write(block)
            except OSError as exc:
                raise _WriteFailed(exc) from None
            if progress is not None:
                progress(len(block))
        try:
            out.close()  # flushes the last buffered bytes, which can fail too
        except OSError as exc:
            raise _WriteFailed(exc) from None
    finally:
        with contextlib.suppress(OSError):
            out.close()
    return h.hexdigest()


def _from_url(res: Resource, tmp: Path, timeout: float, progress: Callable[[int], None] | None = None) -> str:
    req = urllib.request.Request(res.url, headers={"User-Agent": "kgeval"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return _copy_hashed(resp, tmp, progress)


def _from_mirror(res: Resource, tmp: Path, mirror: Path, progress: Callable[[int], None] | None = None) -> str:
    src = mirror / res.mirror_path
    if not src.is_file():
        raise FileNotFoundError(f"{src} not found in mirror")
    with open(src, "rb") as fh:
        return _copy_hashed(fh, tmp, progress)


def fetch(res: Resource, dest: str | Path, mirror: str | Path | None = None, prefer_mirror: bool = True,
          timeout: float = 30.0, progress: Callable[[int], None] | None = None) -> str:
    """Fetch ``res`` to ``dest``; return the source used ("url" or "mirror"). ``progress`` is called with the
    size of every block copied.

    Raises ChecksumError (naming the file, expected and actual hash) when the bytes do not match, and
    KgevalError when no source could deliver the file. Nothing is written to ``dest`` in either case.
    """
    dest = Path(dest)
    mirror = Path(mirror) if mirror else None
    sources = ["url"]
    if mirror is not None:
        sources = ["mirror", "url"] if prefer_mirror else ["url", "mirror"]
    failures = []
    for source in sources:
        try:
            with atomic_path(dest) as tmp:
                if source == "url":
                    digest, where = _from_url(res, tmp, timeout, progress), res.url
                else:
                    digest, where = _from_mirror(res, tmp, mirror, progress), str(mirror / res.mirror_path)
                size = tmp.stat().st_size
                if digest != res.sha256:
                    raise ChecksumError(f"{res.mirror_path} (from {where})", res.sha256, digest)
                if res.size >= 0 and size != res.size:  # size < 0: not pinned, the SHA-256 alone decides
                    raise ChecksumError(f"{res.mirror_path} (from {where}: {size} bytes, expected {res.size})",
                                        res.sha256, digest)
        except _WriteFailed as exc:  # the destination, not the source: no other source can help
            raise OSError(exc.error.errno, exc.error.strerror, str(dest)) from None
        except (OSError, urllib.error.URLError, ValueError) as exc:
            if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS:  # the temporary file could not be made
                raise OSError(exc.errno, exc.strerror, str(dest)) from None
            failures.append(f"{source}: {exc}")
            log.warning("could not fetch %s from %s: %s", res.mirror_path, source, exc)
            continue
        log.info("fetched %s from %s", res.mirror_path, source)
        return source
    hint = "" if mirror is not None else f"; set {MIRROR_ENV} or the 'mirror' config key to use a mirror folder"
    raise KgevalError(f"could not fetch {res.mirror_path}: " + "; ".join(failures) + hint)


def verify(path: str | Path, res: Resource) -> None:
    """Check a fetched file against the manifest (size and SHA-256)."""
    digest = sha256_file(path)
    if digest != res.sha256:
        raise ChecksumError(path, res.sha256, digest)


def copy_verified(src: str | Path, dest: str | Path, res: Resource) -> None:
    verify(src, res)
    with atomic_path(dest) as tmp:
        shutil.copyfile(src, tmp)
