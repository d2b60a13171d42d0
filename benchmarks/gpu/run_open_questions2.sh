#!/usr/bin/env bash
# benchmarks/gpu/run_open_questions2.sh — the second device call of the 2026-11-26 session: what the
# first (run_open_questions.sh) left: PEFT DoRA, two largest-batch searches on models the H100 file
# lacks (ResNet-50 and EfficientNet-B0, fp32, 16 GiB), and the decoder models' torch.export graphs
# (use_cache=False). Output: $OUT/open-questions2.tgz.
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
out="${OUT:-$repo/benchmarks/accuracy/out}"
work="$(mktemp -d /tmp/gb_open2.XXXXXX)"
export PYTHONUNBUFFERED=1
(CUDA_VISIBLE_DEVICES= timeout -k 5 200 python3 benchmarks/gpu/dump_transformers_graphs.py --out "$work/graphs" \
  --models gpt2,tinyllama,t5_small,bert_mlm >"$work/graphs.log" 2>&1) &
dump=$!
m=benchmarks/gpu/measure_real_libraries.py
timeout -k 5 250 python3 $m --extra --out "$work/new-cases2.json" --budget 200 --case-timeout 150 \
  --cases dora,maxbatch16_resnet50,maxbatch16_efficientnet 2>&1 | tee "$work/new-cases2.log"
wait "$dump"; grep -v '^ ' "$work/graphs.log" | cut -c1-300
tar czf "$out/open-questions2.tgz" -C "$work" . && tar tzvf "$out/open-questions2.tgz"
