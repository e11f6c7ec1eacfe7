"""The guides' code blocks as a reader copies them (issue 52 §2), without a virtual environment per page:

* every module a page's Python blocks import is provided by Python itself, kgeval's base dependencies or the
  extras that page's ``pip install`` lines name (``[pykeen,ir]``, ``[all]`` …, read from pyproject.toml), so a
  reader who installs what the page says can run it;
* every name a Python block uses is defined by Python, by the block itself or by an earlier block of the page (a
  block runs after the ones above it, as the page is read): integrations.md's ranx block used ``load_testset``
  and ``np`` without importing them (``NameError`` when copied alone).

Running the blocks on the real data is the work of the pages' own tests (test_integrations_docs.py,
test_api.py's documented example, test_baselines.py's README path), which need the mirror and minutes."""

from __future__ import annotations

import ast
import builtins
import re
import sys
import tomllib
from importlib import metadata

import pytest
from conftest import ROOT
from docs_run import kgeval_requirements

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs/guide").glob("*.md"))]
BLOCK = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```", re.S | re.M)
EXTRAS_IN = re.compile(r"pip install [^\n]*?[\"']?[\w./-]*\[(?P<extras>[\w,-]+)\]")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# import name -> distribution name, where they differ (the rest: the import name is the distribution's)
DISTRIBUTION = {"yaml": "pyyaml", "sklearn": "scikit-learn", "pytrec_eval": "pytrec-eval-terrier", "PIL": "pillow"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def provided(extras: set[str]) -> set[str]:
    """Distributions installed by kgeval with ``extras`` (kgeval[x] inside an extra followed), lower-case."""
    return {_name(r) for r in kgeval_requirements(frozenset(extras))}


def page_blocks(page):
    text = page.read_text(encoding="utf-8")
    return [(m["lang"], m["body"], text.count("\n", 0, m.start()) + 1) for m in BLOCK.finditer(text)]


def python_blocks(page):
    return [(body, line) for lang, body, line in page_blocks(page) if lang in ("python", "py")]


def continued(page) -> set[str]:
    """Names defined by the page a block says it continues: ``<!-- docs-blocks: continues other.md -->`` on the
    line before it (a fragment that reuses another page's variables, as the reader who came from there has)."""
    text = page.read_text(encoding="utf-8")
    names: set[str] = set()
    for other in re.findall(r"<!-- docs-blocks: continues ([\w.-]+) -->", text):
        for body, _ in python_blocks(page.parent / other):
            tree = runnable(body)
            names |= defined(tree) if tree else set()
    return names


def imports(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module.split(".")[0])
    return found


def defined(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.comprehension):
            names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return names


def used(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def runnable(body: str):
    """The block's syntax tree, or None for a block that is not meant to run (``...`` placeholders, ``>>>``
    sessions): those are summaries, not examples."""
    if ">>>" in body:
        return None
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return None
    if any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(tree)):
        return None
    return tree


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: p.name)
def test_a_pages_imports_come_with_what_it_installs(page):
    text = page.read_text(encoding="utf-8")
    extras = {x for m in EXTRAS_IN.finditer(text) for x in m["extras"].split(",")}
    have = provided(extras)
    distributions = metadata.packages_distributions()
    missing = []
    for body, line in python_blocks(page):
        tree = runnable(body)
        for module in sorted(imports(tree) if tree else ()):
            if module in sys.stdlib_module_names or module == "kgeval":
                continue
            dists = {d.lower().replace("_", "-") for d in distributions.get(module, [DISTRIBUTION.get(module, module)])}
            if not dists & have:
                missing.append(f"{page.name}:{line}: imports {module} ({', '.join(sorted(dists))}), which neither "
                               f"kgeval nor the extras the page installs ({', '.join(sorted(extras)) or 'none'}) provide")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: p.name)
def test_every_name_a_block_uses_is_defined_above_it(page):
    known = set(dir(builtins)) | continued(page)
    undefined = []
    for body, line in python_blocks(page):
        tree = runnable(body)
        if tree is None:
            continue
        here = defined(tree)
        undefined += [f"{page.name}:{line}: {name} is used before any block of the page defines or imports it"
                      for name in sorted(used(tree) - here - known)]
        known |= here
    assert not undefined, "\n".join(undefined)


def test_the_extras_the_pages_name_exist():
    names = set(PROJECT["optional-dependencies"])
    assert {"pykeen", "ir", "campaign", "all", "docs", "dev"} <= names
    assert {"ir-datasets", "ranx", "pykeen", "starlette"} <= provided({"all"})
    for page in PAGES:
        for m in EXTRAS_IN.finditer(page.read_text(encoding="utf-8")):
            assert set(m["extras"].split(",")) <= names, f"{page.name}: pip install [{m['extras']}]"


def test_the_checks_catch_the_old_ranx_block():
    """integrations.md's ranx block as it was (no numpy, no load_testset imported): both checks object."""
    old = ('import ranx\n\nfrom kgeval import compare, evaluate\n\nsc = load_testset("FB-Test-S-C")\n'
           'counts = np.bincount(sc.load_kg().splits["train"].ravel())\n')
    tree = runnable(old)
    assert used(tree) - defined(tree) - set(dir(builtins)) == {"load_testset", "np"}
    assert "ranx" not in provided({"pykeen"}) and "ranx" in provided({"ir"})
