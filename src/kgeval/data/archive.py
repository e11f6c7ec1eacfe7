"""Safe extraction of ``.tar.gz`` archives.

A member is refused when its name is absolute, contains ``..``, is anything but a regular file or folder
(links and device files could write outside the destination), or repeats another member's name (the content
would depend on which copy is extracted last). Members are extracted into a temporary folder
that is renamed into place only when the whole archive extracted cleanly.
"""

from __future__ import annotations

import errno
import gzip
import lzma
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath

from ..errors import InputError


def check_member(archive: str | Path, member: tarfile.TarInfo) -> None:
    name = PurePosixPath(member.name)
    if name.is_absolute() or member.name.startswith(("/", "\\")):
        raise InputError(archive, None, f"unsafe member {member.name!r}: absolute path")
    if ".." in name.parts:
        raise InputError(archive, None, f"unsafe member {member.name!r}: contains '..'")
    if not (member.isfile() or member.isdir()):
        raise InputError(archive, None, f"unsafe member {member.name!r}: not a regular file or folder")


def safe_extract(archive: str | Path, dest: str | Path, members: list[str] | None = None) -> list[Path]:
    """Extract ``archive`` (or only the named ``members``) into ``dest``; return the extracted file paths.

    ``dest`` is created; files already there with the same names are replaced. The archive is checked in full
    before anything is written.
    """
    archive, dest = Path(archive), Path(dest)
    try:
        with tarfile.open(archive, "r:*") as tar:
            return _extract(tar, archive, dest, members)
    except DAMAGED as exc:  # a truncated download: the gzip stream or a member's data ends early
        why = " ".join(str(exc).split())  # tarfile's message spans lines, one per compression it tried
        raise InputError(archive, None, f"not a readable tar archive, or a truncated or damaged one "
                                        f"({type(exc).__name__}: {why}); delete it and download it again") from None
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise InputError(archive, None, f"the disk filled while extracting into {dest}: {exc.strerror}; "
                                            "nothing was extracted") from None
        if exc.filename is None:
            raise InputError(archive, None, f"not a readable tar archive: {exc}") from None
        raise


#: what reading a truncated or corrupted archive raises (gzip's EOFError, zlib's error, tarfile's own)
DAMAGED = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError)


def _extract(tar: tarfile.TarFile, archive: Path, dest: Path, members: list[str] | None) -> list[Path]:
    infos = tar.getmembers()
    seen: dict[str, tarfile.TarInfo] = {}
    for info in infos:
        check_member(archive, info)
        # "a/b", "./a/b" and "a//b" land on the same file: which copy wins would depend on the order
        key = str(PurePosixPath(info.name))
        first = seen.setdefault(key, info)
        if first is not info and not (first.isdir() and info.isdir()):
            raise InputError(archive, None, f"unsafe member {info.name!r}: a second member of that name "
                                            f"(first {first.name!r})")
    for info in infos:  # "a" a file and "a/b" a member: the folder would have to replace the file
        parent = PurePosixPath(info.name).parent
        while str(parent) not in (".", "/", ""):
            first = seen.get(str(parent))
            if first is not None and not first.isdir():
                raise InputError(archive, None, f"unsafe member {info.name!r}: {first.name!r} is a file, "
                                                "not a folder")
            parent = parent.parent
    if members is not None:
        wanted = set(members)
        infos = [i for i in infos if i.name in wanted]
        missing = wanted - {i.name for i in infos}
        if missing:
            raise InputError(archive, None, f"archive lacks members {sorted(missing)}")
    dest.mkdir(parents=True, exist_ok=True)
    # the headers' sizes against the free space first: a member claiming 8 GiB is refused before a byte is
    # written, not when the disk is full
    need = sum(i.size for i in infos if i.isfile())
    free = shutil.disk_usage(dest).free
    if need > free:
        raise InputError(archive, None, f"its members take {need:,} bytes, more than the {free:,} bytes free "
                                        f"in {dest}")
    staging = Path(tempfile.mkdtemp(prefix=".extract.", dir=dest))
    try:
        out = []
        for info in infos:
            if info.isdir():
                continue
            target = staging / info.name
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(info)
            assert src is not None
            with src, open(target, "wb") as fh:
                shutil.copyfileobj(src, fh)
            out.append(Path(info.name))
        for rel in out:
            final = dest / rel
            final.parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).replace(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [dest / rel for rel in out]
