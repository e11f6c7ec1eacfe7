"""Build hook: the wheel carries the checkout's default files as ``kgeval/_data/`` (kgeval.home reads them there).

The files stay where the workflow reads them (config/, annotations/, reference/default/): one source of truth,
copied into the build at build time only (docs/dev/layout.md, "Package data").
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# the default configuration, its manifest, the annotation sheet's templates and the reference pack
PACKAGE_DATA = ["config/config.yaml", "config/schema.yaml", "config/resources.tsv", "annotations/templates.tsv",
                "reference/default"]


class BuildWithData(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "kgeval" / "_data"
        for rel in PACKAGE_DATA:
            src = ROOT / rel
            files = sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else [src]
            for path in files:
                dst = target / path.relative_to(ROOT)
                dst.parent.mkdir(parents=True, exist_ok=True)
                self.copy_file(str(path), str(dst))


setup(cmdclass={"build_py": BuildWithData})
