"""The environment that made a run, as far as it can decide floating-point results: the CPU (model, kind and
flags), the numerical mode (the environment variables that pin MKL's branch, oneDNN's and ATen's instruction
sets, OpenBLAS's core type and the threads; deterministic algorithms), the numerical libraries' versions, and
the lock file's hash with the installed packages that differ from its pins.

Everything here is a plain JSON-able dict without a date or a host name, so that two runs on the same kind of
machine with the same environment record the same bytes (the manifest is compared byte for byte).
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import platform
import re
from pathlib import Path
from typing import Any

#: the variables that decide (or may decide) a CPU's floating-point results (specs/numerical-reproducibility.md)
NUMERIC_VARIABLES = ("KGEVAL_NUMERICS", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY",
                     "OPENBLAS_CORETYPE", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                     "CUBLAS_WORKSPACE_CONFIG")
#: the packages whose versions a manifest names even without a lock file
KEY_PACKAGES = ("torch", "numpy", "scipy", "pandas", "pyarrow", "scikit-learn", "numba", "kgeval")
LOCK_NAME = "requirements.lock"


def cpu_info(cpuinfo: str | None = None) -> dict[str, Any]:
    """Model, vendor, kind (``AMD EPYC``, ``Intel Xeon`` or ``other``, the words of a pack's provenance) and the
    sorted feature flags of the first processor in ``/proc/cpuinfo`` (or the text given)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo = ""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            if fields:
                break  # the first processor describes them all on these machines
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    model = fields.get("model name") or platform.processor() or platform.machine()
    return {"model": model, "vendor": fields.get("vendor_id", ""), "kind": cpu_kind(model, fields.get("vendor_id", "")),
            "flags": sorted(set(fields.get("flags", "").split()))}


def cpu_kind(model: str, vendor: str = "") -> str:
    """The machine kind a pack's provenance names: the product line, not the exact model."""
    if "EPYC" in model or (vendor == "AuthenticAMD" and not model):
        return "AMD EPYC"
    if "Xeon" in model:
        return "Intel Xeon"
    if vendor == "AuthenticAMD":
        return "AMD (other)"
    if vendor == "GenuineIntel":
        return "Intel (other)"
    return "other"


def numerical_mode() -> dict[str, Any]:
    """The variables of :data:`NUMERIC_VARIABLES` (null when unset), and what the libraries do with them:
    deterministic algorithms, torch's intra-op threads, the CPU capability ATen dispatches to and the branch MKL
    runs (read back from MKL: it honours a named branch on Intel processors only)."""
    import torch

    try:
        capability = torch.backends.cpu.get_cpu_capability()
    except AttributeError:  # older torch
        capability = None
    from kgeval.numerics import mkl_branch

    return {"variables": {name: os.environ.get(name) for name in NUMERIC_VARIABLES},
            "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
            "torch_threads": int(torch.get_num_threads()), "aten_capability": capability,
            "mkl_branch": mkl_branch()}


_MKL = re.compile(r"Math Kernel Library Version ([^\s]+)")
_ONEDNN = re.compile(r"(?:MKL-DNN|oneDNN) v([^\s]+)")


def library_versions() -> dict[str, Any]:
    """Python, the key packages, MKL and oneDNN (from ``torch.__config__.show()``) and the BLAS libraries loaded
    in this process (threadpoolctl: OpenBLAS's version and the core type it picked)."""
    import torch

    shown = torch.__config__.show()
    mkl, onednn = _MKL.search(shown), _ONEDNN.search(shown)
    out: dict[str, Any] = {"python": platform.python_version(),
                           "packages": {name: _version(name) for name in KEY_PACKAGES},
                           "mkl": mkl.group(1) if mkl else None, "onednn": onednn.group(1) if onednn else None,
                           "cuda": torch.version.cuda}
    try:
        from threadpoolctl import threadpool_info

        out["blas"] = sorted(({"api": i.get("internal_api"), "version": i.get("version"),
                               "architecture": i.get("architecture")} for i in threadpool_info()
                              if i.get("user_api") == "blas"), key=lambda b: (str(b["api"]), str(b["version"])))
    except ImportError:  # threadpoolctl comes with scikit-learn; without it the BLAS stays unnamed
        out["blas"] = None
    return out


def _version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def normalise(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(text: str) -> dict[str, str]:
    """``name==version`` pins of a pip requirements file (continuation lines, hashes, markers and comments
    allowed), by normalised name."""
    pins = {}
    for line in text.replace("\\\n", " ").splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*([^\s;,\\]+)", line)
        if m:
            pins[normalise(m.group(1))] = m.group(2)
    return pins


def lock_record(lock: str | Path | None, installed: dict[str, str] | None = None) -> dict[str, Any]:
    """The lock file's SHA-256 and the locked packages installed at another version or not at all
    (``{name: {"locked": v, "installed": w or null}}``); an absent lock says so (``present: false``)."""
    if lock is None or not Path(lock).is_file():
        return {"path": None if lock is None else str(lock), "present": False, "sha256": None, "differs": None}
    data = Path(lock).read_bytes()
    pins = read_lock(data.decode("utf-8", errors="replace"))
    if installed is None:
        installed = {normalise(d.metadata["Name"]): d.version for d in md.distributions() if d.metadata["Name"]}
    differs = {name: {"locked": v, "installed": installed.get(name)} for name, v in sorted(pins.items())
               if installed.get(name) != v and not _same_local(installed.get(name), v)}
    return {"path": Path(lock).name, "present": True, "sha256": hashlib.sha256(data).hexdigest(), "pins": len(pins),
            "differs": differs}


def _same_local(installed: str | None, locked: str) -> bool:
    """torch's local version (``2.13.0+cpu``) matches a pin that names it or not."""
    return installed is not None and "+" in installed and "+" not in locked and installed.split("+")[0] == locked


def environment_record(lock: str | Path | None = LOCK_NAME) -> dict[str, Any]:
    """The whole environment record of a manifest (see the module's docstring)."""
    return {"cpu": cpu_info(), "numerics": numerical_mode(), "versions": library_versions(),
            "lock": lock_record(lock)}
