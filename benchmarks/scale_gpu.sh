#!/usr/bin/env bash
# The block engine on one GPU at Wikidata5M's full shape (4,594,485 entities x 10,266 questions, d = 128), its
# ranks checked against the CPU engine on a subsample; about 3-5 minutes on one H100/H200 with 16 cores.
# Numbers go to $OUT/scale_gpu.json (benchmarks/scale_gpu.py). SCALE_GPU_SMALL=1: a tiny instance (CPU check).
#   OUT=/tmp/out bash benchmarks/scale_gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-results/benchmarks}"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
PY="${KGEVAL_PYTHON:-python}"
nvidia-smi --query-gpu=name,memory.total --format=csv 2>/dev/null || echo "no nvidia-smi: CPU only"
args=(--out "$OUT")
[ "${SCALE_GPU_SMALL:-0}" = 1 ] && args+=(--small)
timeout 330 "$PY" benchmarks/scale_gpu.py "${args[@]}"
# the engine's CUDA test (CUDA and CPU give the same counts on exact integer scores), where pytest is installed
if "$PY" -c "import pytest" 2>/dev/null; then
  timeout 120 "$PY" -m pytest -q -x tests/test_scale_engine.py 2>&1 | tail -n 3 | tee "$OUT/scale_gpu_pytest.txt" || true
fi
