"""Sub-commands of the data stage: build-kg, synth, fetch, validate-config."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io import OutputStage
from .options import (
    SchemaNumber,
    command,
    name_type,
    out_option,
    resolve_out,
)


# ---- data (kgeval.data) ---------------------------------------------------------------------------------------
@command("build-kg", "build a knowledge-graph file (kg.npz) from split files. Reads train.txt, valid.txt and "
                     "test.txt of FOLDER (tab-separated head, relation, tail), with optional entity names and "
                     "relation categories, and writes the compressed graph every later step loads.",
         "kgeval build-kg data/FB15k-237 --out FB15k-237.kg.npz --names data/mid2name.txt")
def _build_kg(p: argparse.ArgumentParser):
    p.add_argument("folder", help="folder with train.txt, valid.txt, test.txt (and optional side files)")
    out_option(p, "the knowledge graph file to write (kg.npz)")
    p.add_argument("--name", type=name_type, default=None, help="dataset name (default: the folder's name)")
    p.add_argument("--names", default=None, help="entity id to name file (mid2name.txt)")
    p.add_argument("--categories", default=None, help="folder with one_to_one.txt ... many_to_many.txt")

    def run(a):
        from ..data.kg import build_kg

        out = resolve_out(p, a)
        f = Path(a.folder)
        splits = [f / "train.txt", f / "valid.txt", f / "test.txt"]
        with OutputStage("build-kg", inputs=[*splits, a.names, a.categories]) as stage:
            tmp = stage.path(out)
            kg = build_kg(a.name or f.resolve().name, *splits, names=a.names, categories_dir=a.categories)
            kg.save(tmp)
        print(f"{out}\t{kg.num_entities} entities\t{kg.num_relations} relations\t{kg.fingerprint()}")
        return 0

    return run


@command("synth", "generate a seeded synthetic knowledge graph with planted structure. Writes the files of a "
                  "published dataset (splits, names, relation categories and, unless --no-annotations, a sampled "
                  "test set with judged pools) into --out; the sizes obey the bounds of config/schema.yaml's "
                  "synth block.",
         "kgeval synth --out data/Synth --entities 500 --relations 24 --seed 1")
def _synth(p: argparse.ArgumentParser):
    out_option(p)
    p.add_argument("--seed", type=SchemaNumber("synth", "seed"), default=0, help="random seed")
    p.add_argument("--entities", type=SchemaNumber("synth", "num_entities"), default=250, help="number of entities")
    p.add_argument("--relations", type=SchemaNumber("synth", "num_relations"), default=16,
                   help="number of relations")
    p.add_argument("--no-annotations", action="store_true", help="no sampled test set and judged pools")

    def run(a):
        from ..data.synth import SynthSpec, check_size, synthesize

        spec = SynthSpec(num_entities=a.entities, num_relations=a.relations, annotations=not a.no_annotations)
        check_size(spec)
        with OutputStage("synth", folder=resolve_out(p, a)) as stage:
            paths = synthesize(stage.root, a.seed, spec)
        for role, path in paths.items():
            print(f"{role}\t{stage.final(path)}")
        return 0

    return run


@command("fetch", "download every file of the manifest, from its pinned URL or a mirror folder, verifying each "
                  "SHA-256. Every file is fetched again; the files replace those in --out together, once all are "
                  "verified.",
         "KGEVAL_MIRROR=/data/mirror kgeval fetch --out resources/downloads")
def _fetch(p: argparse.ArgumentParser):
    p.add_argument("--manifest", default="config/resources.tsv", help="the manifest (mirror_path, url, sha256, …)")
    p.add_argument("--out", default="resources/downloads", help="folder to download into")
    p.add_argument("--mirror", default=None, help="mirror folder (default: $KGEVAL_MIRROR)")
    p.add_argument("--prefer-url", action="store_true", help="try the URL before the mirror")

    def run(a):
        from ..data.download import fetch, resolve_mirror
        from ..data.manifest import read_manifest
        from ..progress import Progress

        with OutputStage("fetch", inputs=[a.manifest], folder=a.out) as stage:
            # a folder named on the command line beats $KGEVAL_MIRROR (which beats the config key)
            mirror = Path(a.mirror).expanduser() if a.mirror else resolve_mirror(None)
            manifest = read_manifest(a.manifest)
            sizes = [res.size for res in manifest.values()]
            # bytes when the manifest pins every size; a failed source's partial bytes count too (rare)
            total = sum(sizes) if all(size >= 0 for size in sizes) else None
            with Progress(total, "fetch", unit="B") as progress:
                for path, res in manifest.items():
                    source = fetch(res, stage.path(Path(a.out) / path), mirror=mirror,
                                   prefer_mirror=not a.prefer_url, progress=progress.update)
                    progress.write(f"{path}\t{source}\t{res.sha256}")
        return 0

    return run


@command("validate-config", "check a config file against the schema and its cross-references: types, bounds, "
                            "unknown keys (with the closest valid one), duplicate keys, references between test "
                            "sets and datasets, model hyperparameters, and that every outside system's files "
                            "exist.",
         "kgeval validate-config config/my.yaml")
def _validate(p: argparse.ArgumentParser):
    p.add_argument("config", help="a config YAML file")
    p.add_argument("--schema", default="config/schema.yaml", help="the config schema")

    def run(a):
        from ..config import check_external_files, load_config_file, validate_config

        config = validate_config(load_config_file(a.config), a.schema)
        check_external_files(config, built=("resources/", "results/"))  # the workflow's own outputs
        print(f"{a.config}: valid")
        return 0

    return run


