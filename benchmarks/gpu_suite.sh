#!/usr/bin/env bash
# On the GPU machine (device tool, carry gpu_carry): install what the image lacks, then run the suite into $OUT.
#   run(command="bash benchmarks/gpu_suite.sh", carry=["gpu_carry"], timeout_s=600)
set -euo pipefail
cd "$(dirname "$0")/.."
python -c "import datasets" 2>/dev/null || pip install -q --no-deps gpu_carry/wheels/*.whl
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
exec python -m benchmarks.gpu_suite run --out "${OUT:-benchmarks/results/gpu}" "$@"
