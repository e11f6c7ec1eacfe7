"""The reproducible numerical mode: the settings that decide a CPU computation's bits, pinned for every kind.

On the project's two CPU kinds (AMD EPYC Zen 4 and Intel Xeon Sapphire Rapids, both AVX-512) the libraries pick
their kernels by the processor: MKL takes its AVX2 branch on AMD and its AVX-512 branch on Intel, oneDNN may use
AMX or other kernels on Intel, OpenBLAS picks its kernels by core type. The same training then ends in other bits
(docs/guide/reproduce.md, "Numbers that match bit for bit"). The mode pins them:

* ``MKL_CBWR=AVX2,STRICT``: MKL's Conditional Numerical Reproducibility branch (what MKL does on AMD), strict:
  without it a row's product depends on its place in the batch (a sharded ranking differed from the unsharded);
* ``ONEDNN_MAX_CPU_ISA=AVX512_CORE``: oneDNN's instruction-set ceiling (what it does on AMD);
* ``ATEN_CPU_CAPABILITY=avx2``: ATen's own vectorised kernels (reductions sum in another order with AVX-512's
  wider vectors; on the AMD kind this setting changed nothing);
* ``OPENBLAS_CORETYPE=Haswell``: numpy's and scipy's BLAS kernels (the value the AMD machines set already);
* ``CUBLAS_WORKSPACE_CONFIG=:4096:8``: cuBLAS's deterministic mode on a GPU (which is compared within a
  tolerance, never bit for bit with a CPU);
* ``torch.use_deterministic_algorithms(True)`` (warn only) and the threads a job runs with (the workflow pins
  each job's threads; :func:`apply` leaves ``torch.get_num_threads`` alone).

The variables are read when each library first dispatches, so :func:`apply` sets them at ``import kgeval``, before
numpy or torch compute anything, and the Snakefile sets them for every job it starts. ``KGEVAL_NUMERICS=native``
turns the mode off (the libraries' own choices: faster on some processors, not comparable across kinds). A CUDA
device is not covered: its runs record the device and are compared within a tolerance, not bit for bit.
"""

from __future__ import annotations

import ctypes
import os
import sys

MODE_VAR = "KGEVAL_NUMERICS"
MODES = ("reproducible", "native")
# what decides the bits, and its value in the reproducible mode
SETTINGS: dict[str, str] = {
    "MKL_CBWR": "AVX2,STRICT",
    "ONEDNN_MAX_CPU_ISA": "AVX512_CORE",
    "ATEN_CPU_CAPABILITY": "avx2",
    "OPENBLAS_CORETYPE": "Haswell",
    "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
}
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


def environment() -> dict[str, str]:
    """The variables the mode sets (empty when it is off): for a child process's environment."""
    return dict(SETTINGS) if mode() == "reproducible" else {}


def on() -> bool:
    """Whether the reproducible mode is on (an unknown ``$KGEVAL_NUMERICS`` counts as on: :func:`mode` names it)."""
    return os.environ.get(MODE_VAR, "").strip().lower() != "native"


def apply() -> dict[str, str]:
    """Set the mode's variables in this process (before the libraries read them) and return them. A library
    that has already dispatched keeps its choice: :func:`describe` reports what is in force."""
    env = dict(SETTINGS) if on() else {}
    os.environ.update(env)
    if env and "torch" in sys.modules:
        deterministic()
    return env


def deterministic() -> None:
    """PyTorch's deterministic algorithms, warning (not failing) where an operation has none."""
    import torch

    torch.use_deterministic_algorithms(True, warn_only=True)


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
