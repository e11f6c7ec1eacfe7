"""The reproducible numerical mode (kgeval.numerics): in force in a fresh process after ``import kgeval``, off with
KGEVAL_NUMERICS=native, recorded by ``describe``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kgeval import numerics
from kgeval.errors import ConfigError

PROBE = ("import json, kgeval, torch; from kgeval import numerics; "
         "torch.ones(4, 4) @ torch.ones(4, 4); print(json.dumps(numerics.describe()))")


def _child(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in {*numerics.SETTINGS, numerics.MODE_VAR}}
    clean.update(env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=clean, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cpuinfo(key: str) -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            line = next(ln for ln in fh if ln.startswith(key))
    except (OSError, StopIteration):
        return ""
    return line.split(":", 1)[1].strip()


def _cpu_flags() -> set[str]:
    return set(_cpuinfo("flags").split())


@pytest.mark.skipif("avx2" not in _cpu_flags(), reason="the mode's branches need an AVX2 processor")
def test_import_kgeval_pins_mkl_and_aten_in_a_fresh_process():
    info = _child()
    assert info["mode"] == "reproducible"
    assert info["variables"]["MKL_CBWR"] == "AVX2,STRICT" and info["variables"]["ONEDNN_MAX_CPU_ISA"] == "AVX512_CORE"
    # what the libraries took, read back from them: MKL's service function and ATen's dispatcher. MKL honours a
    # named branch on Intel processors only and runs AUTO (strict) on the others (the AMD kind)
    intel = _cpuinfo("vendor_id") == "GenuineIntel"
    assert info["mkl_branch"] == ("AVX2,STRICT" if intel else "AUTO,STRICT")
    assert info["aten_cpu_capability"] == "AVX2"


def test_portable_mode_runs_mkls_compatible_branch_on_every_kind():
    info = _child(KGEVAL_NUMERICS="portable")
    assert info["mode"] == "portable"
    assert info["variables"]["MKL_CBWR"] == "COMPATIBLE,STRICT"
    assert info["mkl_branch"] == "COMPATIBLE,STRICT"  # accepted on Intel and AMD processors alike
    assert info["variables"]["ONEDNN_MAX_CPU_ISA"] == "AVX2"  # oneDNN's AVX-512 convolutions differ by kind
    pinned = {"MKL_CBWR", "ONEDNN_MAX_CPU_ISA"}
    assert {k: info["variables"][k] for k in numerics.SETTINGS if k not in pinned} == {
        k: v for k, v in numerics.SETTINGS.items() if k not in pinned}


def test_native_mode_leaves_the_libraries_their_choice():
    info = _child(KGEVAL_NUMERICS="native")
    assert info["mode"] == "native"
    assert all(info["variables"][k] is None for k in numerics.SETTINGS)
    assert info["mkl_branch"] in {"AUTO", "OFF", None}


def test_an_unknown_mode_is_one_line_naming_the_variable(monkeypatch):
    monkeypatch.setenv(numerics.MODE_VAR, "fast")
    with pytest.raises(ConfigError, match=r"\$KGEVAL_NUMERICS='fast': expected one of reproducible, portable, native"):
        numerics.mode()
    assert numerics.on()  # the variables stay pinned until the mode is named right


def test_environment_is_empty_when_off(monkeypatch):
    monkeypatch.setenv(numerics.MODE_VAR, "native")
    assert numerics.environment() == {} and not numerics.on()
    monkeypatch.setenv(numerics.MODE_VAR, "reproducible")
    assert numerics.environment() == numerics.SETTINGS
    monkeypatch.setenv(numerics.MODE_VAR, "portable")
    assert numerics.environment() == {**numerics.SETTINGS, "MKL_CBWR": "COMPATIBLE,STRICT",
                                      "ONEDNN_MAX_CPU_ISA": "AVX2"}


def test_expected_mkl_branch_follows_mkls_rule_per_vendor():
    # MKL runs a named branch on Intel processors only; on others AUTO, unless COMPATIBLE (or AUTO) is named
    assert numerics.expected_mkl_branch("AVX2,STRICT", intel=True) == "AVX2,STRICT"
    assert numerics.expected_mkl_branch("AVX2,STRICT", intel=False) == "AUTO,STRICT"
    assert numerics.expected_mkl_branch("avx512", intel=False) == "AUTO"
    assert numerics.expected_mkl_branch("COMPATIBLE,STRICT", intel=False) == "COMPATIBLE,STRICT"
    assert numerics.expected_mkl_branch(None, intel=True) == "AUTO"
