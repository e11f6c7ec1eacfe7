#!/usr/bin/env bash
# The scale stage's question shards as separate SLURM jobs (issue 53), checked against the unsharded run:
#   bash .ci/slurm-up.sh && bash tests/slurm_scale.sh REFERENCE; bash .ci/slurm-down.sh
# REFERENCE: a folder whose results/scale/wikikg2/ holds config/scale-ci.yaml's unsharded run (tests/check.sh's
# scale part; its graph is taken from this checkout's resources/scale/wikikg2/graph.npz).
#
# In a scratch copy of the working tree (tracked and untracked, not ignored, files), with the reference run's graph
# and sample copied in (so only ranking runs again), the scale stage runs through SLURM (profiles/slurm-ci) with
# scale.shards = SCALE_SHARDS (default 2: one wave of jobs on the 2-CPU node) and the first SCALE_SYSTEMS (default
# 2) systems, to keep CI short: one SLURM job per question shard, then one for the gather and the tables (not the
# pools: they pool every system). Checks: every shard went through its own SLURM job (a log per job under
# .snakemake/slurm_logs/rule_scale_rank/); the gathered rankings (results/scale/wikikg2/ranks/system<i>.npz) are
# byte-identical to the unsharded run's, and so are the tables' rows of those systems (exact, estimates,
# negatives; paired for their pairs; tau needs every system). Exits 1 on any failure; the scratch folder is
# removed after success unless SLURM_SCALE_KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
PY="${KGEVAL_PYTHON:-$(command -v python3)}"
SHARDS="${SCALE_SHARDS:-2}"
SYSTEMS="${SCALE_SYSTEMS:-2}"
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
bash tests/copy_tree.sh "$COPY" "$PY"
mkdir -p "${COPY}/resources/scale/wikikg2" "${COPY}/results/scale/wikikg2"
cp -p "$GRAPH" "${COPY}/resources/scale/wikikg2/graph.npz"
cp -p "${REF}/sample.npz" "${COPY}/results/scale/wikikg2/sample.npz"
# SLURM jobs re-read the Snakefile and merge config/config.yaml with what they are given (tests/slurm_e2e.sh):
# the copy's default config is the one this run means, config/scale-ci.yaml's scale section with the shards
"$PY" - "$COPY" "$SHARDS" "$SYSTEMS" <<'PY'
import sys

import yaml

copy, shards, systems = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cfg = yaml.safe_load(open(f"{copy}/config/config.yaml"))
cfg["scale"] = yaml.safe_load(open(f"{copy}/config/scale-ci.yaml"))["scale"] | {"shards": shards, "systems": systems}
yaml.safe_dump(cfg, open(f"{copy}/config/config.yaml", "w"), sort_keys=False)
PY

say "snakemake --profile profiles/slurm-ci (scale_evaluate): ${SYSTEMS} systems, ${SHARDS} shards, in ${COPY}"
t0=$SECONDS
rc=0
(cd "$COPY" && PYTHONPATH="${COPY}/src" timeout -k 30 600 "$PY" -m snakemake --profile profiles/slurm-ci -- \
  results/scale/wikikg2/exact.csv) \
  >"${WORK}/slurm.log" 2>&1 || rc=$?
if ((rc != 0)); then
  tail -n 60 "${WORK}/slurm.log" >&2
  fail "the SLURM run exited ${rc} after $((SECONDS - t0)) s (log ${WORK}/slurm.log)"
fi
say "SLURM run done in $((SECONDS - t0)) s"

n_logs="$(find "${COPY}/.snakemake/slurm_logs/rule_scale_rank" -name '*.log' 2>/dev/null | wc -l)"
[ "$n_logs" = "$SHARDS" ] || fail "${n_logs} SLURM job logs of scale_rank, want one per shard (${SHARDS})"
grep -q "Job .* has been submitted with SLURM jobid" "${WORK}/slurm.log" || fail "no sbatch submission in the log"
for ((i = 0; i < SYSTEMS; i++)); do
  cmp -s "${REF}/ranks/system${i}.npz" "${COPY}/results/scale/wikikg2/ranks/system${i}.npz" ||
    fail "ranks/system${i}.npz: the ${SHARDS}-shard SLURM run differs from the unsharded run"
done
"$PY" - "$REF" "${COPY}/results/scale/wikikg2" "$SYSTEMS" <<'PY' || fail "the tables differ (above)"
import sys

import pandas as pd

ref, got, systems = sys.argv[1], sys.argv[2], int(sys.argv[3])
bad = []
for table, keys in (("exact", ["system"]), ("estimates", ["system"]), ("negatives", ["system"]),
                    ("paired", ["a", "b"])):
    a, b = pd.read_csv(f"{ref}/{table}.csv"), pd.read_csv(f"{got}/{table}.csv")
    a = a[(a[keys] < systems).all(axis=1)].reset_index(drop=True)
    if len(a) == 0 or not a.equals(b):
        bad.append(f"{table}.csv: {len(b)} rows, {len(a)} of the unsharded run's for systems < {systems}, not equal")
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
say "OK: ${SHARDS} shards in ${n_logs} SLURM jobs; rankings and tables equal to the unsharded run ($((SECONDS - t0)) s)"
[ "${SLURM_SCALE_KEEP:-0}" = 1 ] && say "scratch folder kept: ${WORK}" || rm -rf "$WORK"
