#!/usr/bin/env bash
# benchmarks/gpu/run_on_device.sh — the one command for the lent GPU machine (the device tool's `run`).
#
# Here, once per checkout (copies the Boost.Hana headers the C++ probe needs into .gpucarry/, ignored
# by git, in case the GPU image has no Boost):
#     benchmarks/gpu/run_on_device.sh --prepare
# Then one device call, from the repository root, carrying that folder:
#     run(command="bash benchmarks/gpu/run_on_device.sh", carry=[".gpucarry"], timeout_s=600)
# A smoke run first is not needed; if wanted: "bash benchmarks/gpu/run_on_device.sh --quick" (~1 min).
#
# Installs nothing; uses the machine's python3 (PyTorch with CUDA), cmake, ninja and the CUDA toolkit.
# The C++ probe is built into a temp dir. Everything lands in $OUT (or benchmarks/accuracy/out/ when
# $OUT is unset): pytorch-<torch major.minor>-cuda-<gpu>.json (the reference to commit as
# benchmarks/accuracy/reference/), measure_cuda.log and machine.txt. The Python run is limited to
# GB_LIMIT_S seconds (default 560) and stops starting cases 170 s before that (the fresh-process runs and the
# EAGER context child come after the cases), so the whole command fits
# one 10-minute call; the JSON is rewritten after every case, so a cut-off run keeps what it measured.
# Extra arguments go to measure_cuda.py (--quick, --cases a,b, --no-probe, ...).
#
# The real-library cases and the largest-batch-under-16-GiB searches (measure_real_libraries.py)
# run after it, twice: with the default allocator (real-libraries-<gpu>.json) and with
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (real-libraries-<gpu>-expandable.json); the
# file's environment records the setting and `gpubudget --reference FILE` estimates with it.
# GB_PARTS picks what runs (default "cuda,real,real-expandable": everything, ~20 minutes on an
# H100); each part gets GB_LIMIT_S seconds. In 10-minute device calls, one part per call:
#     run(command="GB_PARTS=cuda bash benchmarks/gpu/run_on_device.sh", carry=[".gpucarry"])
#     run(command="GB_PARTS=real bash benchmarks/gpu/run_on_device.sh")
#     run(command="GB_PARTS=real-expandable bash benchmarks/gpu/run_on_device.sh")
# GB_REAL_ARGS passes arguments to measure_real_libraries.py (e.g. "--cases tv_,maxbatch16_resnet18").
# Any GPU: the device is whichever the machine has (an H200 names its files -h200; the maxbatch
# cases emulate a 16 GiB device on it from that GPU's own measured non-allocator bytes).
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"

if [ "${1:-}" = --prepare ]; then
  src="${GPUBUDGET_HANA_INCLUDE:-/usr/include}"
  [ -f "$src/boost/hana.hpp" ] || { echo "run_on_device.sh: no $src/boost/hana.hpp (set GPUBUDGET_HANA_INCLUDE)" >&2; exit 1; }
  dst="$repo/.gpucarry/include/boost"
  rm -rf "$repo/.gpucarry" && mkdir -p "$dst"
  cp -r "$src/boost/hana" "$src/boost/hana.hpp" "$dst/"
  grep -qxF '/.gpucarry/' "$repo/.gitignore" 2>/dev/null || echo "warning: .gpucarry/ is not in .gitignore" >&2
  echo "copied Boost.Hana (Boost $(awk '/define BOOST_LIB_VERSION/ {print $3}' "$src/boost/version.hpp" 2>/dev/null), $(du -sh "$repo/.gpucarry" | cut -f1)) to .gpucarry/include; carry [\".gpucarry\"] in the device call"
  exit 0
fi

out="${OUT:-$repo/benchmarks/accuracy/out}"
mkdir -p "$out"
limit="${GB_LIMIT_S:-560}"
budget=$((limit - 170))
log="$out/measure_cuda.log"
export PYTHONUNBUFFERED=1
cd "$repo"

{
  echo "== $(date -u +%FT%TZ)  $(uname -srm)"
  nvidia-smi || true
  python3 -c 'import sys, torch; print(sys.executable, "torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' || true
  python3 -m pip list 2>/dev/null | grep -i -E "^(torch|torchvision|triton|nvidia-cudnn-cu[0-9]+|nvidia-cublas[-a-z0-9]*) " || true
  command -v nvcc >/dev/null && nvcc --version | tail -2
  cmake --version | head -1; command -v ninja || true
  echo "CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-} PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-}"
  hana=no; for d in /usr/include /usr/local/include .gpucarry/include; do
    [ -f "$d/boost/hana.hpp" ] && { echo "Boost.Hana: $d"; hana=yes; }; done
  [ "$hana" = yes ] || echo "no Boost.Hana found (the C++ probe will be skipped; run --prepare here and carry .gpucarry)"
} >"$out/machine.txt" 2>&1

parts=",${GB_PARTS:-cuda,real,real-expandable},"
rc=0
case "$parts" in *,cuda,*) ;; *) skip_cuda=yes ;; esac

# The real-library cases, in the allocator setting given ("" = PyTorch's default): $1 = file suffix.
real_libraries() {
  local suffix="$1" conf="$2" json="$out/real-libraries$1.json" name r
  echo "== measure_real_libraries.py PYTORCH_CUDA_ALLOC_CONF=$conf" | tee -a "$out/measure_real_libraries.log"
  # shellcheck disable=SC2086  # GB_REAL_ARGS is a list of arguments
  PYTORCH_CUDA_ALLOC_CONF="$conf" timeout -k 10 "$limit" python3 benchmarks/gpu/measure_real_libraries.py --out "$json" \
    --budget "$((limit - 60))" ${GB_REAL_ARGS:-} 2>&1 | tee -a "$out/measure_real_libraries.log"
  r=${PIPESTATUS[0]}
  echo "measure_real_libraries.py$suffix exit $r" | tee -a "$out/measure_real_libraries.log"
  # Named as the reference it becomes: real-libraries-<gpu>[-expandable].json (h100, h200, ...)
  if [ -f "$json" ]; then
    name="$(python3 -c 'import json, sys; g = (json.load(open(sys.argv[1]))["environment"].get("gpu") or "cpu").lower().replace("nvidia", "").split(); print(g[0] if g else "unknown")' "$json")"
    mv "$json" "$out/real-libraries-$name$suffix.json" && echo "result: $out/real-libraries-$name$suffix.json"
  fi
  [ "$r" = 0 ] || rc=$r
}

if [ -z "${skip_cuda:-}" ]; then
build="$(mktemp -d /tmp/gpubudget_probe.XXXXXX)"
json="$out/pytorch-cuda.json"
timeout -k 10 "$limit" python3 benchmarks/gpu/measure_cuda.py --out "$json" --probe-build-dir "$build" \
  --budget "$budget" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
echo "measure_cuda.py exit $rc" | tee -a "$log"

# Name it as the reference it becomes: pytorch-<major.minor>-cuda-<gpu>.json
if [ -f "$json" ]; then
  name="$(python3 - "$json" <<'PY'
import json, re, sys
e = json.load(open(sys.argv[1]))["environment"]
ver = ".".join(e["torch"].split("+")[0].split(".")[:2])
gpu = re.sub(r"[^a-z0-9]+", "-", (e.get("gpu") or e.get("device") or "unknown").lower().replace("nvidia", "")).strip("-")
print("pytorch-%s-cuda-%s.json" % (ver, gpu) if e.get("device") == "cuda" else "pytorch-%s-%s-dryrun.json" % (ver, gpu))
PY
)" && [ -n "$name" ] && mv "$json" "$out/$name" && echo "result: $out/$name" | tee -a "$log"
fi
rm -rf "$build"
fi

case "$parts" in *,real,*) real_libraries "" "" ;; esac
case "$parts" in *,real-expandable,*) real_libraries "-expandable" "expandable_segments:True" ;; esac
exit "$rc"
