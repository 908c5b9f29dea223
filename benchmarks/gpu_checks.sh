#!/usr/bin/env bash
# Every GPU check in one call, for a lent NVIDIA GPU (run from the repository root by the device tool).
# Needs, carried beside the tree: .whl/ (pydantic, loadgen... wheels for the device's Python),
# .gpu_model/ (all-MiniLM-L6-v2 with fp16 weights) and .bench/gpu_reference.py (the shared reference loop).
# Writes everything under $OUT (or ./out when OUT is unset) and prints a short table last.
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "wheel install failed"; exit 3; }
  export PYTHONPATH=/tmp/site:$PWD/src
else
  export PYTHONPATH=$PWD/src
fi
[ -d .gpu_model ] && export ACCELPILOT_MINILM_DIR=$PWD/.gpu_model
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
python3 -c "import torch, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'python', sys.version.split()[0])"

step() {  # name, timeout, command...
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc in $(( $(date +%s) - t0 )) s"
  tail -n 25 "$OUT/$name.log"
}

[ -f .bench/gpu_reference.py ] && step reference 180 python3 .bench/gpu_reference.py
step train 210 python3 benchmarks/gpu_train.py
export GPU_SERVE_BUDGET_S=140
step serve 150 python3 benchmarks/gpu_serve.py
ls -la "$OUT"
