#!/usr/bin/env bash
# An older TRL release over .venv, for the CI legs: `bash scripts/trl_release.sh 1.13.0` installs that TRL alone
# (no dependencies: torch, transformers, accelerate and datasets are .venv's, which every supported release accepts)
# into .trl-releases/1.13.0 and prints the folder; run with it first on the path:
#   PYTHONPATH=$(bash scripts/trl_release.sh 1.13.0) .venv/bin/python -m pytest tests/drift  (absolute: subprocesses run elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:?usage: scripts/trl_release.sh VERSION}
TARGET=.trl-releases/$VERSION
if [ ! -f "$TARGET/trl/__init__.py" ]; then
    rm -rf "$TARGET"
    .venv/bin/python -m pip install -q --no-deps --target "$TARGET" "trl==$VERSION" >&2
fi
echo "$PWD/$TARGET"
