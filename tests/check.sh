#!/usr/bin/env bash
# The project's test command (README.md). In order:
#   1. static checks and unit tests: ruff, pytest, snakemake --lint, snakefmt --check;
#   2. the default configuration: a dry run (its data stage, Table 1, runs last when KGEVAL_MIRROR points at a
#      mirror);
#   3. the whole workflow on the tiny synthetic configuration, and its HTML report;
#   4. fault tolerance: kill the tiny workflow during training and during a score dump, rerun, and compare every
#      table with the uninterrupted run of step 3 (--cores 1 against --cores 2);
#   5. the tiny workflow through a real one-node SLURM cluster brought up by .ci/slurm-up.sh, compared with a
#      local run (skipped with a message when SLURM cannot be installed; KGEVAL_SKIP_SLURM=1 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONHASHSEED=0
PY="$(command -v python)"

echo "== ruff"
ruff check .
echo "== pytest"
python -m pytest -q
echo "== snakemake --lint"
snakemake --lint
echo "== snakefmt --check"
snakefmt --check .
echo "== dry run of the default config"
snakemake --dry-run --cores 2 --quiet rules --

echo "== the tiny workflow (config/tiny.yaml) and its report"
TINY=(--configfile config/tiny.yaml --replace-workflow-config)
mkdir -p logs
# the full log is the SLURM comparison's record of the planned jobs (step 5)
timeout 2400 snakemake --profile profiles/workstation --cores 2 "${TINY[@]}" >logs/tiny-run.log 2>&1 ||
  { tail -n 60 logs/tiny-run.log; exit 1; }
grep -E '[0-9]+ of [0-9]+ steps' logs/tiny-run.log | tail -n 1
snakemake "${TINY[@]}" --report report-tiny.zip --quiet rules
test -s report-tiny.zip
cat results/tables/table3.md results/tables/table4.md results/tables/model_quality.md results/tables/findings.md

echo "== fault tolerance (kill during training and during a score dump, rerun, compare)"
timeout 2400 python tests/fault_tolerance_e2e.py --python "$PY" --reference .

if [ "${KGEVAL_SKIP_SLURM:-0}" = "1" ]; then
  echo "== SLURM: skipped (KGEVAL_SKIP_SLURM=1)"
elif bash .ci/slurm-up.sh; then
  echo "== the tiny workflow through SLURM, compared with a local run"
  trap 'bash .ci/slurm-down.sh || true' EXIT
  # the tiny run of step 3 is the local run the SLURM run is compared with
  KGEVAL_PYTHON="$PY" E2E_REFERENCE=. E2E_REFERENCE_LOG=logs/tiny-run.log bash tests/slurm_e2e.sh
else
  echo "== SLURM: could not bring up a cluster on this machine (see the messages above); skipped"
fi

# last, so that results/ held only the tiny run's outputs while steps 4 and 5 compared them
if [ -n "${KGEVAL_MIRROR:-}" ]; then
  echo "== Table 1 from the mirrored data (default config)"
  snakemake --cores 2 --quiet rules -- results/tables/table1.csv results/tables/resources.csv
  cat results/tables/table1.md
fi
