#!/usr/bin/env bash
# The one test command (README and .ci/run): generated code current, lint, types, then the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
echo "== codegen staleness check"
"$PY" -m textrl.codegen --check
echo "== ruff"
"$PY" -m ruff check .
"$PY" -m ruff format --check .
echo "== mypy"
"$PY" scripts/typecheck.py
echo "== pytest"
"$PY" -m pytest "$@"
