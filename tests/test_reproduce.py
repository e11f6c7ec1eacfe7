"""kgeval reproduce and the content manifest (issue 61): two hand-made results folders, identical or differing in
one value's 12th digit, one verdict or the environment; the digests of a model's parameters (free of file dates
and dict order, changed by one bit) and of tables (a pack's float32 and dictionary columns hash as the run's);
the lock file's pins; and the shipped packs against themselves and each other."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from kgeval.cli import main
from kgeval.models.checkpoint import save_checkpoint
from kgeval.reproduce import environment as env_mod
from kgeval.reproduce.compare import reproduce
from kgeval.reproduce.manifest import array_digest, build_manifest, column_digests, model_entry, read_manifest
from kgeval.reproduce.report import render
from kgeval.reproduce.steps import write_manifest_step
from kgeval.tables.reference import pack, provenance_record

ROOT = Path(__file__).resolve().parents[1]
T = "Tiny-Test"
# 12 significant digits, as a writer with more precision than evaluation.csv's %.10g would give
MRR = {"A": "0.25", "B": "0.123456789012"}


def _params(seed: int = 0, order=("ent", "rel")) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    arrays = {"ent": torch.randn(5, 3, generator=g), "rel": torch.randn(2, 3, generator=g)}
    return {k: arrays[k] for k in order}


def _checkpoint(path: Path, params: dict[str, torch.Tensor], **extra) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint({"model_name": "DistMult", "dataset": "Tiny", "state_dict": params, **extra}, path)
    return path


def _environment(kind: str = "AMD EPYC", cbwr: str | None = None, numpy_installed: str = "2.1.0",
                 branch: str | None = None) -> dict:
    flags = ["avx2", "avx512f"] + (["amx_tile"] if kind == "Intel Xeon" else [])
    return {"cpu": {"model": f"{kind} 9999", "vendor": "", "kind": kind, "flags": flags},
            "numerics": {"variables": {"KGEVAL_NUMERICS": None, "MKL_CBWR": cbwr}, "deterministic_algorithms": True,
                         "torch_threads": 1, "aten_capability": "AVX512", "mkl_branch": branch},
            "versions": {"python": "3.11.9", "packages": {"numpy": numpy_installed, "torch": "2.13.0"},
                         "mkl": "2024.2", "onednn": "3.12.0", "cuda": None, "blas": []},
            "lock": env_mod.lock_record(None) if numpy_installed is None else {
                "path": "requirements.lock", "present": True, "sha256": "ab" * 32, "pins": 2,
                "differs": {} if numpy_installed == "2.1.0" else
                {"numpy": {"locked": "2.1.0", "installed": numpy_installed}}}}


def results_folder(root: Path, mrr: dict[str, str] = MRR, holds: str = "no", environment: dict | None = None,
                   manifest: bool = True) -> Path:
    """A results folder by hand: one test set (evaluation.csv, per-item tables), a findings table, one trained
    model and one score dump, and its manifest."""
    m = root / "metrics" / T
    m.mkdir(parents=True)
    (m / "evaluation.csv").write_text(
        "System,micro_mrr,macro_mrr,micro_hits@10,macro_hits@10,num_rel\n"
        + "".join(f"{s},{v},0.5,0.75,0.625,4\n" for s, v in mrr.items()), encoding="utf-8")
    pq.write_table(pa.table({"qid": ["q1", "q1", "q2", "q2"], "entity": [3, 4, 3, 4], "System": ["A", "A", "B", "B"],
                             "micro_mrr": [0.5, 0.25, 1.0, 0.125]}), m / "per_answer.parquet")
    pq.write_table(pa.table({"qid": ["q1", "q2", "q1", "q2"], "System": ["A", "A", "B", "B"],
                             "macro_mrr": [0.5, 1.0, 0.25, 0.75], "macro_hits@10": [1.0, 1.0, 1.0, 0.0]}),
                   m / "per_question.parquet")
    (root / "tables").mkdir()
    pd.DataFrame({"claim": ["4. Claim four holds", "5. Claim five holds"], "paper": ["0.7", "yes"],
                  "ours": ["0.64", "yes"], "holds": [holds, "yes"]}).to_csv(root / "tables" / "findings.csv",
                                                                          index=False)
    model = _checkpoint(root / "models" / "Tiny" / "DistMult" / "model.pt", _params())
    dump = root / "scores" / T / "DistMult"
    dump.mkdir(parents=True)
    pq.write_table(pa.table({"q": [0, 1], "rank": [1, 1], "entity": [3, 4], "score": np.float32([0.5, 0.25])}),
                   dump / "run.parquet")
    (dump / "meta.json").write_text(json.dumps({"files": {"run.parquet": "x"}, "seconds": 1.5}), encoding="utf-8")
    if manifest:
        record = build_manifest(root, [model], [dump], [m / "evaluation.csv", m / "per_answer.parquet",
                                                        m / "per_question.parquet"], root / "tables" / "findings.csv",
                                environment or _environment(), "cfg0")
        (root / "manifest.json").write_text(json.dumps(record, indent=2, sort_keys=True), encoding="utf-8")
    return root


def _run(capsys, *argv) -> tuple[int, list[str]]:
    rc = main(["reproduce", *map(str, argv)])
    return rc, capsys.readouterr().out.splitlines()


# ---- kgeval reproduce on hand-made folders ---------------------------------------------------------------------
def test_identical_folders_are_bit_identical(tmp_path, capsys):
    a, b = results_folder(tmp_path / "a"), results_folder(tmp_path / "b")
    rc, out = _run(capsys, a, "--against", b)
    # 3 tables of the test set + findings.csv + 1 model + 1 dump
    assert (rc, out[0]) == (0, "bit-identical (6 artifacts)")
    assert any("environment: the same (AMD EPYC" in line for line in out)


def test_a_change_in_the_12th_digit_is_found_and_named(tmp_path, capsys):
    a = results_folder(tmp_path / "a", {"A": "0.25", "B": "0.123456789013"})
    b = results_folder(tmp_path / "b")
    rc, out = _run(capsys, a, "--against", b)
    assert rc == 1
    assert out[0] == "1 of 6 artifacts differ; largest micro MRR change +1e-12 (B, Tiny-Test); verdicts changed: none"
    row = next(line.split() for line in out if line.split()[:2] == ["B", "MRR"])
    assert row[2:5] == ["0.123456789", "0.123456789", "+1e-12"]  # the values at 10 digits, the change in full
    assert next(line.split() for line in out if line.split()[:2] == ["A", "MRR"])[4] == "="


def test_a_changed_verdict_is_listed(tmp_path, capsys):
    a = results_folder(tmp_path / "a", holds="undecided (interval [0.61, 0.74], threshold 0.7)")
    b = results_folder(tmp_path / "b")
    rc, out = _run(capsys, a, "--against", b)
    assert rc == 1
    assert out[0] == ("1 of 6 artifacts differ; largest micro MRR change 0 (A, Tiny-Test); verdicts changed: "
                      "claim 4 (no → undecided)")
    assert [line.split()[0] for line in out if line.rstrip().endswith("CHANGED")] == ["4"]


def test_a_claim_on_wall_clock_times_is_compared_by_its_verdict_only(tmp_path, capsys):
    """Claim 11b's statistic is a ratio of seconds: two reruns never write the same, so its row is left out of the
    table's digest (its verdict still counts); a change in any other row still differs."""
    def findings(root: Path, seconds: str, other: str = "0.64") -> None:
        pd.DataFrame({"claim": ["4. Claim four holds", "11b. KP is fast"], "ours": [other, seconds],
                      "holds": ["no", "partly"], "interval": ["[0.5, 0.7]", "none: wall-clock times"]}).to_csv(
            root / "tables" / "findings.csv", index=False)

    a, b = results_folder(tmp_path / "a", manifest=False), results_folder(tmp_path / "b", manifest=False)
    findings(a, "median 37.3%")
    findings(b, "median 47.8%")
    rc, out = _run(capsys, a, "--against", b)
    assert rc == 0 and out[0].startswith("bit-identical")
    assert "note: tables/findings.csv: claim 11b (wall-clock times) compared by verdict only" in out
    findings(a, "median 37.3%", other="0.65")
    rc, out = _run(capsys, a, "--against", b)
    assert rc == 1 and "tables/findings.csv: the claims' table differs" in "\n".join(out)


def test_environment_differences_are_listed(tmp_path, capsys):
    a = results_folder(tmp_path / "a", environment=_environment("Intel Xeon", "AVX2", numpy_installed="2.2.0"))
    b = results_folder(tmp_path / "b")
    rc, out = _run(capsys, a, "--against", b)
    assert (rc, out[0]) == (0, "bit-identical (6 artifacts)")  # the values decide; the environment explains
    rows = {line.split("  ")[1].strip(): line for line in out if line.startswith("  ") and "  " in line[2:]}
    assert "Intel Xeon" in rows["CPU kind"] and "AMD EPYC" in rows["CPU kind"]
    assert "AVX2" in rows["MKL_CBWR"] and "unset" in rows["MKL_CBWR"]
    assert "numpy 2.2.0 (locked 2.1.0)" in rows["packages differing from the lock"]
    assert "1 only here (amx_tile)" in rows["CPU flags"]
    assert sum(1 for line in out if line.startswith("  numpy ")) == 1  # the installed version differs too


def test_another_mkl_branch_is_named_with_its_reason(tmp_path, capsys):
    # what the two kinds read back under MKL_CBWR=AVX2,STRICT: MKL honours the branch on Intel processors only
    a = results_folder(tmp_path / "a", {"A": "0.25", "B": "0.123456789013"},
                       environment=_environment("AMD EPYC", "AVX2,STRICT", branch="AUTO,STRICT"))
    b = results_folder(tmp_path / "b", environment=_environment("Intel Xeon", "AVX2,STRICT", branch="AVX2,STRICT"))
    rc, out = _run(capsys, a, "--against", b)
    assert rc == 1
    row = next(line for line in out if line.startswith("  MKL branch in force"))
    assert row.split()[-2:] == ["AUTO,STRICT", "AVX2,STRICT"]
    why = [line for line in out if line.startswith("why: ")]
    assert len(why) == 1 and "on Intel processors only" in why[0] and "KGEVAL_NUMERICS=portable" in why[0]
    # the same branch on both sides (or an older manifest that did not record it) gives no reason
    c = results_folder(tmp_path / "c", environment=_environment("Intel Xeon", "AVX2,STRICT", branch="AVX2,STRICT"))
    _, out = _run(capsys, c, "--against", b)
    assert not any(line.startswith(("why: ", "  MKL branch")) for line in out)
    # a manifest written before MKL's branch was recorded: inferred from MKL_CBWR and the CPU (MKL runs AUTO on
    # AMD processors whatever branch is named, the named one on Intel's)
    d = results_folder(tmp_path / "d", environment=_environment("AMD EPYC", "AVX2,STRICT"))
    e = results_folder(tmp_path / "e", environment=_environment("Intel Xeon", "AVX2,STRICT"))
    _, out = _run(capsys, d, "--against", e)
    row = next(line for line in out if line.startswith("  MKL branch"))
    assert "AUTO,STRICT (inferred)" in row and "AVX2,STRICT (inferred)" in row
    assert sum(line.startswith("why: MKL ran its AUTO,STRICT branch here") for line in out) == 1
    f = results_folder(tmp_path / "f", environment=_environment("AMD EPYC", "COMPATIBLE,STRICT"))
    g = results_folder(tmp_path / "g", environment=_environment("Intel Xeon", "COMPATIBLE,STRICT"))
    _, out = _run(capsys, f, "--against", g)
    assert not any(line.startswith("  MKL branch") for line in out)
    # one branch on both kinds (the portable mode): the kinds themselves are the reason
    why = [line for line in out if line.startswith("why: ")]
    assert len(why) == 1 and why[0].startswith("why: the CPU kinds differ (AMD EPYC here, Intel Xeon there)")


def test_a_side_without_manifest_compares_values_and_says_the_environment_is_unknown(tmp_path, capsys):
    a = results_folder(tmp_path / "a")
    b = results_folder(tmp_path / "b", manifest=False)
    shutil.rmtree(b / "models")
    shutil.rmtree(b / "scores")
    rc, out = _run(capsys, a, "--against", b)
    assert (rc, out[0]) == (0, "bit-identical (4 artifacts)")
    assert f"environment of {b}: unknown (no manifest.json)" in out
    assert any("models and score dumps: not compared" in line for line in out)


def test_an_older_run_without_manifest_is_hashed_from_its_files(tmp_path, capsys):
    a = results_folder(tmp_path / "a")
    b = results_folder(tmp_path / "b", manifest=False)
    _checkpoint(b / "models" / "Tiny" / "DistMult" / "model.pt", _params(seed=1))
    rc, out = _run(capsys, a, "--against", b)
    assert (rc, out[0].split(";")[0]) == (1, "1 of 6 artifacts differ")
    assert any(line.startswith("  models/Tiny/DistMult/model.pt: sha256 ") for line in out)


def test_not_a_results_folder_is_one_line(tmp_path, capsys):
    a = results_folder(tmp_path / "a")
    (tmp_path / "empty").mkdir()
    rc = main(["reproduce", str(a), "--against", str(tmp_path / "empty")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].startswith(f"kgeval: error: {tmp_path / 'empty'}: neither a results folder nor a reference pack")


def test_a_pack_of_the_run_is_bit_identical_to_it(tmp_path):
    """The pack keeps float32 where exact and dictionary-encoded text: its values still hash as the run's."""
    a = results_folder(tmp_path / "a")
    m = a / "metrics" / T
    prov = provenance_record({"a": 1}, "tiny", cores=1, jobs=1, now=dt.datetime(2026, 1, 2))
    pack({T: m / "evaluation.csv"}, {T: m / "per_answer.parquet"}, {T: m / "per_question.parquet"},
         tmp_path / "pack", prov, metrics=["micro_mrr", "macro_mrr", "macro_hits@10"], manifest=a / "manifest.json")
    assert pq.read_schema(tmp_path / "pack" / "metrics" / T / "per_question.parquet").field("macro_hits@10").type \
        == pa.float32()
    assert (tmp_path / "pack" / "manifest.json").read_bytes() == (a / "manifest.json").read_bytes()
    cmp = reproduce(a, tmp_path / "pack")
    # the pack's verdicts come from its manifest (a pack has no findings.csv); models and dump from it too
    assert cmp.identical and len(cmp.artifacts) == 5 and cmp.verdicts is not None
    assert render(cmp).startswith("bit-identical (5 artifacts)\n")


# ---- digests ---------------------------------------------------------------------------------------------------
def test_model_digest_ignores_file_dates_and_dict_order_and_sees_one_bit(tmp_path):
    p1 = _checkpoint(tmp_path / "1" / "model.pt", _params())
    p2 = _checkpoint(tmp_path / "2" / "model.pt", _params(order=("rel", "ent")), trace=[{"seconds": 12.5}])
    os.utime(p2, (0, 0))
    assert p1.read_bytes() != p2.read_bytes()
    assert model_entry(p1)["sha256"] == model_entry(p2)["sha256"]
    assert model_entry(p1)["parameters"] == 5 * 3 + 2 * 3
    flipped = _params()
    flipped["rel"].view(torch.int32)[1, 2] ^= 1  # the last bit of one mantissa
    assert model_entry(_checkpoint(tmp_path / "3" / "model.pt", flipped))["sha256"] != model_entry(p1)["sha256"]


def test_array_digest_sees_dtype_shape_and_name():
    x = np.arange(6, dtype=np.int32)
    base = array_digest({"x": x})
    assert array_digest({"x": torch.from_numpy(x)}) == base  # numpy and torch alike
    assert array_digest({"x": x.reshape(2, 3)}) != base
    assert array_digest({"x": x.view(np.float32)}) != base
    assert array_digest({"y": x}) != base
    assert array_digest({"x": x.astype(">i4")}) == base  # byte order is not content


def test_column_digest_is_the_values_not_the_storage():
    run = pa.table({"System": ["A", "B", "A"], "m": [0.5, 0.25, 1.0], "e": np.array([1, 2, 3], np.int64)})
    packed = pa.table({"System": pa.array(["A", "B", "A"]).dictionary_encode(), "m": np.float32([0.5, 0.25, 1.0]),
                       "e": np.array([1, 2, 3], np.int32)})
    assert column_digests(run) == column_digests(packed)
    assert column_digests(run.to_pandas()) == column_digests(run)
    assert column_digests(pa.table({"m": [0.5, 0.25, 1.0 + 2**-52]}))["m"] != column_digests(run)["m"]


def test_manifest_step_gives_the_same_bytes_twice(tmp_path):
    a = results_folder(tmp_path / "a", manifest=False)
    m = a / "metrics" / T
    args = ([str(a / "models/Tiny/DistMult/model.pt")], [str(a / "scores" / T / "DistMult")],
            [str(m / "evaluation.csv")], str(a / "tables/findings.csv"))
    write_manifest_step(*args, out=str(a / "manifest.json"), config={"x": 1}, lock=str(tmp_path / "none.lock"))
    first = (a / "manifest.json").read_bytes()
    os.utime(a / "models/Tiny/DistMult/model.pt", (0, 0))
    write_manifest_step(*args, out=str(a / "manifest.json"), config={"x": 1}, lock=str(tmp_path / "none.lock"))
    assert (a / "manifest.json").read_bytes() == first
    record = read_manifest(a)
    assert sorted(record["artifacts"]) == ["metrics/Tiny-Test/evaluation.csv", "models/Tiny/DistMult/model.pt",
                                           f"scores/{T}/DistMult", "tables/findings.csv"]
    assert record["verdicts"] == {"4. Claim four holds": "no", "5. Claim five holds": "yes"}
    assert record["environment"]["lock"]["present"] is False
    assert record["environment"]["numerics"]["torch_threads"] == torch.get_num_threads()


# ---- environment -----------------------------------------------------------------------------------------------
def test_lock_pins_and_the_packages_that_differ(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text("# made by uv\nnumpy==2.1.0 \\\n    --hash=sha256:aa\nScikit_Learn==1.5.2 ; python_version >= '3.11'"
                    "\ntorch==2.13.0\nrequests>=2\n", encoding="utf-8")
    assert env_mod.read_lock(lock.read_text()) == {"numpy": "2.1.0", "scikit-learn": "1.5.2", "torch": "2.13.0"}
    rec = env_mod.lock_record(lock, installed={"numpy": "2.2.0", "torch": "2.13.0+cpu", "pandas": "2.2"})
    assert rec["differs"] == {"numpy": {"locked": "2.1.0", "installed": "2.2.0"},
                              "scikit-learn": {"locked": "1.5.2", "installed": None}}
    assert rec["pins"] == 3 and len(rec["sha256"]) == 64
    assert env_mod.lock_record(tmp_path / "absent.lock")["present"] is False


def test_cpu_kind_from_cpuinfo():
    text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14 96-Core Processor\nflags\t\t: sse avx2\n\n"
    info = env_mod.cpu_info(text + text.replace("0", "1"))
    assert info == {"model": "AMD EPYC 9R14 96-Core Processor", "vendor": "AuthenticAMD", "kind": "AMD EPYC",
                    "flags": ["avx2", "sse"]}
    assert env_mod.cpu_kind("Intel(R) Xeon(R) Processor", "GenuineIntel") == "Intel Xeon"
    assert env_mod.cpu_kind("Apple M3") == "other"


# ---- the shipped packs -----------------------------------------------------------------------------------------
def test_the_smoke_pack_against_itself_and_the_default_pack(capsys):
    smoke, default = ROOT / "reference" / "smoke", ROOT / "reference" / "default"
    if not (smoke / "metrics").is_dir() or not (default / "metrics").is_dir():
        pytest.skip("the reference packs are not in this checkout")
    rc, out = _run(capsys, smoke, "--against", smoke)
    # 4 test sets × (evaluation, per_answer, per_question) + runs/FB-Test-S-C/top10, and the packed run's trained
    # models and score dumps by its manifest.json's digests (27)
    assert (rc, out[0]) == (0, "bit-identical (40 artifacts)")
    rc, out = _run(capsys, smoke, "--against", default)
    assert rc == 1
    assert "the test sets differ in size (FB-Test-O, FB-Test-S, FB-Test-S-C, WN18RR)" in out[0]
    assert any(line.startswith("configuration: differs") for line in out)


def test_testsets_restricts_the_comparison_and_names_a_missing_one(tmp_path):
    # a results folder holding another configuration's test set too (CI's tiny run beside the smoke run) is
    # identical on the test sets both hold when asked for those; a test set one side lacks is one line
    from kgeval.errors import InputError

    ours, theirs = results_folder(tmp_path / "a"), results_folder(tmp_path / "b")
    extra = ours / "metrics" / "Other-Test"
    extra.mkdir(parents=True)
    (extra / "evaluation.csv").write_text((ours / "metrics" / "Tiny-Test" / "evaluation.csv").read_text())
    assert not reproduce(ours, theirs).identical
    assert reproduce(ours, theirs, testsets=["Tiny-Test"]).identical
    with pytest.raises(InputError, match="holds no test set 'Other-Test'"):
        reproduce(ours, theirs, testsets=["Other-Test"])
    with pytest.raises(InputError, match="--testsets: name at least one test set"):
        reproduce(ours, theirs, testsets=[])  # would compare the models alone and call that identical


def test_hostile_manifests_and_dumps_are_one_line(tmp_path, capsys):
    """A manifest of NUL bytes is refused at its first block, not parsed whole (kgeval.limits); a dump whose
    meta.json lists a file outside its folder is refused before anything is read there."""
    from kgeval.errors import InputError
    from kgeval.reproduce.manifest import dump_entry

    a, b = results_folder(tmp_path / "a"), results_folder(tmp_path / "b")
    (b / "manifest.json").write_bytes(b"\x00" * (1 << 20))
    rc = main(["reproduce", str(a), "--against", str(b)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == [f"kgeval: error: {b / 'manifest.json'}:1: holds a NUL byte: not a text file"]
    # a manifest that is a folder is not left out in silence; a table holding a NUL byte is not a table
    (b / "manifest.json").unlink()
    (b / "manifest.json").mkdir()
    with pytest.raises(InputError, match="not a file: a manifest is the JSON file the run wrote"):
        reproduce(a, b)
    c = results_folder(tmp_path / "c")
    (c / "metrics" / T / "evaluation.csv").write_bytes(b"System,micro_mrr\nA,\0\n")
    with pytest.raises(InputError, match="holds a NUL byte"):
        reproduce(c, a)
    dump = a / "scores" / T / "DistMult"
    for name in ("../../metrics/Tiny-Test/per_answer.parquet", "/etc/hostname.npy", ".."):
        (dump / "meta.json").write_text(json.dumps({"files": {name: "x"}}), encoding="utf-8")
        with pytest.raises(InputError, match="not a file name of the dump's folder"):
            dump_entry(dump)
