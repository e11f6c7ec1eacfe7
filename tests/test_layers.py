"""The package's house plan (docs/dev/layout.md, "Where things are"): every workflow stage is one package, a stage imports only
from its own layer or a lower one, no module takes part in an import circle, and no path of the workflow's
outputs is spelled inside the package (the rules own them; the command line's defaults aside)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"

# lowest first; a module may import from its own layer or a lower one
LAYERS = [
    {"errors", "arguments", "io", "limits", "cells", "progress", "published", "workflow", "workflow_dag", "workflow_env",
     "docs_figures", "home", "numerics"},
    {"data"},
    {"models"},
    {"scores"},
    {"metrics"},
    {"training", "pools"},
    {"config"},
    {"analysis"},
    {"judgments"},  # labels, items, features and prior shared by bounds, sampling and the campaign
    {"bounds"},
    {"sampling"},
    {"kp"},
    {"scale"},  # kgeval at millions of entities (issue 53): the block engine, graphs at scale, estimates
    {"tables"},
    {"reproduce"},  # the content manifest of a run or pack and the bitwise comparison of two (issue 61)
    {"external"},
    {"api"},  # the Python API (kgeval.api), which the command line may call
    {"integrations"},  # PyKEEN, ir_datasets, ranx on top of the API
    {"campaign"},  # the judging campaign's server on top of sampling and the annotation formats
    {"cli"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """module -> the kgeval modules (or packages) it imports, anywhere in its body."""
    out: dict[str, set[str]] = {}
    for path in sorted((SRC / "kgeval").rglob("*.py")):
        mod, is_pkg = module_name(path), path.name == "__init__.py"
        found = out.setdefault(mod, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] == "kgeval":
                    # `from pkg import module` imports the module
                    found.update(f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target
                                 for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] == "kgeval")
    return out


MODULES = {module_name(p) for p in (SRC / "kgeval").rglob("*.py")}


def stage(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "kgeval"


def test_every_stage_has_a_layer():
    stages = {stage(m) for m in MODULES} - {"kgeval"}
    assert stages - set(RANK) == set(), "a new top-level module or package needs a layer in LAYERS"


def test_no_import_runs_back_up_a_layer():
    upward = sorted(f"{a} -> {b}" for a, targets in imports().items() for b in targets
                    if stage(a) in RANK and stage(b) in RANK and RANK[stage(b)] > RANK[stage(a)])
    assert upward == []


def test_no_import_circle():
    graph = {m: {t for t in ts if t in MODULES and t != m} for m, ts in imports().items()}
    # a package imports its own modules (re-exports) without forming a circle with them
    graph = {m: {t for t in ts if not t.startswith(m + ".")} for m, ts in graph.items()}
    index, low, on_stack, stack, circles = {}, {}, set(), [], []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert circles == []


@pytest.mark.parametrize("path", sorted((SRC / "kgeval").rglob("*.py")), ids=lambda p: module_name(p))
def test_no_output_path_spelled_in_the_package(path):
    if path.parent.name == "cli":  # the command line's defaults
        pytest.skip("the command line may name default paths")
    code_strings = [n.value for n in ast.walk(ast.parse(path.read_text()))
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    docstrings = {ast.get_docstring(n) for n in ast.walk(ast.parse(path.read_text()))
                  if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)}
    spelled = [s for s in code_strings if s not in docstrings and re.match(r"(results|resources)/", s)]
    assert spelled == []


@pytest.mark.parametrize("script", sorted(SCRIPTS.glob("*.py")), ids=lambda p: p.stem)
def test_every_script_calls_a_step_of_its_stage(script):
    """workflow/scripts/<rule>.py imports its step function from kgeval.<stage>.steps."""
    text = script.read_text()
    steps = re.findall(r"^from kgeval\.(\w+)\.steps import", text, re.M)
    others = re.findall(r"^from kgeval\.(?!workflow\b)([\w.]+) import", text, re.M)
    assert steps and not [m for m in others if not m.endswith(".steps")], \
        f"{script.name} imports from a kgeval module other than a <stage>.steps module (and kgeval.workflow)"


MAX_LINES = 450  # the developers' guide's ceiling: a module past it holds more than one concern


@pytest.mark.parametrize("path", sorted((SRC / "kgeval").rglob("*.py")), ids=lambda p: module_name(p))
def test_no_module_over_the_line_ceiling(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{module_name(path)} has {lines} lines: split it into cohesive modules"
