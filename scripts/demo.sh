#!/usr/bin/env bash
# Set up .venv if needed, then run the main job (CrossAug on the embedded FEVEROUS sample, offline).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/cfaug demo "$@"
