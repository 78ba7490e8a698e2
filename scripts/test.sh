#!/usr/bin/env bash
# Set up .venv if needed, then run the test suite (extra arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TOKENIZERS_PARALLELISM=false  # conftest.py points the Hub clients at a loopback server
# Two worker processes (pytest-xdist), a test file to each at a time, one torch thread each (conftest.py): on 2
# cores about 10 minutes instead of 15. CFAUG_TEST_WORKERS=0 runs in this process, as plain pytest does.
exec .venv/bin/python -m pytest -n "${CFAUG_TEST_WORKERS:-2}" --dist loadfile "$@"
