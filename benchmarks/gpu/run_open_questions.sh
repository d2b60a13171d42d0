#!/usr/bin/env bash
# benchmarks/gpu/run_open_questions.sh — one device call (~7 minutes) for what the committed H100
# files leave open (see EXTRA_CASES in measure_real_libraries.py):
#   1. allocator traces (--trace) of the real-library cases whose reserved peak the estimate misses
#      (ResNet-18 b64, EfficientNet-B0 b32, T5-small b16) and of single capped trials one batch above
#      the measured largest batch (ViT-B/16 115, T5-small 23);
#   2. new cases the H100 files lack: ResNet-50 b64 fp32, DenseNet-121 b32 fp16, reentrant
#      checkpointing, PEFT DoRA;
#   3. on the CPU, in parallel: transformers' own models exported with torch.export
#      (dump_transformers_graphs.py) for the exporter.
# Everything lands in $OUT as open-questions.tgz (+ the log).
#     run(command="bash benchmarks/gpu/run_open_questions.sh", timeout_s=480)
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
out="${OUT:-$repo/benchmarks/accuracy/out}"
work="$(mktemp -d /tmp/gb_open.XXXXXX)"
export PYTHONUNBUFFERED=1
{ nvidia-smi; python3 -c 'import torch, transformers, peft, torchvision; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), transformers.__version__, peft.__version__, torchvision.__version__)'; } >"$work/machine.txt" 2>&1
(CUDA_VISIBLE_DEVICES= timeout -k 5 "${GB_DUMP_S:-330}" python3 benchmarks/gpu/dump_transformers_graphs.py --out "$work/graphs" >"$work/graphs.log" 2>&1) &
dump=$!
m=benchmarks/gpu/measure_real_libraries.py
timeout -k 5 "${GB_TRACE_S:-240}" python3 $m --extra --trace "$work/traces" --out "$work/traced.json" --budget 170 --case-timeout 120 \
  --cases tv_resnet18_b64,tv_efficientnet_b0_b32,hf_t5_small_b16,cap16_vit_b_16_b115,cap16_t5_small_b23 2>&1 | tee "$work/traced.log"
timeout -k 5 "${GB_NEW_S:-110}" python3 $m --extra --out "$work/new-cases.json" --budget 80 --case-timeout 60 \
  --cases tv_resnet50_b64,tv_densenet121,reentrant,dora 2>&1 | tee "$work/new-cases.log"
wait "$dump"; tail -20 "$work/graphs.log"
tar czf "$out/open-questions.tgz" -C "$work" . && ls -la "$out" && tar tzvf "$out/open-questions.tgz" | head -40
