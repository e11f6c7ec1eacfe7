"""Shared fixtures: a synthetic dataset, and the real FB15k-237/WN18RR data when a mirror folder is present."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from kgeval.data.kg import KnowledgeGraph, build_kg
from kgeval.data.synth import SynthSpec, synthesize

ROOT = Path(__file__).resolve().parents[1]
# tiny models train faster on one thread than on two (and the suite may share the machine)
torch.set_num_threads(1)


def mirror_folder() -> Path | None:
    # the variable only: the library reads it too, so a mirror found elsewhere would un-skip tests it then fails
    cand = os.environ.get("KGEVAL_MIRROR")
    if cand and (Path(cand) / "TimDettmers/ConvE/FB15k-237.tar.gz").is_file():
        return Path(cand)
    return None


MIRROR = mirror_folder()
needs_mirror = pytest.mark.skipif(MIRROR is None, reason="no data mirror (set KGEVAL_MIRROR)")
SC = "zhouying20/kgc-sparsity/data/"



@pytest.fixture(scope="module")
def one_torch_thread():
    """One intra-op thread for a module of tiny-model tests, whatever an earlier test set (restored after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def synth_dir(tmp_path_factory) -> dict[str, Path]:
    return synthesize(tmp_path_factory.mktemp("synth"), seed=1, spec=SynthSpec())


@pytest.fixture(scope="session")
def synth_kg(synth_dir) -> KnowledgeGraph:
    return build_kg("Synth", synth_dir["train"], synth_dir["valid"], synth_dir["test"], names=synth_dir["names"],
                    categories_dir=synth_dir["categories"], relation_types=synth_dir["relation_types"],
                    entity_types=synth_dir["entity_types"])


@pytest.fixture(scope="session")
def fb_files(tmp_path_factory) -> dict[str, Path]:
    if MIRROR is None:
        pytest.skip("no data mirror")
    from kgeval.data.archive import safe_extract

    out = tmp_path_factory.mktemp("fb")
    safe_extract(MIRROR / "TimDettmers/ConvE/FB15k-237.tar.gz", out)
    files = {s: out / f"{s}.txt" for s in ("train", "valid", "test")}
    files.update({
        "names": MIRROR / SC / "FB-Test-O/context/mid2name.txt",
        "categories": MIRROR / SC / "FB-Test-O/type_information",
        "relation_types": MIRROR / SC / "FB-Test-O/type_information/relation_specific.txt",
        "sample_idxs": MIRROR / SC / "FB-Test-S/sample_idxs.txt",
        "samples": MIRROR / SC / "FB-Test-S/samples.txt",
        "annotations": MIRROR / SC / "FB-Test-S-C/annotations.txt",
        "pooling_depth": MIRROR / SC / "FB-Test-S-C/supplementary/pooling_depth.txt",
        "queries_O": MIRROR / SC / "FB-Test-O/trec_queries.txt",
        "queries_SC": MIRROR / SC / "FB-Test-S-C/trec_queries.txt",
    })
    return files


@pytest.fixture(scope="session")
def fb_kg(fb_files) -> KnowledgeGraph:
    return build_kg("FB15k-237", fb_files["train"], fb_files["valid"], fb_files["test"], names=fb_files["names"],
                    categories_dir=fb_files["categories"], relation_types=fb_files["relation_types"])


def tiny_kg() -> KnowledgeGraph:
    """Five entities, two relations; a test-only entity ``e`` (id 4)."""
    ents = ["a", "b", "c", "d", "e"]
    rels = ["r", "s"]
    train = np.array([[0, 0, 1], [0, 0, 2], [1, 1, 2]])
    valid = np.array([[2, 0, 3]])
    test = np.array([[0, 0, 3], [3, 1, 4]])
    return KnowledgeGraph("tiny", ents, rels, {"train": train, "valid": valid, "test": test})


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, synth_dir, synth_kg):
    """A workflow folder whose data stage has run on the synthetic dataset (Synth-Test-O, -S, -S-C)."""
    from kgeval.data.steps import build_testset

    w = tmp_path_factory.mktemp("work")
    (w / "config").mkdir()
    for f in ("tiny.yaml", "schema.yaml", "resources.tsv"):
        shutil.copy(ROOT / "config" / f, w / "config" / f)
    kg_path = w / "resources/datasets/Synth/kg.npz"
    kg_path.parent.mkdir(parents=True)
    synth_kg.save(kg_path)
    t = w / "resources/testsets"
    t.mkdir(parents=True)
    for name, kind, files, seed in (
            ("Synth-Test-O", "full", {}, None),
            ("Synth-Test-S", "sample", {"sample_idxs": synth_dir["sample_idxs"], "samples": synth_dir["samples"]},
             None),
            ("Synth-Test-S-C", "pooled", {"annotations": synth_dir["annotations"],
                                          "pooling_depth": synth_dir["pooling_depth"]}, t / "Synth-Test-S.tsv")):
        build_testset(kg_path, name, kind, t / f"{name}.tsv", t / f"{name}.questions.tsv",
                      {k: str(v) for k, v in files.items()}, seed_set=seed)
    return w


@pytest.fixture(scope="module")
def pooled(synth_kg, synth_dir, tmp_path_factory):
    """Synth-Test-S and -S-C with depth-30 dumps of three random scorers (the third with ties)."""
    from helpers import random_scorer, run_engine

    from kgeval.data.testsets import pooled_test, sample_test
    from kgeval.scores.dumps import load_dump, save_ranking

    seed = sample_test(synth_kg, "S", synth_dir["sample_idxs"], synth_dir["samples"])
    sc = pooled_test(synth_kg, "SC", seed, synth_dir["annotations"], synth_dir["pooling_depth"])
    root = tmp_path_factory.mktemp("dumps")
    runs, sc_dumps = {}, {}
    for i, name in enumerate(["A", "B", "C"]):
        scorer = random_scorer(synth_kg, seed=10 + i, ties=(i == 2))
        save_ranking(run_engine(synth_kg, seed, scorer, k=30), root / f"S_{name}", {"model": name})
        save_ranking(run_engine(synth_kg, sc, scorer, k=30), root / f"SC_{name}", {"model": name})
        runs[name] = load_dump(root / f"S_{name}")
        sc_dumps[name] = load_dump(root / f"SC_{name}")
    return seed, sc, runs, sc_dumps


@pytest.fixture(scope="session")
def installed_home(tmp_path_factory) -> Path:
    """One KGEVAL_HOME per test process for the tests that use kgeval as an installed wheel would (no checkout):
    the real test sets are built into it from the mirror once, not once per test."""
    return tmp_path_factory.mktemp("kgeval-home")


@pytest.fixture(autouse=True)
def _no_build_into_the_users_cache(installed_home, monkeypatch) -> None:
    """Outside a workflow folder kgeval builds into $KGEVAL_HOME whichever way it is installed: a test that
    names none builds into this session's, never into the user's ~/.cache/kgeval."""
    if not os.environ.get("KGEVAL_HOME"):
        monkeypatch.setenv("KGEVAL_HOME", str(installed_home))


@pytest.fixture
def as_installed(installed_home, tmp_path, monkeypatch) -> Path:
    """kgeval as installed from a wheel: no checkout to run the workflow in (data built into ``installed_home``
    by kgeval.data.cache), the working folder an empty temporary one. Returns the working folder."""
    from kgeval import api

    monkeypatch.setattr(api.data, "_repo_root", lambda: None)
    monkeypatch.setenv("KGEVAL_HOME", str(installed_home))
    work = tmp_path / "anywhere"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.fixture(scope="module")
def nations_batch():
    """PyKEEN's Nations triples factory and 16 random (h, r, t) rows of it: the batch on which the translational
    and the KP-set models are compared with PyKEEN."""
    pytest.importorskip("pykeen")
    from pykeen.datasets import Nations

    tf = Nations().training
    gen = torch.Generator().manual_seed(0)
    B = 16
    hrt = torch.stack([torch.randint(0, tf.num_entities, (B,), generator=gen),
                       torch.randint(0, tf.num_relations, (B,), generator=gen),
                       torch.randint(0, tf.num_entities, (B,), generator=gen)], 1)
    return tf, hrt
