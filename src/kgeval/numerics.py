"""The reproducible numerical mode: the settings that decide a CPU computation's bits, pinned for every kind.

On the project's two CPU kinds (AMD EPYC Zen 4 and Intel Xeon Sapphire Rapids, both AVX-512) the libraries pick
their kernels by the processor: MKL its code branch, oneDNN AMX or other kernels on Intel, OpenBLAS its kernels by
core type. The same training then ends in other bits (docs/guide/numerics.md). The mode pins them:

* ``MKL_CBWR=AVX2,STRICT``: MKL's Conditional Numerical Reproducibility branch, strict: without STRICT a row's
  product depends on its place in the batch (a sharded ranking differed from the unsharded). MKL honours a named
  branch on Intel processors only; on any other it runs its ``AUTO`` branch (MKL's developer guide, and read back
  here: ``AUTO,STRICT`` on the AMD kind), so this pins the bits within a kind, not across kinds;
* ``ONEDNN_MAX_CPU_ISA=AVX512_CORE``: oneDNN's instruction-set ceiling (no AMX kernels on the Intel kind);
* ``ATEN_CPU_CAPABILITY=avx2``: ATen's own vectorised kernels (reductions sum in another order with AVX-512's
  wider vectors);
* ``OPENBLAS_CORETYPE=Haswell``: numpy's and scipy's BLAS kernels (the value the AMD machines set already);
* ``CUBLAS_WORKSPACE_CONFIG=:4096:8``: cuBLAS's deterministic mode on a GPU (which is compared within a
  tolerance, never bit for bit with a CPU);
* ``torch.use_deterministic_algorithms(True)`` (warn only) and the threads a job runs with (the workflow pins
  each job's threads; :func:`apply` leaves ``torch.get_num_threads`` alone).

``KGEVAL_NUMERICS=portable`` is the same with ``MKL_CBWR=COMPATIBLE,STRICT``: the one branch MKL documents as the
same code on Intel and non-Intel processors (SSE2 without the approximate rcpps/rsqrtps), and
``ONEDNN_MAX_CPU_ISA=AVX2`` (oneDNN's convolutions under the AVX-512 ceiling differ between the kinds; under AVX2
they match: ``benchmarks/numerics_bits.py``), for bits that depend less on the kind, at the price of slower matrix
products. The variables are read when each library first
dispatches, so :func:`apply` sets them at ``import kgeval``, before numpy or torch compute anything, and the
Snakefile sets them for every job it starts. ``KGEVAL_NUMERICS=native`` turns the mode off (the libraries' own
choices: faster on some processors, not comparable across kinds). A CUDA device is not covered: its runs record
the device and are compared within a tolerance, not bit for bit.
"""

from __future__ import annotations

import ctypes
import os
import sys

MODE_VAR = "KGEVAL_NUMERICS"
MODES = ("reproducible", "portable", "native")
# what decides the bits, and its value in the reproducible mode
SETTINGS: dict[str, str] = {
    "MKL_CBWR": "AVX2,STRICT",
    "ONEDNN_MAX_CPU_ISA": "AVX512_CORE",
    "ATEN_CPU_CAPABILITY": "avx2",
    "OPENBLAS_CORETYPE": "Haswell",
    "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
}
# the portable mode: MKL's one branch that runs the same code on every x86-64 processor (module docstring)
PORTABLE: dict[str, str] = {**SETTINGS, "MKL_CBWR": "COMPATIBLE,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX2"}
# MKL's service functions' branch codes (mkl_service.h)
_CBWR_NAMES = {1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1", 8: "SSE4_2", 9: "AVX",
               10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1", 14: "AVX512_E1"}
_CBWR_STRICT = 0x10000


def mode() -> str:
    """``reproducible`` (the default) or ``native``, from ``$KGEVAL_NUMERICS``."""
    raw = os.environ.get(MODE_VAR, "").strip().lower() or "reproducible"
    if raw not in MODES:
        from .errors import ConfigError

        raise ConfigError(f"${MODE_VAR}={raw!r}: expected one of {', '.join(MODES)}")
    return raw


def settings(name: str | None) -> dict[str, str]:
    """The variables mode ``name`` (a ``$KGEVAL_NUMERICS`` value) pins: none for ``native``, the portable ones for
    ``portable``, else (the default, and an unknown name, which :func:`mode` refuses) the reproducible ones."""
    name = (name or "").strip().lower()
    return {} if name == "native" else dict(PORTABLE if name == "portable" else SETTINGS)


def environment() -> dict[str, str]:
    """The variables the mode sets (empty when it is off): for a child process's environment."""
    return settings(mode())


def on() -> bool:
    """Whether the mode pins the variables (an unknown ``$KGEVAL_NUMERICS`` counts as on: :func:`mode` names it)."""
    return os.environ.get(MODE_VAR, "").strip().lower() != "native"


def apply() -> dict[str, str]:
    """Set the mode's variables in this process (before the libraries read them) and return them. A library
    that has already dispatched keeps its choice: :func:`describe` reports what is in force."""
    env = settings(os.environ.get(MODE_VAR))
    os.environ.update(env)
    if env and "torch" in sys.modules:
        deterministic()
    return env


def deterministic() -> None:
    """PyTorch's deterministic algorithms, warning (not failing) where an operation has none."""
    import torch

    torch.use_deterministic_algorithms(True, warn_only=True)


def expected_mkl_branch(cbwr: str | None, intel: bool) -> str:
    """The branch MKL runs for ``MKL_CBWR`` = ``cbwr`` (unset: ``AUTO``): the named one on an Intel processor; on
    any other ``AUTO`` unless ``COMPATIBLE`` or ``AUTO`` is named (MKL's developer guide), ``,STRICT`` kept."""
    branch, comma, rest = (cbwr or "AUTO").upper().partition(",")
    if not intel and branch not in ("AUTO", "COMPATIBLE"):
        branch = "AUTO"
    return branch + comma + rest


def mkl_branch() -> str | None:
    """The MKL branch in force (``AVX2``, ``AUTO``, …, with ``,STRICT``) read from MKL's service functions in
    torch's library; ``None`` when torch is not imported or has no MKL."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        get = ctypes.CDLL(lib).mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return None
    get.restype = ctypes.c_int
    value = int(get(ctypes.c_int(-1)))  # MKL_CBWR_ALL: the branch and the STRICT bit (MKL_CBWR_BRANCH drops it)
    name = _CBWR_NAMES.get(value & ~_CBWR_STRICT, str(value))
    return name + (",STRICT" if value & _CBWR_STRICT else "")


def describe() -> dict:
    """The numerical mode of this process, for a run's provenance: the mode, the variables that decide the bits
    as they are set, MKL's branch in force and torch's threads and determinism when torch is imported."""
    out: dict = {"mode": mode(), "variables": {k: os.environ.get(k) for k in
                                                (*SETTINGS, "OMP_NUM_THREADS")}}
    torch = sys.modules.get("torch")
    if torch is not None:
        out["mkl_branch"] = mkl_branch()
        out["torch_threads"] = torch.get_num_threads()
        out["deterministic_algorithms"] = torch.are_deterministic_algorithms_enabled()
        out["aten_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        out["device"] = "cuda" if torch.cuda.is_available() else "cpu"
    return out
