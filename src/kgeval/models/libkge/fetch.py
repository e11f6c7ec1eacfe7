"""Downloading a LibKGE checkpoint with the project's downloader semantics (pinned SHA-256, mirror fallback)."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from ...data.download import fetch, resolve_mirror
from ...data.manifest import Resource
from ...errors import ConfigError
from .unpickle import _check_sha


def default_mirror_path(url: str) -> str:
    """Where a LibKGE file lies in a mirror folder: ``libkge/<last two URL path segments>``, e.g.
    ``libkge/iclr2020-models/fb15k-237-rescal.pt``."""
    parts = [p for p in urllib.parse.urlparse(url).path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise ConfigError(f"not a usable LibKGE checkpoint URL: {url!r}")
    return "/".join(["libkge", *parts[-2:]])


def fetch_libkge(url: str, sha256: str, out: str | Path, mirror: str | Path | None = None, size: int | None = None,
                 mirror_path: str | None = None, prefer_mirror: bool = True, timeout: float = 60.0) -> str:
    """Download a LibKGE checkpoint to ``out`` from ``url`` or a mirror folder; returns the source used.

    The downloader's semantics (``kgeval.data.download.fetch``): the bytes are hashed while written to a temporary
    file beside ``out`` and renamed into place only when the SHA-256 (and ``size``, when given) match; otherwise
    nothing is left at ``out`` (ChecksumError names the file, expected and actual hash). A LibKGE URL is not pinned
    to a commit, so the Resource is built here rather than read from the manifest; the pinned SHA-256 is what
    guarantees the bytes. ``KGEVAL_MIRROR`` wins over ``mirror``.
    """
    sha = _check_sha(sha256)
    res = Resource(mirror_path or default_mirror_path(url), url, sha, int(size) if size is not None else -1)
    mirror_dir = resolve_mirror(str(mirror) if mirror else None)
    return fetch(res, out, mirror=mirror_dir, prefer_mirror=prefer_mirror, timeout=timeout)
