#!/usr/bin/env bash
# The GPU check: a few real steps of QLoRA and 8-bit LoRA DPO, LoRA GRPO in bf16 and (when vLLM is installed) GRPO
# with vLLM colocated, on the tiny offline model, each with its peak GPU memory. Installs nothing; sized for a few
# minutes on one GPU and capped at 280 s.
#
#   bash bench/gpu_check.sh [extra pytest arguments, e.g. -k dpo]
#
# Needs .venv from scripts/setup.sh with a CUDA build of torch; the 4/8-bit tests need the quant extra and the vLLM
# test the vllm extra (pip install -e '.[quant,vllm]'); a test whose package is missing is skipped and says so.
# Exit status: pytest's (124 when the time cap stopped it).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
if [[ ! -x $PY ]]; then
    echo "gpu_check: $PY not found. Fix: run scripts/setup.sh first." >&2
    exit 1
fi
gpus=""
if command -v nvidia-smi >/dev/null 2>&1; then
    gpus=$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || true)
fi
if [[ -z $gpus ]]; then
    echo "gpu_check: no GPU visible (nvidia-smi is missing or lists no device). Run this on a machine with a CUDA GPU." >&2
    exit 1
fi
echo "== GPU"
echo "$gpus"
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "gpu_check: the torch in .venv ($("$PY" -c 'import torch; print(torch.__version__)')) does not see CUDA." \
        "Fix: install a CUDA build of torch into .venv." >&2
    exit 1
fi
echo "== versions"
.venv/bin/textrl-train --env

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
report=$work/gpu_report.txt
log=$work/pytest.log
start=$SECONDS
echo "== pytest tests/gpu"
set +e
TEXTRL_GPU_REPORT=$report timeout 280 "$PY" -m pytest -q -rs tests/gpu -p no:cacheprovider "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

# pytest's last line, e.g. "3 passed, 1 skipped, 5 warnings in 95.20s (0:01:35)"
outcome=$(grep -E '^=* *[0-9]+ [a-z]+.* in [0-9.]+s' "$log" | tail -n 1 || true)
count() {
    local n
    n=$(grep -oE "[0-9]+ $1" <<<"$outcome" | head -n 1 | cut -d' ' -f1 || true)
    echo "${n:-0}"
}
echo
echo "== summary"
echo "passed $(count passed), failed $(count failed), skipped $(count skipped), errors $(count error)" \
    "(pytest exit $rc), $((SECONDS - start)) s"
if [[ $rc -eq 124 ]]; then
    echo "stopped by the 280 s cap: see the last test above"
fi
echo "peak GPU memory per test (torch.cuda.max_memory_allocated), steps, seconds; plan = textrl-train --dry-run's:"
if [[ -s $report ]]; then
    cat "$report"
else
    echo "    (no GPU test ran to the end)"
fi
exit "$rc"
