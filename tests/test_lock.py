"""requirements.lock: every dependency of the [dev] environment pinned once, with hashes, within pyproject's
ranges (a lock made before a change of pyproject.toml fails here until it is refreshed)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(?P<version>[^\s;\\]+)")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _lock() -> dict[str, tuple[str, list[str]]]:
    pins: dict[str, tuple[str, list[str]]] = {}
    name = None
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        m = PIN.match(line)
        if m:
            name = _norm(m["name"])
            assert name not in pins, f"{name} pinned twice"
            pins[name] = (m["version"], [])
        elif name and "--hash=sha256:" in line:
            pins[name][1].append(line.split("--hash=sha256:")[1].split()[0])
    return pins


def _dev_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    out, todo, seen = [Requirement(r) for r in project["dependencies"]], ["dev"], set()
    while todo:
        extra = todo.pop()
        seen.add(extra)
        for raw in extras[extra]:
            req = Requirement(raw)
            if _norm(req.name) == "kgeval":
                todo.extend(e for e in req.extras if e not in seen)
            else:
                out.append(req)
    return out


def test_every_dev_dependency_is_pinned_within_its_range_with_hashes():
    pins = _lock()
    for req in _dev_requirements():
        name = _norm(req.name)
        assert name in pins, f"{req.name} is not in requirements.lock: refresh it (docs/guide/install.md)"
        version, hashes = pins[name]
        assert req.specifier.contains(version, prereleases=True), f"{name}=={version} is outside {req}"
    assert all(len(h) == 64 for _, hs in pins.values() for h in hs)
    assert all(hs for _, hs in pins.values()), "a pin without a hash: pip --require-hashes refuses the lock"


def test_the_lock_pins_torchs_cpu_build():
    assert _lock()["torch"][0] == "2.13.0+cpu"
