"""Workflow steps of the data stage: fetch, extract, build the knowledge graph and the test sets, Table 1."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from ..io import write_json, write_table
from .archive import safe_extract
from .download import fetch, resolve_mirror
from .kg import SPLITS, KnowledgeGraph, build_kg
from .manifest import read_manifest
from .questions import adopt_published_queries, save_questions
from .testsets import TestSet, full_test, pooled_test, sample_test
from .tsv import normalise_triples

log = logging.getLogger(__name__)


def download_resource(manifest: str | Path, mirror_path: str, out: str | Path, mirror: str | None = None,
                      prefer_mirror: bool = True, timeout: float = 30.0) -> None:
    res = read_manifest(manifest)[mirror_path]
    source = fetch(res, out, mirror=resolve_mirror(mirror), prefer_mirror=prefer_mirror, timeout=timeout)
    log.info("%s: %d bytes from %s, SHA-256 %s verified", mirror_path, res.size, source, res.sha256)


def extract_splits(archive: str | Path, out_dir: str | Path, outputs: dict[str, str]) -> None:
    """Extract the three split files of a dataset archive and normalise them (LF, stripped, de-duplicated)."""
    out_dir = Path(out_dir)
    staging = out_dir / ".raw"
    files = safe_extract(archive, staging)
    by_name = {p.name: p for p in files}
    for split in SPLITS:
        src = by_name.get(f"{split}.txt")
        if src is None:
            from ..errors import InputError
            raise InputError(archive, None, f"archive has no {split}.txt")
        n = normalise_triples(src, outputs[split])
        log.info("%s: %d triples", split, n)
    for p in files:
        p.unlink(missing_ok=True)


def prepare_kg(name: str, files: dict[str, str], out: str | Path, summary: str | Path) -> None:
    """Build the knowledge graph of a dataset from its role files and save it with a summary."""
    categories = files.get("categories")
    kg = build_kg(name, files["train"], files["valid"], files["test"], names=files.get("names"),
                  categories_dir=Path(categories).parent if categories else None,
                  relation_types=files.get("relation_types"), entity_types=files.get("entity_types"))
    kg.save(out)
    train_ents = set(kg.splits["train"][:, [0, 2]].ravel().tolist())
    test = kg.splits["test"]
    unseen = sorted(set(test[:, [0, 2]].ravel().tolist()) - train_ents)
    info = {
        "dataset": name, "entities": kg.num_entities, "relations": kg.num_relations,
        **{f"{s}_triples": int(len(kg.splits[s])) for s in SPLITS},
        "test_entities_unseen_in_train": len(unseen),
        "test_triples_with_unseen_entity": int(sum(1 for h, _, t in test.tolist()
                                                   if h not in train_ents or t not in train_ents)),
        "categories": {c: kg.relation_category.count(c) for c in sorted(set(kg.relation_category))},
        "categories_source": "files" if categories else "inferred (tph/hpt > 1.5)",
        "fingerprint": kg.fingerprint(),
    }
    write_json(summary, info)
    log.info("%s: %s", name, info)


def build_testset(kg_path: str | Path, name: str, kind: str, out: str | Path, questions_out: str | Path,
                  files: dict[str, str],
                  seed_set: str | Path | None = None, queries: str | Path | None = None,
                  summary: str | Path | None = None) -> None:
    """Build one test set (kind: full, sample or pooled) and save its judgments."""
    kg = KnowledgeGraph.load(kg_path)
    if kind == "full":
        ts = full_test(kg, name)
    elif kind == "sample":
        ts = sample_test(kg, name, files["sample_idxs"], files.get("samples"))
    elif kind == "pooled":
        seed = TestSet.load(seed_set, kg)
        ts = pooled_test(kg, name, seed, files["annotations"], files["pooling_depth"])
    else:
        raise ValueError(f"unknown test-set kind {kind!r}")
    questions = ts.questions(kg)
    if queries:
        questions = adopt_published_queries(questions, queries, kg)
        log.info("%s: questions equal the published %s (its ids adopted)", name, queries)
    ts.save(out, kg)
    save_questions(questions, questions_out, kg)
    info = {"test_set": name, **ts.counts(), "questions": len(questions), "max_depth": ts.max_depth}
    if kind == "pooled":
        info["questions_by_depth"] = {d: len(ts.at_depth(d).questions(kg)) for d in range(ts.max_depth + 1)}
        info["new_positives_by_depth"] = {d: int(((ts.depth > 0) & (ts.depth <= d) & (ts.label == 1)).sum())
                                          for d in range(1, ts.max_depth + 1)}
    if summary:
        write_json(summary, info)
    log.info("%s", info)


def table1(testsets: dict[str, str], kgs: dict[str, str], csv: str, md: str, tex: str) -> pd.DataFrame:
    """Table 1: #triples, #positives and #negatives per test set."""
    rows = []
    cache: dict[str, KnowledgeGraph] = {}
    for name, path in testsets.items():
        kg = cache.setdefault(kgs[name], KnowledgeGraph.load(kgs[name]))
        ts = TestSet.load(path, kg, name)
        rows.append({"Test Set": name, **ts.counts()})
    df = pd.DataFrame(rows)
    write_table(df, csv, md, tex, caption="Table 1: judged triples of each test set.", label="tab:testsets")
    return df


def verify_resources(manifest: str | Path, files: list[str], out: str | Path, entries: list[str]) -> pd.DataFrame:
    """Re-hash every fetched manifest file and write the table of verified files; ``entries`` are the files'
    manifest paths (``mirror_path``), in the order of ``files``."""
    from ..errors import ChecksumError
    from ..io import set_aside, sha256_file, write_csv
    from .download import verify

    resources = read_manifest(manifest)
    rows = []
    if len(entries) != len(files):
        raise ValueError(f"{len(files)} files but {len(entries)} manifest entries")
    for path, rel in zip(files, entries):
        res = resources[rel]
        try:
            verify(path, res)
        except ChecksumError as exc:  # a damaged download: set aside, so that the next run fetches it again
            aside = set_aside(path, str(exc))
            raise ChecksumError(f"{path} (set aside as {aside.name}, safe to delete; a rerun fetches it again)",
                                exc.expected, exc.actual) from exc
        rows.append({"file": rel, "bytes": res.size, "sha256": sha256_file(path), "verified": True})
    df = pd.DataFrame(rows)
    write_csv(df, out)
    return df


def synthesize_dataset(spec: dict, outputs: dict[str, str]) -> None:
    """Generate a synthetic dataset (``kgeval synth``) into the folder of the rule's outputs."""
    from .synth import SynthSpec, synthesize

    params = dict(spec)
    seed = params.pop("seed", 0)
    folder = Path(outputs["train"]).parent
    paths = synthesize(folder, seed=seed, spec=SynthSpec(**params))
    if not params.get("annotations", True):  # keep the rule's outputs complete: empty placeholders
        for role in ("sample_idxs", "samples", "annotations", "pooling_depth"):
            if role not in paths:
                Path(outputs[role]).write_text("")
