#!/usr/bin/env bash
# The project's test command (README.md): unit tests, workflow lint and format checks, a dry run of the default
# config, and the data stage of the default config (offline when KGEVAL_MIRROR points at a mirror).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONHASHSEED=0

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
if [ -n "${KGEVAL_MIRROR:-}" ]; then
  echo "== Table 1 from the mirrored data (default config)"
  snakemake --cores 2 --quiet rules -- results/tables/table1.csv results/tables/resources.csv
  cat results/tables/table1.md
fi
