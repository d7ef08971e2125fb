#!/usr/bin/env bash
# The engines that run on a CPU, for the CI's engines leg: `bash scripts/engines.sh` installs DeepSpeed and its
# imports into .engines/ (not into .venv: the main suite runs without them) and prints the folder; run with it on
# the path:  PYTHONPATH=$(bash scripts/engines.sh) .venv/bin/python -m pytest tests/engines
# DeepSpeed comes as a source archive whose set-up imports torch: it is built against .venv's CPU torch
# (--no-build-isolation), so no other torch is fetched; DS_BUILD_OPS=0 compiles nothing at install. Its CPU ops are
# compiled on first use and cached in ~/.cache/torch_extensions (the shared-memory all-reduce: about 2.5 minutes on
# 2 cores). bitsandbytes is in .venv already (the dev extra): QLoRA's tests run in the main suite.
set -euo pipefail
cd "$(dirname "$0")/.."
DEEPSPEED=0.19.8
TARGET=.engines
if [ ! -f "$TARGET/deepspeed-$DEEPSPEED.ok" ]; then
    rm -rf "$TARGET"
    DS_BUILD_OPS=0 DS_ACCELERATOR=cpu .venv/bin/python -m pip install -q --no-deps --no-build-isolation \
        --target "$TARGET" "deepspeed==$DEEPSPEED" hjson ninja py-cpuinfo msgpack einops >&2
    touch "$TARGET/deepspeed-$DEEPSPEED.ok"
fi
echo "$PWD/$TARGET"
