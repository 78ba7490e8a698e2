#!/usr/bin/env bash
# A dataset-scale run as a new user makes it: preflight errors timed, 2,000 claims augmented, the same run killed
# half way and resumed, its output compared row for row (scripts/dataset_scale.py). From a fresh clone:
#   d=$(mktemp -d) && git clone . "$d" && bash "$d/scripts/dataset_scale.sh" [--rows N] [--record]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TOKENIZERS_PARALLELISM=false
exec .venv/bin/python -m scripts.dataset_scale "$@"
