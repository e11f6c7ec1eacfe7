"""Runs the guides' code blocks the way a reader copies them (issue 52 §2), as a part of tests/check.sh.

Every ``bash``/``sh``/``console``/``python``/``py`` block of README.md, docs/*.md and docs/guide/*.md runs, except
one marked on the page, on the line(s) just above it, ``<!--docs-test:skip REASON-->`` (the whole workflow, hours,
a server until Ctrl-C, a path to fill in): the reason is on the page for the reader too. Each page runs

* in a virtual environment holding kgeval's wheel and exactly the distributions ``pip install kgeval[EXTRAS]``
  resolves to, EXTRAS the union of the extras the page's ``pip install`` lines name (none: the base install),
  so a block that imports what its page does not install fails as it would for the reader. The distributions are
  linked from the running environment, not downloaded (torch alone would take the five minutes this part has);
  one environment per distinct set of extras;
* in an empty folder outside the checkout (``<!--docs-test:checkout-->`` on a page: a copy of the checkout's
  tracked files, for pages that say "in the clone's folder"), its blocks in page order, the Python blocks in one
  interpreter session as a notebook runs them; ``<!--docs-test:alone-->`` above a block runs it alone, in a new
  folder and a new process, as a reader who copies only that block;
* with ``KGEVAL_MIRROR`` set and one ``KGEVAL_HOME`` for the whole check, so the data are built once.

An unlabelled or ``text`` block right after a block that ran is what that block prints: every number in it must
be among the numbers the block printed (at the precision shown), and so must the lines after ``$ `` in a
``console`` block and the outputs of an interpreter session (a block of ``>>>`` lines, run line by line in the
page's namespace; an error it shows must be printed word for word). A Markdown table or block after prose is
checked the same way when the page marks it ``<!--docs-test:output-->``. Bash blocks run under
``set -euo pipefail``: a failing command fails the block.

    KGEVAL_MIRROR=/path/to/mirror python tests/docs_run.py [--only PAGE ...] [--home DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")),
         *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs/guide").glob("*.md"))]
BLOCK = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
MARK = re.compile(r"<!--\s*docs-test:(?P<verb>skip|alone|checkout|output)\b(?P<reason>.*?)-->", re.S)
EXTRAS_IN = re.compile(r"pip install [^\n]*?[\"']?[\w./-]*\[(?P<extras>[\w,-]+)\]")
RUN_LANGS = {"bash": "bash", "sh": "bash", "console": "console", "python": "python", "py": "python"}
NUMBER = re.compile(r"(?<![\w.])[-+−]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
# a timing the page adds beside an output line, such as "(147 s)": the machine's, not the command's
TIMING = re.compile(r"\(\s*\d+(?:\.\d+)?\s*(?:s|min|ms)\s*\)")
BLOCK_TIMEOUT = 300


@dataclass
class Block:
    page: str
    line: int
    lang: str  # bash, console, python, or "output" (what the block above printed)
    body: str
    skip: str | None = None  # the page's reason, when it marks the block as not run
    alone: bool = False
    output: str | None = None  # the output block shown under it, if any
    printed: str = field(default="", repr=False)


def parse(page: str, text: str) -> list[Block]:
    """The page's runnable blocks in order, each with its marks and the output block shown under it."""
    blocks: list[Block] = []
    last_end = 0
    previous: Block | None = None
    for m in BLOCK.finditer(text):
        between = text[last_end:m.start()]
        last_end = m.end()
        lang = m["lang"].lower()
        line = text.count("\n", 0, m.start()) + 1
        marks = list(MARK.finditer(between))
        if lang in ("", "text") and not m["body"].lstrip().startswith(">>>"):
            # prose between the blocks means the reader reads on; an output right under a block is its own, and
            # one the page marks <!--docs-test:output--> is the last block's after the prose that explains it
            said = any(mk["verb"] == "output" and not between[mk.end():].strip() for mk in marks)
            owner = blocks[-1] if said and blocks else previous
            if owner is not None and (said or not between.strip()) and owner.output is None:
                owner.output = m["body"]
            previous = None
            continue
        # an interpreter session (">>> "): run line by line, each output compared with what the page shows
        kind = "session" if lang in ("", "text", "pycon") and m["body"].lstrip().startswith(">>>") else RUN_LANGS.get(lang)
        if kind is None:
            previous = None
            continue
        block = Block(page, line, kind, m["body"])
        for mark in marks:
            if mark["verb"] == "skip":
                block.skip = mark["reason"].strip() or "(no reason given)"
            elif mark["verb"] == "alone":
                block.alone = True
        blocks.append(block)
        previous = block
    # a Markdown table the page marks as an output (the README's row of `kgeval evaluate`) belongs to the last
    # block above it
    for m in re.finditer(r"<!--\s*docs-test:output\s*-->\s*\n(?P<table>(?:\|[^\n]*\n)+)", text):
        line = text.count("\n", 0, m.start()) + 1
        owner = [b for b in blocks if b.line < line]
        if owner and owner[-1].output is None:
            owner[-1].output = m["table"]
    return blocks


def page_extras(text: str) -> frozenset[str]:
    return frozenset(x for m in EXTRAS_IN.finditer(text) for x in m["extras"].split(","))


def console_split(body: str) -> tuple[str, str]:
    """A console block's commands (the ``$`` lines and their continuations) and the output shown."""
    commands, shown, cont = [], [], False
    for raw in body.splitlines():
        if raw.startswith("$ ") or cont:
            commands.append(raw[2:] if raw.startswith("$ ") else raw)
            cont = raw.rstrip().endswith("\\")
        else:
            shown.append(raw)
    return "\n".join(commands) + "\n", "\n".join(shown)


def session_split(body: str) -> list[tuple[str, str]]:
    """An interpreter session's statements (``>>>`` and ``...`` lines) and the output shown after each."""
    pairs: list[tuple[list[str], list[str]]] = []
    for raw in body.splitlines():
        if raw.startswith(">>> "):
            pairs.append(([raw[4:]], []))
        elif raw.startswith("... ") and pairs and not pairs[-1][1]:
            pairs[-1][0].append(raw[4:])
        elif pairs:
            pairs[-1][1].append(raw)
    return [("\n".join(src) + "\n", "\n".join(out)) for src, out in pairs]


def shown_output(block: Block) -> str | None:
    """What the page shows the block printing: a console's or a session's own lines, else the output block."""
    if block.lang == "console":
        return console_split(block.body)[1]
    if block.lang == "session":
        return "\n".join(out for _, out in session_split(block.body))
    return block.output


def session_problems(shown: str, printed: str) -> list[str]:
    """An error the session shows (``SomeError: message``) must be printed as shown, word for word."""
    return [line for line in shown.splitlines() if re.match(r"^\w+(Error|Exception): ", line)
            and line.split() != next((p.split() for p in printed.splitlines() if p.split() == line.split()), None)]


def numbers(text: str) -> list[str]:
    text = re.sub(r"<!--.*?-->", "", TIMING.sub(" ", text), flags=re.S)  # a fact mark's key is not shown
    return [n.replace("−", "-").replace(",", "").lstrip("+") for n in NUMBER.findall(text)]


def missing_numbers(shown: str, printed: str) -> list[str]:
    """The numbers of ``shown`` that ``printed`` does not hold, each compared at the precision shown: 0.1783 is
    found in a printed 0.178280, 338 in 338.0, never in 3380."""
    have: set[str] = set()
    for n in numbers(printed):
        have.add(n)
        if "." in n and "e" not in n.lower():
            whole, frac = n.split(".")
            value = float(n)
            for digits in range(0, len(frac) + 1):
                have.add(f"{value:.{digits}f}" if digits else str(round(value)))
            if set(frac) <= {"0"}:
                have.add(whole)
    return [n for n in numbers(shown) if n not in have]


# ---- environments: kgeval's wheel and the distributions an install with the page's extras resolves to ----------

def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(requirements: list[str]) -> set[str]:
    """The installed distributions (normalised names) that ``requirements`` pull in, markers and extras followed."""
    from packaging.requirements import Requirement

    todo = [(Requirement(r), "") for r in requirements]
    found: set[str] = set()
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = _norm(req.name)
        for x in req.extras:
            todo += [(Requirement(r), x) for r in metadata.requires(req.name) or [] if "extra ==" in r]
        if name in found:
            continue
        found.add(name)
        todo += [(Requirement(r), "") for r in metadata.requires(req.name) or [] if "extra ==" not in r]
    return found


def kgeval_requirements(extras: frozenset[str]) -> list[str]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs, todo, seen = list(project["dependencies"]), list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in project["optional-dependencies"][extra]:
            inner = re.match(r"kgeval\[(?P<x>[\w,-]+)\]", req)
            todo += inner["x"].split(",") if inner else []
            reqs += [] if inner else [req]
    return reqs


def make_env(where: Path, extras: frozenset[str], wheel: Path, env: dict[str, str]) -> Path:
    """A venv at ``where`` with the wheel and a folder of links to the closure's distributions; its python."""
    site = where / "linked"
    site.mkdir(parents=True)
    bin_dir = where / "bin"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, env=env)
    names = closure(kgeval_requirements(extras)) | {"pip"}
    for dist in metadata.distributions():
        if _norm(dist.metadata["Name"]) not in names:
            continue
        tops = {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            src, dst = Path(dist.locate_file(top)), site / top
            if src.exists() and not dst.exists():
                dst.symlink_to(src)
        for ep in dist.entry_points.select(group="console_scripts"):
            script = bin_dir / ep.name
            if not script.exists():
                module, _, attr = ep.value.partition(":")
                script.write_text(f"#!{bin_dir / 'python'}\nimport sys\nfrom {module} import {attr.split('.')[0]}\n"
                                  f"sys.exit({attr}())\n")
                script.chmod(0o755)
    py = bin_dir / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "linked.pth").write_text(f"{site}\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)],
                   check=True, env=env)
    return py


# ---- the driver: runs in the page's environment, in the page's folder -------------------------------------------

class _Timeout(Exception):
    pass


def drive(spec_file: str) -> None:
    """Runs the blocks of ``spec_file`` (JSON: lang and body of each) in order in the current folder, Python blocks
    in one namespace; writes each block's printed text and error beside it (``spec_file`` + ``.out``), stopping at
    the first failure: the blocks after it assume it ran."""
    import ast
    import contextlib
    import io
    import signal
    import traceback

    def alarm(*_):
        raise _Timeout(f"still running after {BLOCK_TIMEOUT} s")

    signal.signal(signal.SIGALRM, alarm)
    spec = json.loads(Path(spec_file).read_text())
    namespace: dict = {"__name__": "__main__"}
    results = []
    for block in spec:
        t0 = time.time()
        if block["lang"] == "session":
            buf = io.StringIO()
            error = None
            for source, _ in session_split(block["body"]):
                try:
                    signal.alarm(BLOCK_TIMEOUT)
                    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                        try:  # as the interpreter: an expression's value is shown, a statement is run
                            value = eval(compile(source, block["where"], "eval"), namespace)
                            if value is not None:
                                print(repr(value))
                        except SyntaxError:
                            exec(compile(source, block["where"], "exec"), namespace)
                except NameError:
                    error = traceback.format_exc(limit=-1)
                    break
                except Exception as e:  # the session shows what the interpreter prints: the last line
                    print(f"{type(e).__name__}: {e}", file=buf)
                finally:
                    signal.alarm(0)
            printed = buf.getvalue()
        elif block["lang"] == "python":
            buf = io.StringIO()
            error = None
            try:
                tree = ast.parse(block["body"])
                # a notebook shows the value of the cell's last expression: so does the reader's copy
                last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
                signal.alarm(BLOCK_TIMEOUT)
                with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                    exec(compile(tree, block["where"], "exec"), namespace)
                    if last is not None:
                        value = eval(compile(ast.Expression(last.value), block["where"], "eval"), namespace)
                        if value is not None:
                            print(repr(value))
            except BaseException:  # noqa: B036 - a block's SystemExit or KeyboardInterrupt is its failure too
                error = traceback.format_exc(limit=-3)
            finally:
                signal.alarm(0)
            printed = buf.getvalue()
        else:
            try:
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", block["body"]], capture_output=True, text=True,
                                      timeout=BLOCK_TIMEOUT, check=False)
                printed = done.stdout + done.stderr
                error = None if done.returncode == 0 else f"exit status {done.returncode}"
            except subprocess.TimeoutExpired as e:
                printed, error = str(e.stdout or "") + str(e.stderr or ""), f"still running after {BLOCK_TIMEOUT} s"
        results.append({"printed": printed, "error": error, "seconds": round(time.time() - t0, 1)})
        Path(spec_file + ".out").write_text(json.dumps(results))
        if error:
            break


# ---- the check ---------------------------------------------------------------------------------------------------

def copy_checkout(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(src.read_bytes())


def run_group(py: Path, blocks: list[Block], folder: Path, env: dict[str, str]) -> tuple[list[str], list[str]]:
    """Runs ``blocks`` in ``folder`` through the driver: a line per block run, and the problems found."""
    spec = folder.parent / f"{folder.name}.blocks.json"
    todo = []
    for b in blocks:
        body = console_split(b.body)[0] if b.lang == "console" else b.body
        lang = b.lang if b.lang in ("python", "session") else "bash"
        todo.append({"lang": lang, "body": body, "where": f"{b.page}:{b.line}"})
    spec.write_text(json.dumps(todo))
    subprocess.run([str(py), str(Path(__file__).resolve()), "--drive", str(spec)], cwd=folder, env=env, check=False)
    out = Path(str(spec) + ".out")
    results = json.loads(out.read_text()) if out.exists() else []
    lines, problems = [], []
    for b, res in zip(blocks, results, strict=False):
        b.printed = res["printed"]
        where = f"{b.page}:{b.line}"
        if res["error"]:
            tail = "\n    ".join((res["printed"].strip().splitlines() + res["error"].strip().splitlines())[-25:])
            problems.append(f"{where}: the {b.lang} block failed ({res['error'].strip().splitlines()[-1]}):\n    {tail}")
            continue
        shown = shown_output(b)
        lost = missing_numbers(shown or "", res["printed"])
        if b.lang == "session":
            lost += session_problems(shown, res["printed"])
        if lost:
            problems.append(f"{where}: the output shown under the block has {', '.join(lost[:8])}, which the block "
                            f"did not print (it printed:\n    " + "\n    ".join(res["printed"].splitlines()[-15:]) + ")")
        lines.append(f"  {where}: ran in {res['seconds']} s{' (output checked)' if shown else ''}")
    if len(results) < len(blocks) and not problems:
        problems.append(f"{blocks[len(results)].page}:{blocks[len(results)].line}: the driver stopped before it")
    return lines, problems


def _label(extras: frozenset[str]) -> str:
    return f"kgeval[{','.join(sorted(extras))}]"


def run_page(page: str, text: str, py: Path, env: dict[str, str], work: Path) -> tuple[list[str], list[str], int]:
    """The page's blocks not marked skip: each ``alone`` block in a folder of its own, the rest together in page
    order; the lines to print, the problems and the number of blocks run."""
    run_blocks = [b for b in parse(page, text) if not b.skip]
    groups = [[b] for b in run_blocks if b.alone]
    together = [b for b in run_blocks if not b.alone]
    groups += [together] if together else []
    t0 = time.time()
    lines, problems = [], []
    for i, group in enumerate(groups):
        folder = work / f"{page.replace('/', '_')}-{i}"
        folder.mkdir(parents=True)
        if any(m["verb"] == "checkout" for m in MARK.finditer(text)):
            copy_checkout(folder)
        more, wrong = run_group(py, group, folder, env)
        lines += more
        problems += wrong
    head = f"docs run: {page}: {len(run_blocks)} block(s) in {time.time() - t0:.0f} s, {len(problems)} problem(s)"
    return [head, *lines], problems, len(run_blocks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="pages to run (paths as in the repository)")
    ap.add_argument("--home", help="KGEVAL_HOME to use and keep (default: a new one, removed at the end)")
    ap.add_argument("--jobs", type=int, default=2, help="pages run side by side after the first (default 2)")
    ap.add_argument("--drive", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.drive:
        drive(args.drive)
        return
    mirror = os.environ.get("KGEVAL_MIRROR")
    if not mirror:
        sys.exit("docs run: set KGEVAL_MIRROR to the data mirror")
    sys.path.insert(0, str(ROOT / "tests"))
    from concurrent.futures import ThreadPoolExecutor

    from wheel_check import build_wheel

    pages = {p: (ROOT / p).read_text(encoding="utf-8") for p in (args.only or PAGES)}
    parsed = {p: parse(p, t) for p, t in pages.items()}
    todo = [p for p in pages if any(not b.skip for b in parsed[p])]
    skipped = sum(1 for blocks in parsed.values() for b in blocks if b.skip)
    t0 = time.time()
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kgeval-docs-") as tmp:
        tmp = Path(tmp)
        base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KGEVAL_HOME", "VIRTUAL_ENV")}
        wheel = build_wheel(tmp, base_env)
        home = Path(args.home) if args.home else tmp / "home"
        path = [p for p in base_env.get("PATH", "").split(os.pathsep) if Path(p) != Path(sys.executable).parent]
        wanted = list(dict.fromkeys(page_extras(pages[p]) for p in todo))
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:  # pip installs the wheel: seconds each, side by side
            made = pool.map(lambda x: make_env(tmp / f"env-{'-'.join(sorted(x)) or 'base'}", x, wheel, base_env),
                            wanted)
            envs = dict(zip(wanted, made, strict=True))
        print(f"docs run: {len(envs)} environments ({', '.join(map(_label, envs))}) "
              f"ready in {time.time() - t0:.0f} s", flush=True)

        def one(page: str) -> tuple[list[str], list[str], int]:
            py = envs[page_extras(pages[page])]
            env = dict(base_env, KGEVAL_HOME=str(home), KGEVAL_MIRROR=mirror,
                       PATH=os.pathsep.join([str(py.parent), *path]), VIRTUAL_ENV=str(py.parent.parent))
            return run_page(page, pages[page], py, env, tmp / "work")

        # the first page alone builds the data into the shared KGEVAL_HOME; the others then only read it
        results = [one(todo[0])] if todo else []
        print("\n".join(results[0][0]) if results else "", flush=True)
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            for lines, wrong, n in pool.map(one, todo[1:]):
                print("\n".join(lines), flush=True)
                results.append((lines, wrong, n))
        problems = [p for _, wrong, _ in results for p in wrong]
        ran = sum(n for *_, n in results)
    print(f"docs run: {ran} blocks run, {skipped} marked not run, on {len(pages)} pages in {time.time() - t0:.0f} s")
    if problems:
        sys.exit(f"docs run: {len(problems)} problem(s):\n" + "\n".join(problems))


if __name__ == "__main__":
    main()
