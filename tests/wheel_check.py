"""kgeval installed from its wheel, used in a folder outside the checkout (issue 44): builds the wheel from a copy
of the checkout's packaged files, installs it into a fresh virtual environment (its dependencies: the running
environment's site-packages, so nothing is downloaded), then in an empty temporary folder, with KGEVAL_HOME there
and KGEVAL_MIRROR set, runs the README's Python example and ``kgeval evaluate`` on a small popularity run of
FB-Test-S-C, and checks that both give the same numbers, from the installed package and the packaged files alone.

    KGEVAL_MIRROR=../shared/data python tests/wheel_check.py

tests/check.sh runs it as its own timed part (with a mirror only: the data come from the mirror).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# what the wheel is built from (setup.py copies config/, annotations/templates.tsv and reference/default in)
SOURCES = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "src", "config", "annotations",
           "reference/default"]

DRIVER = r'''
import json, re, sys
from pathlib import Path

import kgeval

here = Path.cwd()
assert not (here / "config").exists() and not (here / "Snakefile").exists()
assert "site-packages" in kgeval.__file__, kgeval.__file__          # the installed wheel, not the checkout

# the README's example as written: it makes its popularity run (kgeval.baseline) into runs/ itself
readme = Path(sys.argv[1]).read_text()
example = next(b for b in re.findall(r"^```python\n(.*?)^```", readme, re.S | re.M) if "place(result)" in b)
ns = {}
exec(compile(example, "README.md", "exec"), ns)
result = ns["result"]
assert len(ns["sc"].questions) == 2883, len(ns["sc"].questions)
# the integrations from the installed package: ir_datasets' collections, PyKEEN's evaluator name
import ir_datasets
assert sum(1 for _ in ir_datasets.load("kgeval/fb15k-237/test-s-c").qrels_iter()) == 27568
# PyKEEN finds the datasets through the entry point, and with them the evaluator (no kgeval import needed)
from pykeen.datasets import dataset_resolver
from pykeen.evaluation import evaluator_resolver
assert dataset_resolver.lookup("kgevalfb15k237").__name__ == "KgevalFB15k237"
assert evaluator_resolver.lookup("kgeval").__name__ == "KgevalEvaluator"
json.dump({"micro_mrr": result.value("MRR", "micro"), "macro_mrr": result.value("MRR", "macro"),
           "ndcg": result.value("nDCG@20", "macro"), "files": {k: str(v) for k, v in ns["sc"].files.items()}},
          open("api.json", "w"))
'''


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"wheel check: {' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n"
                 f"{done.stderr[-3000:]}")
    return done.stdout + done.stderr


def _has_build_tools() -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("setuptools").split(".")[0]) >= 68 and bool(version("wheel"))
    except PackageNotFoundError:
        return False


def build_wheel(tmp: Path, env: dict[str, str]) -> Path:
    """kgeval's wheel, built in ``tmp`` from a copy of the checkout's packaged files (tests/docs_run.py too)."""
    src = tmp / "source"
    for rel in SOURCES:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / rel).is_dir():
            shutil.copytree(ROOT / rel, src / rel, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / rel, src / rel)
    # offline with this environment's setuptools when it meets pyproject's build requirement, else pip's
    # isolated build (which fetches setuptools)
    offline = ["--no-build-isolation"] if _has_build_tools() else []
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", *offline, "-q", ".", "-w", str(tmp / "dist")], src, env)
    return next((tmp / "dist").glob("kgeval-*.whl"))


def main() -> None:
    mirror = os.environ.get("KGEVAL_MIRROR")
    if not mirror:
        sys.exit("wheel check: set KGEVAL_MIRROR to the data mirror")
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="kgeval-wheel-") as tmp:
        tmp = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KGEVAL_HOME")}
        wheel = build_wheel(tmp, env)
        venv = tmp / "venv"
        run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, env)
        py = venv / "bin" / "python"
        site = Path(run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp,
                        env).strip())
        # the dependencies: this environment's site-packages, after the new venv's own (its .pth files, such as
        # an editable kgeval, are not read from there)
        (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)], tmp, env)
        built = time.time() - t0

        work = tmp / "elsewhere"
        work.mkdir()
        env.update(KGEVAL_HOME=str(tmp / "home"), KGEVAL_MIRROR=mirror)
        run([str(py), "-c", DRIVER, str(ROOT / "README.md")], work, env)
        api_s = time.time() - t0 - built
        out = run([str(venv / "bin" / "kgeval"), "evaluate", "runs", "--name", "Popularity", "--dataset",
                   "FB15k-237", "--testsets", "FB-Test-S-C", "--out", "eval", "--bootstrap", "20",
                   "--tukey-trials", "50"], work, env)
        cli_s = time.time() - t0 - built - api_s

        import json

        import pandas as pd

        api = json.loads((work / "api.json").read_text())
        assert all(p.startswith(str(tmp / "home" / "resources")) for p in api["files"].values()), api["files"]
        row = pd.read_csv(work / "eval" / "evaluation.csv").iloc[0]
        for key, col in (("micro_mrr", "micro_mrr"), ("macro_mrr", "macro_mrr"), ("ndcg", "ndcg_cut_20")):
            assert abs(api[key] - row[col]) < 1e-9, (key, api[key], row[col])
        assert "shipped reference" in out and re.search(r"reference/default", out), out[-2000:]
        assert (work / "eval" / "placement.csv").is_file()
        assert sorted(p.name for p in work.iterdir()) == ["api.json", "eval", "runs"]
    print(f"wheel check: {wheel.name} built and installed in {built:.0f} s; the README example in "
          f"{api_s:.0f} s and kgeval evaluate in {cli_s:.0f} s outside the checkout (micro MRR "
          f"{api['micro_mrr']:.4f}, macro MRR {api['macro_mrr']:.4f}, equal in both)")


if __name__ == "__main__":
    main()
