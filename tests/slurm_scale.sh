#!/usr/bin/env bash
# The scale stage's question shards as separate SLURM jobs (issue 53), checked against the unsharded run:
#   bash .ci/slurm-up.sh && bash tests/slurm_scale.sh REFERENCE; bash .ci/slurm-down.sh
# REFERENCE: a folder whose results/scale/wikikg2/ holds config/scale-ci.yaml's unsharded run (tests/check.sh's
# scale part; its graph is taken from this checkout's resources/scale/wikikg2/graph.npz).
#
# In a scratch copy of the working tree (tracked and untracked, not ignored, files), with the reference run's graph
# and sample copied in (so only ranking runs again), the scale stage runs through SLURM (profiles/slurm-ci) with
# scale.shards = SCALE_SHARDS (default 3): one SLURM job per question shard, then the gather and the tables. Checks:
# every shard went through its own SLURM job (a log per job under .snakemake/slurm_logs/rule_scale_rank/), and the
# gathered rankings (results/scale/wikikg2/ranks/system*.npz) and every table are byte-identical to the unsharded
# run's. Exits 1 on any failure; the scratch folder is removed after success.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
PY="${KGEVAL_PYTHON:-$(command -v python3)}"
SHARDS="${SCALE_SHARDS:-3}"
say() { echo "slurm-scale: $*"; }
fail() {
  echo "slurm-scale: FAIL: $*" >&2
  [ -n "${WORK:-}" ] && echo "slurm-scale: scratch folder kept: ${WORK}" >&2
  exit 1
}
[ $# -eq 1 ] || fail "usage: tests/slurm_scale.sh REFERENCE (a folder with results/scale/wikikg2/ of the unsharded run)"
REF="$(cd "$1" && pwd)/results/scale/wikikg2"
GRAPH="${REPO}/resources/scale/wikikg2/graph.npz"
[ -f "${REF}/exact.csv" ] && [ -f "${REF}/sample.npz" ] || fail "${REF}: no finished unsharded scale run"
[ -f "$GRAPH" ] || fail "no graph ${GRAPH} (run config/scale-ci.yaml first)"
command -v sinfo >/dev/null 2>&1 || fail "no SLURM commands on PATH: run .ci/slurm-up.sh first"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kgeval-slurm-scale.XXXXXX")"
COPY="${WORK}/slurm"
mkdir -p "$COPY"
git ls-files -z --cached --others --exclude-standard |
  "$PY" -c 'import os, sys
names = [n for n in sys.stdin.buffer.read().split(b"\0") if n and os.path.isfile(n)]
sys.stdout.buffer.write(b"\0".join(names))' |
  tar --null -T - -cf - | tar -xf - -C "$COPY"
mkdir -p "${COPY}/resources/scale/wikikg2" "${COPY}/results/scale/wikikg2"
cp -p "$GRAPH" "${COPY}/resources/scale/wikikg2/graph.npz"
cp -p "${REF}/sample.npz" "${COPY}/results/scale/wikikg2/sample.npz"
# SLURM jobs re-read the Snakefile and merge config/config.yaml with what they are given (tests/slurm_e2e.sh):
# the copy's default config is the one this run means, config/scale-ci.yaml's scale section with the shards
"$PY" - "$COPY" "$SHARDS" <<'PY'
import sys

import yaml

copy, shards = sys.argv[1], int(sys.argv[2])
cfg = yaml.safe_load(open(f"{copy}/config/config.yaml"))
cfg["scale"] = yaml.safe_load(open(f"{copy}/config/scale-ci.yaml"))["scale"] | {"shards": shards}
yaml.safe_dump(cfg, open(f"{copy}/config/config.yaml", "w"), sort_keys=False)
PY

say "snakemake --profile profiles/slurm-ci -- scale_all with ${SHARDS} shards in ${COPY}"
t0=$SECONDS
rc=0
(cd "$COPY" && PYTHONPATH="${COPY}/src" timeout -k 30 600 "$PY" -m snakemake --profile profiles/slurm-ci -- scale_all) \
  >"${WORK}/slurm.log" 2>&1 || rc=$?
if ((rc != 0)); then
  tail -n 60 "${WORK}/slurm.log" >&2
  fail "the SLURM run exited ${rc} after $((SECONDS - t0)) s (log ${WORK}/slurm.log)"
fi
say "SLURM run done in $((SECONDS - t0)) s"

n_logs="$(find "${COPY}/.snakemake/slurm_logs/rule_scale_rank" -name '*.log' 2>/dev/null | wc -l)"
[ "$n_logs" = "$SHARDS" ] || fail "${n_logs} SLURM job logs of scale_rank, want one per shard (${SHARDS})"
grep -q "Job .* has been submitted with SLURM jobid" "${WORK}/slurm.log" || fail "no sbatch submission in the log"
for f in "$REF"/ranks/system*.npz "$REF"/{exact,estimates,paired,negatives}.csv "$REF"/negatives_tau.json; do
  rel="${f#"${REF}"/}"
  cmp -s "$f" "${COPY}/results/scale/wikikg2/${rel}" || fail "${rel}: the ${SHARDS}-shard SLURM run differs from the unsharded run"
done
say "OK: ${SHARDS} shards in ${n_logs} SLURM jobs; rankings and tables byte-identical to the unsharded run"
rm -rf "$WORK"
