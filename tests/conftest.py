"""Shared fixtures: a synthetic dataset, and the real FB15k-237/WN18RR data when a mirror folder is present."""

from __future__ import annotations

import os
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
    for cand in (os.environ.get("KGEVAL_MIRROR"), ROOT.parent / "shared" / "data"):
        if cand and (Path(cand) / "TimDettmers/ConvE/FB15k-237.tar.gz").is_file():
            return Path(cand)
    return None


MIRROR = mirror_folder()
needs_mirror = pytest.mark.skipif(MIRROR is None, reason="no data mirror (set KGEVAL_MIRROR)")
SC = "zhouying20/kgc-sparsity/data/"


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
