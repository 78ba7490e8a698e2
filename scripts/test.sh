#!/usr/bin/env bash
# Set up .venv if needed, then run the test suite (extra arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TOKENIZERS_PARALLELISM=false  # conftest.py points the Hub clients at a loopback server
exec .venv/bin/python -m pytest "$@"
