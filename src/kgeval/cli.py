"""The ``kgeval`` command line, for use outside Snakemake.

Each sub-command calls the same package function as the corresponding workflow rule.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .errors import KgevalError
from .progress import enable_bars
from .workflow import setup_logging

Runner = Callable[[argparse.Namespace], int]
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], Runner], str]] = {}


def command(name: str, help: str):
    """Register a sub-command: the decorated function adds its arguments to the parser and returns the
    function that runs it."""

    def deco(add_args: Callable[[argparse.ArgumentParser], Runner]):
        COMMANDS[name] = (add_args, help)
        return add_args

    return deco


def _synth(p: argparse.ArgumentParser):
    p.add_argument("out", help="output folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--entities", type=int, default=250)
    p.add_argument("--relations", type=int, default=16)
    p.add_argument("--no-annotations", action="store_true", help="no sampled test set and judged pools")

    def run(a):
        from .data.synth import SynthSpec, synthesize

        paths = synthesize(a.out, a.seed, SynthSpec(num_entities=a.entities, num_relations=a.relations,
                                                    annotations=not a.no_annotations))
        for role, path in paths.items():
            print(f"{role}\t{path}")
        return 0

    return run


def _fetch(p: argparse.ArgumentParser):
    p.add_argument("--manifest", default="config/resources.tsv")
    p.add_argument("--out", default="resources/downloads")
    p.add_argument("--mirror", default=None, help="mirror folder (default: $KGEVAL_MIRROR)")
    p.add_argument("--prefer-url", action="store_true", help="try the URL before the mirror")

    def run(a):
        from pathlib import Path

        from .data.download import fetch, resolve_mirror
        from .data.manifest import read_manifest
        from .progress import Progress

        mirror = resolve_mirror(a.mirror)
        manifest = read_manifest(a.manifest)
        sizes = [res.size for res in manifest.values()]
        # bytes when the manifest pins every size; a failed source's partial bytes count too (rare)
        total = sum(sizes) if all(size >= 0 for size in sizes) else None
        with Progress(total, "fetch", unit="B") as progress:
            for path, res in manifest.items():
                source = fetch(res, Path(a.out) / path, mirror=mirror, prefer_mirror=not a.prefer_url,
                               progress=progress.update)
                progress.write(f"{path}\t{source}\t{res.sha256}")
        return 0

    return run


def _validate(p: argparse.ArgumentParser):
    p.add_argument("config", help="a config YAML file")
    p.add_argument("--schema", default="config/schema.yaml")

    def run(a):
        from .config import load_config_file, validate_config

        validate_config(load_config_file(a.config), a.schema)
        print(f"{a.config}: valid")
        return 0

    return run


def _build_kg(p: argparse.ArgumentParser):
    p.add_argument("folder", help="folder with train.txt, valid.txt, test.txt (and optional side files)")
    p.add_argument("out", help="the knowledge graph file to write (kg.npz)")
    p.add_argument("--name", default=None, help="dataset name (default: the folder's name)")
    p.add_argument("--names", default=None, help="entity id to name file (mid2name.txt)")
    p.add_argument("--categories", default=None, help="folder with one_to_one.txt ... many_to_many.txt")

    def run(a):
        from pathlib import Path

        from .data.kg import build_kg

        f = Path(a.folder)
        kg = build_kg(a.name or f.resolve().name, f / "train.txt", f / "valid.txt", f / "test.txt",
                      names=a.names, categories_dir=a.categories)
        kg.save(a.out)
        print(f"{a.out}\t{kg.num_entities} entities\t{kg.num_relations} relations\t{kg.fingerprint()}")
        return 0

    return run


BUILTIN = {
    "build-kg": (_build_kg, "build a knowledge-graph file (kg.npz) from split files"),
    "synth": (_synth, "generate a seeded synthetic knowledge graph with planted structure"),
    "fetch": (_fetch, "download every manifest file (URL or mirror), verifying SHA-256"),
    "validate-config": (_validate, "check a config file against the schema and its cross-references"),
}


def main(argv: list[str] | None = None) -> int:
    from . import commands  # noqa: F401  (registers the later stages' sub-commands)

    parser = argparse.ArgumentParser(prog="kgeval", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    runners = {}
    for name, (add, help_) in {**BUILTIN, **COMMANDS}.items():
        runners[name] = add(sub.add_parser(name, help=help_))
    args = parser.parse_args(argv)
    setup_logging()
    enable_bars()  # on a terminal; redirected to a file, long commands log plain progress lines
    try:
        return int(runners[args.cmd](args) or 0)
    except KgevalError as exc:
        print(f"kgeval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
