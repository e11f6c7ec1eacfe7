"""The resource manifest: every public input file with its pinned URL, SHA-256 and size.

The manifest is a TSV with the header ``mirror_path  url  sha256  bytes``. ``mirror_path`` is both the file's
path inside a mirror folder and its path under the download folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import InputError
from ..limits import read_text

HEADER = ["mirror_path", "url", "sha256", "bytes"]
_SHA = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"/[0-9a-f]{40}/")


@dataclass(frozen=True)
class Resource:
    mirror_path: str
    url: str
    sha256: str
    size: int


SCHEMES = ("https", "http")


def url_problem(url: str) -> str | None:
    """Why ``url`` is not one kgeval downloads (a scheme other than https/http, no host), or None."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES:
        scheme = f"scheme {parts.scheme + '://'!r}" if parts.scheme else "no scheme"
        return f"URL {url!r} has {scheme}: only https:// (or http://) URLs are downloaded"
    if not parts.hostname:
        return f"URL {url!r} names no host"
    return None


def read_manifest(path: str | Path) -> dict[str, Resource]:
    """Read and validate a manifest; returns resources by ``mirror_path``.

    Every URL must be pinned to a commit (a 40-hex path segment), so the bytes behind it never change.
    """
    path = Path(path)
    resources: dict[str, Resource] = {}
    lines = read_text(path, "utf-8").splitlines()
    if not lines or lines[0].split("\t") != HEADER:
        raise InputError(path, 1, "expected header " + repr("\t".join(HEADER)))
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) != 4:
            raise InputError(path, lineno, f"expected 4 tab-separated fields, found {len(fields)}")
        mirror_path, url, sha, size = fields
        if mirror_path.startswith("/") or ".." in Path(mirror_path).parts:
            raise InputError(path, lineno, f"unsafe mirror_path {mirror_path!r}")
        if not _SHA.match(sha):
            raise InputError(path, lineno, f"not a lower-case hex SHA-256: {sha!r}")
        if not size.isdigit():
            raise InputError(path, lineno, f"size is not a non-negative integer: {size!r}")
        problem = url_problem(url)
        if problem:
            raise InputError(path, lineno, problem)
        if not _COMMIT.search(url):
            raise InputError(path, lineno, f"URL is not pinned to a commit (no 40-hex path segment): {url!r}")
        if mirror_path in resources:
            raise InputError(path, lineno, f"duplicate mirror_path {mirror_path!r}")
        resources[mirror_path] = Resource(mirror_path, url, sha, int(size))
    return resources
