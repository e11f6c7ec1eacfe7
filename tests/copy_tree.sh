#!/usr/bin/env bash
# Copy this checkout's working tree into DEST: the files git tracks and the untracked ones it does not ignore, as
# they are now (uncommitted changes included; no .venv, results/, resources/, logs/, .snakemake/). The scratch
# copies of tests/slurm_e2e.sh and tests/slurm_scale.sh.
#   bash tests/copy_tree.sh DEST [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=$1
PY="${2:-python3}"
mkdir -p "$DEST"
git ls-files -z --cached --others --exclude-standard |
  "$PY" -c 'import os, sys
names = [n for n in sys.stdin.buffer.read().split(b"\0") if n and os.path.isfile(n)]
sys.stdout.buffer.write(b"\0".join(names))' |
  tar --null -T - -cf - | tar -xf - -C "$DEST"
