"""kgeval outside a checkout (issue 44): the default files found where an installed wheel keeps them, and the data
of a test set built without the workflow (kgeval.data.cache) equal to the data stage's own files.
tests/wheel_check.py runs the installed wheel itself (a timed part of tests/check.sh)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT

from kgeval import api, home
from kgeval.data.cache import DataBuilder
from kgeval.data.kg import KnowledgeGraph

SC = "Synth-Test-S-C"


def test_default_files_prefer_the_working_folder_then_the_installed_copy(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert home.default_file("config/schema.yaml") == ROOT / "config/schema.yaml"  # the checkout's
    packaged = tmp_path / "wheel" / "_data"
    (packaged / "config").mkdir(parents=True)
    (packaged / "config" / "schema.yaml").write_text("x")
    monkeypatch.setattr(home, "PACKAGED", packaged)
    assert home.default_file("config/schema.yaml") == packaged / "config/schema.yaml"  # the wheel's
    assert home.default_file("config/nope.yaml") == Path("config/nope.yaml")  # named as given in its error
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "schema.yaml").write_text("y")
    assert home.default_file("config/schema.yaml") == Path("config/schema.yaml")  # the user's own
    monkeypatch.setenv("KGEVAL_HOME", str(tmp_path / "h"))
    assert home.data_home() == tmp_path / "h" / "resources"
    monkeypatch.delenv("KGEVAL_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert home.cache_home() == tmp_path / "xdg" / "kgeval"


def test_the_builder_makes_the_data_stages_files(workdir, tmp_path):
    """Synth-Test-S-C built by DataBuilder (synthesize, prepare_kg, build_testset of its seed set and of itself)
    equals the workflow folder's files, which conftest builds from the same synthetic dataset by hand."""
    from kgeval.config import load_config_file, validate_config

    cfg = validate_config(home.locate_defaults(load_config_file(ROOT / "config/tiny.yaml")),
                          ROOT / "config/schema.yaml", models=False)
    root = tmp_path / "resources"
    files = DataBuilder(cfg, cfg["manifest"], root).build_testset(SC)
    assert files["kg"] == root / "datasets/Synth/kg.npz"
    ref = workdir / "resources"
    assert KnowledgeGraph.load(files["kg"]).fingerprint() == KnowledgeGraph.load(ref / "datasets/Synth/kg.npz"
                                                                                  ).fingerprint()
    for name in (f"{SC}.tsv", f"{SC}.questions.tsv", "Synth-Test-S.tsv"):
        assert (root / "testsets" / name).read_bytes() == (ref / "testsets" / name).read_bytes(), name
    assert not list(root.glob(".staging-*"))  # every step's staging folder is gone
    stamp = files["tsv"].stat().st_mtime_ns
    DataBuilder(cfg, cfg["manifest"], root).build_testset(SC)  # built once
    assert files["tsv"].stat().st_mtime_ns == stamp


def test_load_testset_without_a_workflow_builds_into_the_user_cache(workdir, tmp_path, monkeypatch):
    """An installed wheel (no checkout): load_testset in an empty folder builds only what the test set needs into
    KGEVAL_HOME, once, and reads the same judgments as in the workflow folder."""
    monkeypatch.setattr(api.data, "_repo_root", lambda: None)
    monkeypatch.setenv("KGEVAL_HOME", str(tmp_path / "cache"))
    user = tmp_path / "anywhere"
    user.mkdir()
    shutil.copy(ROOT / "config/tiny.yaml", tmp_path / "tiny.yaml")  # a user's config, with no manifest beside
    monkeypatch.chdir(user)
    sc = api.load_testset(SC, config=tmp_path / "tiny.yaml")
    assert sc.files["tsv"] == tmp_path / "cache/resources/testsets" / f"{SC}.tsv"
    assert sorted(p.name for p in (tmp_path / "cache/resources/testsets").glob("*.tsv")) == [
        "Synth-Test-S-C.questions.tsv", "Synth-Test-S-C.tsv", "Synth-Test-S.questions.tsv", "Synth-Test-S.tsv"]
    assert list(user.iterdir()) == []  # nothing written into the working folder
    there = api.load_testset(SC, workdir=workdir, config="config/tiny.yaml")
    pd.testing.assert_frame_equal(sc.qrels, there.qrels)
    pd.testing.assert_frame_equal(sc.questions, there.questions)


_FIRST_CALL = """
import sys
from kgeval import api, home
assert home.checkout_root() is not None, "not an editable-style import"  # the checkout's own src/
sc = api.load_testset("Synth-Test-S-C", config=sys.argv[1])
print(len(sc.qrels), sc.files["tsv"])
"""


def test_two_first_calls_from_an_empty_folder_build_once_into_kgeval_home(tmp_path):
    """Issue 60, item 4: an editable install (the checkout's src/ imported) used from an empty folder builds into
    $KGEVAL_HOME, not into the folder (before: resources/, logs/ and .snakemake/ appeared there); two such first
    calls at once both succeed, one building under the cache's lock and the other using what it built (before:
    both ran snakemake in the folder and one failed, naming a log the other overwrote)."""
    import os
    import subprocess
    import sys

    user = tmp_path / "anywhere"
    user.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "KGEVAL_HOME": str(tmp_path / "cache")}
    procs = [subprocess.Popen([sys.executable, "-c", _FIRST_CALL, str(ROOT / "config/tiny.yaml")], cwd=user,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    tsv = tmp_path / "cache/resources/testsets" / f"{SC}.tsv"
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.split() == [str(len(api.load_testset(SC, config=ROOT / "config/tiny.yaml",
                                                         workdir=tmp_path / "cache").qrels)), str(tsv)]
    assert list(user.iterdir()) == []  # nothing written where the user stands
    assert not list((tmp_path / "cache/resources").glob(".staging-*"))


def test_a_workflow_folder_builds_under_the_lock_and_each_process_names_its_own_log(tmp_path, monkeypatch):
    """In a workflow folder the data are built by snakemake: a second process waits for the first's build under
    the lock of resources/ and uses its files instead of running snakemake beside it; a failed build names a log
    of this process alone (before: one logs/kgeval-api-build.log that a concurrent build overwrote)."""
    import fcntl
    import os
    import threading

    from kgeval.data.cache import LOCK

    (tmp_path / "Snakefile").write_text("")
    (tmp_path / "resources").mkdir()
    targets = [tmp_path / "resources/testsets/T.tsv"]
    runs: list = []
    monkeypatch.setattr(api.data, "_build_with_workflow", lambda *args: runs.append(args))
    fd = os.open(tmp_path / "resources" / LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another process building
    worker = threading.Thread(target=api.data.build_data, args=(tmp_path, tmp_path / "c.yaml", targets))
    worker.start()
    worker.join(2.0)
    assert worker.is_alive() and runs == []  # waiting
    targets[0].parent.mkdir()
    targets[0].write_text("built by the other process\n")
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    worker.join(60)
    assert not worker.is_alive() and runs == []  # found built: no second snakemake
    assert api.data.build_log(tmp_path) == tmp_path / "logs" / f"kgeval-api-build.{os.getpid()}.log"
    monkeypatch.undo()
    monkeypatch.setattr(api.data, "_follow", lambda cmd, workdir, fh, log: fh.write("failed\n") and 1)
    with pytest.raises(api.DataUnavailableError, match=rf"log: {tmp_path}/logs/kgeval-api-build\.{os.getpid()}\.log"):
        api.data.build_data(tmp_path, tmp_path / "c.yaml", [tmp_path / "resources/testsets/U.tsv"])
    assert (tmp_path / "logs" / f"kgeval-api-build.{os.getpid()}.log").read_text() == "failed\n"


def test_the_data_root_is_the_cache_outside_a_workflow_folder_whatever_the_install(tmp_path, monkeypatch):
    """The checkout kgeval's code runs from (an editable install) no longer makes every folder a workflow folder:
    the data root is the folder itself only with a Snakefile or a resources/ in it."""
    monkeypatch.setenv("KGEVAL_HOME", str(tmp_path / "cache"))
    assert api.data._repo_root() == ROOT  # these tests import the checkout's src/
    assert api.data._data_root(tmp_path) == tmp_path / "cache"
    assert api.data.build_log(tmp_path / "cache") is None  # built by kgeval.data.cache, under its lock
    import argparse

    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)  # kgeval evaluate's and sample-plan's --resources default
    args = argparse.Namespace(config=None, schema=None, templates=None, resources="resources")
    home.packaged_defaults(args)
    assert args.resources == str(tmp_path / "cache" / "resources")
    (tmp_path / "resources").mkdir()
    assert api.data._data_root(tmp_path) == tmp_path
    assert api.data._data_root(ROOT) == ROOT


def test_a_failed_build_names_the_mirror(tmp_path, monkeypatch):
    monkeypatch.setattr(api.data, "_repo_root", lambda: None)
    monkeypatch.setenv("KGEVAL_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("KGEVAL_MIRROR", str(tmp_path / "no-mirror"))
    monkeypatch.chdir(tmp_path)
    import kgeval.data.download as download

    def offline(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(download, "_from_url", offline)
    with pytest.raises(api.DataUnavailableError, match=r"could not build .* set KGEVAL_MIRROR"):
        api.load_testset("WN18RR")
    assert not (tmp_path / "cache/resources/datasets").exists()


def test_kgeval_evaluate_without_a_checkout_builds_into_the_cache(workdir, tmp_path, monkeypatch, capsys):
    """kgeval evaluate from an installed wheel in an empty folder: the data are built into KGEVAL_HOME by the
    data stage's functions (no snakemake), nothing but --out is written in the folder, and the values equal the
    same run evaluated in the workflow folder."""
    from helpers import random_scorer, write_run

    from kgeval.cli import main as cli_main
    from kgeval.data.questions import load_questions

    kg = KnowledgeGraph.load(workdir / "resources/datasets/Synth/kg.npz")
    qs = load_questions(workdir / "resources/testsets/Synth-Test-O.questions.tsv", kg)
    run = tmp_path / "Synth-Test-O.run"
    write_run(run, kg, qs, random_scorer(kg, seed=5, ties=False), depth=20)
    monkeypatch.setattr(api.data, "_repo_root", lambda: None)
    monkeypatch.setattr(home, "checkout_root", lambda: None)
    packaged = tmp_path / "site-packages" / "kgeval" / "_data"  # the wheel's copy (setup.py's PACKAGE_DATA)
    for rel in ("config/config.yaml", "config/schema.yaml", "config/resources.tsv", "annotations/templates.tsv"):
        (packaged / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, packaged / rel)
    monkeypatch.setattr(home, "PACKAGED", packaged)
    monkeypatch.setenv("KGEVAL_HOME", str(tmp_path / "cache"))
    user = tmp_path / "anywhere"
    user.mkdir()
    monkeypatch.chdir(user)
    argv = ["evaluate", str(run), "--name", "Mine", "--dataset", "Synth", "--testsets", "Synth-Test-O", "--out",
            "eval", "--config", str(ROOT / "config/tiny.yaml"), "--bootstrap", "20", "--results", "nowhere"]
    assert cli_main(argv) == 0
    assert (tmp_path / "cache/resources/testsets/Synth-Test-O.tsv").is_file()
    assert sorted(p.name for p in user.iterdir()) == ["eval"]
    got = pd.read_csv(user / "eval/evaluation.csv").iloc[0]
    there = api.evaluate(run, api.load_testset("Synth-Test-O", workdir=workdir, config="config/tiny.yaml"),
                         name="Mine", bootstrap=20)
    assert got["micro_mrr"] == pytest.approx(there.table["micro_mrr"].iloc[0], abs=1e-10)
    assert got["macro_mrr"] == pytest.approx(there.table["macro_mrr"].iloc[0], abs=1e-10)


def test_the_builders_paths_are_the_rules(tmp_path):
    """DataBuilder writes where the data rules do: the graph and test-set files of api.data_files (checked against
    data.smk by test_api), and the role files where common.smk's role_path puts them (paths.smk's templates)."""
    cfg = {"datasets": {"D": {"source": "manifest", "archive": "a.tar.gz", "files": {"names": "x/names.txt"}},
                        "S": {"source": "synth"}}, "test_sets": {}}
    b = DataBuilder(cfg, "manifest.tsv", tmp_path / "resources")
    files = api.data_files(tmp_path, "D", "T")
    assert b.kg_path("D") == files["kg"]
    assert b.testset_paths("T")["tsv"] == files["tsv"]
    assert b.testset_paths("T")["questions"] == files["questions"]
    paths = (ROOT / "workflow/rules/paths.smk").read_text()
    for spelled in ('SPLIT = "resources/datasets/{dataset}/splits/{split}.txt"',
                    'DOWNLOAD = "resources/downloads/{path}"', 'SYNTH_FILE = "resources/synth/{dataset}/{file}"'):
        assert spelled in paths, spelled  # the templates of common.smk's role_path, as the three lines below
    assert b._role_path("D", "train") == tmp_path / "resources/datasets/D/splits/train.txt"
    assert b._role_path("D", "names") == tmp_path / "resources/downloads/x/names.txt"
    assert b._role_path("S", "names") == tmp_path / "resources/synth/S/mid2name.txt"
