#!/usr/bin/env bash
# benchmarks/gpu/run_open_questions3.sh — the third device call of the 2026-11-26 session (~2 min):
# ResNet-18 fp32 at batch 4, 8, 16, 32 and ResNet-50 fp32 at batch 32, traced, to find the batch
# at which cuDNN's weight gradient starts staging layout copies (op_rules.md CV4). $OUT/open-questions3.tgz.
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
out="${OUT:-$repo/benchmarks/accuracy/out}"
work="$(mktemp -d /tmp/gb_open3.XXXXXX)"
export PYTHONUNBUFFERED=1
timeout -k 5 200 python3 benchmarks/gpu/measure_real_libraries.py --extra --trace "$work/traces" --out "$work/batches.json" \
  --budget 170 --case-timeout 60 --cases tv_resnet18_b4_,tv_resnet18_b8_,tv_resnet18_b16_,tv_resnet18_b32_,tv_resnet50_b32_ 2>&1 | tee "$work/batches.log"
tar czf "$out/open-questions3.tgz" -C "$work" . && tar tzvf "$out/open-questions3.tgz"
