#!/usr/bin/env bash
# On the GPU machine (device tool, carry gpu_carry): install what the image lacks, then run the suite into $OUT.
#   run(command="bash benchmarks/gpu_suite.sh", carry=["gpu_carry"], timeout_s=600)
set -euo pipefail
cd "$(dirname "$0")/.."
# `pip` on the image's PATH installs for another interpreter than its `python` (seen on the H200: datasets
# "installed" yet not importable), so the wheels go into a folder of their own through this python.
python -c "import datasets" 2>/dev/null || python -m pip install -q --no-deps --no-index --target /tmp/site gpu_carry/wheels/*.whl
export PYTHONPATH="$PWD:/tmp/site${PYTHONPATH:+:$PYTHONPATH}" TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
exec python -m benchmarks.gpu_suite run --out "${OUT:-benchmarks/results/gpu}" "$@"
