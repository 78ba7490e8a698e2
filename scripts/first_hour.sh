#!/usr/bin/env bash
# A new user's first hour, as the README gives it: set-up, the demo, each quick start alone in a fresh process, and
# every line of the README's command block, with a loopback Hub for the pushes. Prints a table; exits non-zero if
# any step fails. Run it from a fresh clone: d=$(mktemp -d) && git clone . "$d" && bash "$d/scripts/first_hour.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TOKENIZERS_PARALLELISM=false
exec .venv/bin/python -m scripts.first_hour "$@"
