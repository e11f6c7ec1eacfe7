"""Safe extraction of ``.tar.gz`` archives.

A member is refused when its name is absolute, contains ``..``, is anything but a regular file or folder
(links and device files could write outside the destination), or repeats another member's name (the content
would depend on which copy is extracted last). Members are extracted into a temporary folder
that is renamed into place only when the whole archive extracted cleanly.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
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
        tar = tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise InputError(archive, None, f"not a readable tar archive: {exc}") from exc
    with tar:
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
        if members is not None:
            wanted = set(members)
            infos = [i for i in infos if i.name in wanted]
            missing = wanted - {i.name for i in infos}
            if missing:
                raise InputError(archive, None, f"archive lacks members {sorted(missing)}")
        dest.mkdir(parents=True, exist_ok=True)
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
