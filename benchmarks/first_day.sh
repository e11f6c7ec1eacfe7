#!/usr/bin/env bash
# A newcomer's first day, timed from nothing (issue 52: a page's number comes from the file a run wrote): a fresh
# clone of this checkout's HEAD, a new virtual environment with pip's cache off, the install block of the docs,
# then benchmarks/first_call.py --cold with that environment's Python (the first load_testset in an empty folder
# with an empty KGEVAL_HOME, the data from KGEVAL_MIRROR or the pinned URLs, then a fresh process's call on the
# cached data). pip's progress goes to the terminal.
#   bash benchmarks/first_day.sh OUT [editable|package]
# editable (the default): README's Install, `pip install torch==2.13.0 && pip install -e ".[dev]"`; the data are
#   built by the workflow. package: install.md's "As a package", `pip install "CHECKOUT[pykeen]"`; the data are
#   built by the data stage's functions, without the workflow.
# Writes OUT/time.txt (/usr/bin/time -v of the install), OUT/versions.txt (Python, kgeval, torch, the commit) and
# OUT/first_call.json (first_call.py's numbers).
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: bash benchmarks/first_day.sh OUT [editable|package]" >&2; exit 2; }
mode="${2:-editable}"
case "$mode" in
  editable) install='pip install torch==2.13.0 && pip install -e ".[dev]"' ;;
  package) install='pip install torch==2.13.0 && pip install "$PWD[pykeen]"' ;;
  *) echo "benchmarks/first_day.sh: mode must be editable or package, not '$mode'" >&2; exit 2 ;;
esac
out="$(realpath -m "$1")"
mkdir -p "$out"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/kgeval"
cd "$work/kgeval"
export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
unset PYTHONPATH
# as a reader runs the block: bash -c keeps the venv's activation for both pip lines
/usr/bin/time -v -o "$out/time.txt" bash -c "python3 -m venv .venv && . .venv/bin/activate && $install"
{
  .venv/bin/python -c 'import platform, kgeval, torch; print("python:", platform.python_version());
print("kgeval:", kgeval.__version__); print("torch:", torch.__version__)'
  echo "mode: $mode"
  echo "commit: $(git rev-parse --short HEAD)"
} >"$out/versions.txt"
grep -F "Elapsed (wall clock)" "$out/time.txt"
# the first call from an empty folder (first_call.py makes it); its JSON line is the last of its output
.venv/bin/python benchmarks/first_call.py --cold | tee /dev/stderr | tail -n 1 >"$out/first_call.json"
