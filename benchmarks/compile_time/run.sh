#!/usr/bin/env bash
# gpubudget compile-time benchmark (see README.md next to this script).
#
#   run.sh             full run: every case of generate.py x every compiler, median of 3 runs;
#                      prints a markdown table (about 2 minutes on 2 cores); exit 1 if any case
#                      fails with the default flags
#   run.sh --smoke     CTest smoke test: builds distinct_100 and repeat_1000 (or --cases) once with the default
#                      compiler ($CXX, else c++); exit 1 if either fails. With --margin P, at P % below
#                      the compiler's default constexpr limit (Clang's -fconstexpr-steps, GCC's
#                      -fconstexpr-ops-limit): a case that compiles so has P % of the default to spare
#   run.sh --limits    the smallest constexpr evaluation limit each case needs, by bisection to
#                      1%: Clang's -fconstexpr-steps, GCC's -fconstexpr-ops-limit (about 5 minutes)
#   run.sh --profile   where the time goes: GCC time/memory and Clang steps of the model alone,
#                      the forward walk alone, and chains of one layer kind; GCC -ftime-report
#                      (about 2 minutes)
#
# Options: --build-dir DIR (default: a fresh temporary directory, removed afterwards)
#          --include DIR   (default: <repo>/include)
#          --compilers "g++-12 clang++-14"   --runs N (default 3)   --cases "empty distinct_100 ..."
#          --margin P (--smoke only: compile at (100 - P) % of the default limit)
# Extra compiler flags come from $CXXFLAGS (e.g. -I/path/to/boost-1.81).
#
# Every case is compiled with `-std=c++20 -O0 -fsyntax-only -I<include>`: the constexpr
# evaluation, which is all the library costs, happens in the front end, and there is no code to
# generate (`-c -o /dev/null` measures the same within noise). GNU time (/usr/bin/time) gives
# user+sys CPU seconds ("seconds": robust when other jobs share the machine), elapsed seconds
# ("wall s") and peak RSS (%M, "peak MB"). Deltas are against `empty`, a file that only includes
# <gpubudget/gpubudget.hpp>, built with the same compiler and flags. A case that fails because it
# ran out of a constexpr evaluation limit (Clang's -fconstexpr-steps, GCC's
# -fconstexpr-ops-limit / -fconstexpr-loop-limit, either's -fconstexpr-depth) is re-run with the
# limit doubled until it compiles (up to 64x the default) and reported both ways, with the flag
# value it needed. Compilers run one at a time (the benchmark machine has 2 cores).
set -u

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(git -C "$script_dir" rev-parse --show-toplevel 2>/dev/null || (cd "$script_dir/../.." && pwd))

mode=full
build_dir=""
include_dir="$repo/include"
compilers=""
runs=3
cases=""
margin=0
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=smoke ;;
    --profile) mode=profile ;;
    --limits) mode=limits ;;
    --build-dir) build_dir=$2; shift ;;
    --include) include_dir=$2; shift ;;
    --compilers) compilers=$2; shift ;;
    --runs) runs=$2; shift ;;
    --cases) cases=$2; shift ;;
    --margin) margin=$2; shift ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

if [ -z "$build_dir" ]; then
  build_dir=$(mktemp -d "${TMPDIR:-/tmp}/gpubudget-compile-time.XXXXXX") || exit 2
  trap 'rm -rf "$build_dir"' EXIT
fi
mkdir -p "$build_dir"
python3 "$script_dir/generate.py" "$build_dir" || { echo "run.sh: generate.py failed" >&2; exit 2; }

read -r -a extra_flags <<<"${CXXFLAGS:-}"
base_flags=(-std=c++20 -O0 -fsyntax-only "-I$include_dir" "${extra_flags[@]}")

# --- helpers ---------------------------------------------------------------------------------
first_error() {  # first line of a diagnostic that says "error" (location relative to the build dir)
  grep -m1 -E 'error' "$1" | sed "s|$build_dir/||g" | cut -c1-200
}

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# measure COMPILER CASE [FLAGS...]: sets m_rc, m_cpu, m_wall, m_mb, m_err (first error line)
measure() {
  local cxx=$1 case=$2; shift 2
  local i u s e kb cpus="" walls="" mems="" out="$build_dir/$case.time" err="$build_dir/$case.err"
  m_rc=0
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f '%U %S %e %M' -o "$out" "$cxx" "${base_flags[@]}" "$@" "$build_dir/$case.cpp" 2>"$err" || m_rc=1
    read -r u s e kb < <(tail -n1 "$out")
    cpus+="$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u+s}') "
    walls+="$e "
    mems+="$kb "
    [ $m_rc -eq 0 ] || break  # a failure is reported once, not timed three times
  done
  m_cpu=$(tr ' ' '\n' <<<"$cpus" | grep . | median)
  m_wall=$(tr ' ' '\n' <<<"$walls" | grep . | median)
  m_mb=$(tr ' ' '\n' <<<"$mems" | grep . | median | awk '{printf "%.0f", $1/1024}')
  m_err=""
  if [ $m_rc -ne 0 ]; then m_err=$(first_error "$err"); fi
}

delta() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN{printf f, a-b}'; }

# limit_flag STDERR_FILE: prints "flag default" for a constexpr limit the diagnostic names
limit_flag() {
  if grep -q 'constexpr evaluation hit maximum step limit' "$1"; then echo "-fconstexpr-steps 1048576"
  elif grep -q 'operation count exceeds limit' "$1"; then echo "-fconstexpr-ops-limit 33554432"
  elif grep -q 'loop iteration count exceeds limit' "$1"; then echo "-fconstexpr-loop-limit 262144"
  elif grep -qE 'exceeded maximum depth|depth exceeds maximum' "$1"; then echo "-fconstexpr-depth 512"
  fi
}

is_clang() { "$1" --version 2>/dev/null | head -n1 | grep -q clang; }

# The evaluation limit a compiler counts against: "flag default".
budget_flag() { if is_clang "$1"; then echo "-fconstexpr-steps 1048576"; else echo "-fconstexpr-ops-limit 33554432"; fi; }

# min_limit COMPILER FLAG DEFAULT CASE: the smallest FLAG value (within 1%) that compiles CASE;
# empty if not even 64x the default does.
min_limit() {
  local cxx=$1 flag=$2 default=$3 c=$4 lo=0 hi=$3 mid
  ok_at() { "$cxx" "${base_flags[@]}" "$flag=$1" "$build_dir/$c.cpp" 2>/dev/null; }
  while ! ok_at "$hi"; do
    lo=$hi
    hi=$((hi * 2))
    [ $hi -le $((default * 64)) ] || return 0
  done
  while [ $((hi - lo)) -gt $((hi / 100)) ]; do
    mid=$(((lo + hi) / 2))
    if ok_at "$mid"; then hi=$mid; else lo=$mid; fi
  done
  echo "$hi"
}

version_of() {  # "g++ 12.2.0" / "clang++ 14.0.6"
  local line v
  line=$("$1" --version | head -n1)
  v=$(grep -oE '[0-9]+\.[0-9]+\.[0-9]+' <<<"$line" | tail -n1)
  case "$line" in *clang*) echo "clang++ $v" ;; *) echo "g++ $v" ;; esac
}

if [ -z "$compilers" ] && [ "$mode" != smoke ]; then
  for pair in "g++-12 g++" "clang++-14 clang++"; do
    for c in $pair; do
      if command -v "$c" >/dev/null 2>&1; then compilers="$compilers $c"; break; fi
    done
  done
fi

# --- smoke -----------------------------------------------------------------------------------
if [ "$mode" = smoke ]; then
  cxx=${CXX:-c++}
  status=0
  limit_flags=()
  if [ "$margin" -gt 0 ]; then
    # the defaults: Clang 14's -fconstexpr-steps 1,048,576; GCC 12's -fconstexpr-ops-limit 2^25
    if "$cxx" --version 2>/dev/null | grep -qi clang; then
      limit_flags=("-fconstexpr-steps=$((1048576 * (100 - margin) / 100))")
    else
      limit_flags=("-fconstexpr-ops-limit=$((33554432 * (100 - margin) / 100))")
    fi
  fi
  for c in ${cases:-distinct_100 repeat_1000}; do
    if "$cxx" "${base_flags[@]}" "${limit_flags[@]}" "$build_dir/$c.cpp" 2>"$build_dir/$c.smoke.err"; then
      echo "compile_time smoke: $c: ok ($cxx${limit_flags:+, ${limit_flags[*]}: $margin % of the default to spare})"
    else
      echo "compile_time smoke: $c: FAILED ($cxx): $(first_error "$build_dir/$c.smoke.err")"
      head -n 40 "$build_dir/$c.smoke.err"
      status=1
    fi
  done
  exit $status
fi

# --- limits ----------------------------------------------------------------------------------
if [ "$mode" = limits ]; then
  [ -n "$cases" ] || cases="distinct_100 distinct_400 distinct_1600 repeat_1000 batch_search_100 batch_search_400 batch_search_1600"
  echo "| case | compiler | limit flag | smallest value that compiles (±1%) | share of the default |"
  echo "|---|---|---|---:|---:|"
  for cxx in $compilers; do
    read -r flag default < <(budget_flag "$cxx")
    for c in $cases; do
      v=$(min_limit "$cxx" "$flag" "$default" "$c")
      if [ -z "$v" ]; then
        printf '| %s | %s | %s | > %s (or fails for another reason) | - |\n' "$c" "$(version_of "$cxx")" "$flag" "$((default * 64))"
      else
        printf '| %s | %s | %s | %s | %s%% |\n' "$c" "$(version_of "$cxx")" "$flag" "$v" "$((v * 100 / default))"
      fi
    done
  done
  exit 0
fi

[ -x /usr/bin/time ] || { echo "run.sh: needs GNU time at /usr/bin/time" >&2; exit 2; }

# --- profile ---------------------------------------------------------------------------------
if [ "$mode" = profile ]; then
  gxx="" clangxx=""
  for c in $compilers; do
    if is_clang "$c"; then [ -n "$clangxx" ] || clangxx=$c; else [ -n "$gxx" ] || gxx=$c; fi
  done
  [ -n "$cases" ] || cases="distinct_1600_model distinct_1600_totals profile_forward_1600 $(python3 "$script_dir/generate.py" "$build_dir" --list-profile | grep -v forward | tr '\n' ' ')"
  echo "Profile: $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg); GCC: median of $runs runs;"
  echo "Δ against distinct_1600_model (the 1,600-layer model built, not budgeted); Clang: smallest"
  echo "-fconstexpr-steps that compiles the case (±1%) and that divided by 1,600 layers."
  echo
  echo "| case | g++ seconds | g++ peak MB | g++ Δ s vs model only | g++ Δ MB vs model only | clang steps | clang steps / layer |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  base_cpu="" base_mb=""
  for c in $cases; do
    cpu=- mb=- dcpu=- dmb=- steps=- per=-
    if [ -n "$gxx" ]; then
      measure "$gxx" "$c" -fconstexpr-ops-limit=1073741824
      if [ $m_rc -eq 0 ]; then
        cpu=$m_cpu mb=$m_mb
        if [ "$c" = distinct_1600_model ]; then base_cpu=$m_cpu base_mb=$m_mb; fi
        if [ -n "$base_cpu" ]; then dcpu=$(delta "$cpu" "$base_cpu" "%+.2f"); dmb=$(delta "$mb" "$base_mb" "%+d"); fi
      else cpu="FAILED: ${m_err//|/\\|}"; fi
    fi
    if [ -n "$clangxx" ] && [ "$c" != distinct_1600_model ]; then
      steps=$(min_limit "$clangxx" -fconstexpr-steps 1048576 "$c")
      if [ -n "$steps" ]; then per=$((steps / 1600)); else steps="> 64x default"; fi
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$c" "$cpu" "$mb" "$dcpu" "$dmb" "$steps" "$per"
  done
  if [ -n "$gxx" ]; then
    for c in distinct_1600_model distinct_1600; do
      echo
      echo "$gxx -ftime-report, $c (phases over 1%; wall is unreliable on a shared machine):"
      echo '```'
      "$gxx" "${base_flags[@]}" -ftime-report "$build_dir/$c.cpp" 2>&1 \
        | grep -E '^ (TOTAL|phase parsing|constant expression evaluation|template instantiation|parser|preprocessing|\|name lookup|\|overload)' \
        | sort -t: -k2 -rn
      echo '```'
    done
  fi
  exit 0
fi

# --- full ------------------------------------------------------------------------------------
[ -n "$cases" ] || cases=$(python3 "$script_dir/generate.py" "$build_dir" --list | tr '\n' ' ')

row() {  # case compiler cpu wall mb dcpu dmb result
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$@"
}

start=$(date +%s)
echo "Compile-time benchmark: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);"
echo "flags: ${base_flags[*]}; median of $runs runs; seconds = user+sys CPU of the compiler, wall = elapsed."
echo
echo "| case | compiler | seconds | wall s | peak MB | Δ seconds vs empty | Δ MB vs empty | result |"
echo "|---|---|---:|---:|---:|---:|---:|---|"
overall=0
for cxx in $compilers; do
  ver=$(version_of "$cxx")
  measure "$cxx" empty
  e_cpu=$m_cpu e_mb=$m_mb
  if [ $m_rc -ne 0 ]; then
    row empty "$ver" "$m_cpu" "$m_wall" "$m_mb" - - "FAILED: ${m_err//|/\\|}"; overall=1; continue
  fi
  for c in $cases; do
    if [ "$c" = empty ]; then row empty "$ver" "$m_cpu" "$m_wall" "$m_mb" 0 0 ok; continue; fi
    measure "$cxx" "$c"
    if [ $m_rc -eq 0 ]; then
      row "$c" "$ver" "$m_cpu" "$m_wall" "$m_mb" "$(delta "$m_cpu" "$e_cpu" "%+.2f")" "$(delta "$m_mb" "$e_mb" "%+d")" ok
      continue
    fi
    overall=1
    flag="" default=""
    read -r flag default < <(limit_flag "$build_dir/$c.err")
    why=""
    if [ -n "$flag" ]; then why=" (out of the constexpr limit $flag=$default)"; fi
    row "$c" "$ver" "$m_cpu" "$m_wall" "$m_mb" "$(delta "$m_cpu" "$e_cpu" "%+.2f")" "$(delta "$m_mb" "$e_mb" "%+d")" "FAILED$why: ${m_err//|/\\|}"
    [ -n "$flag" ] || continue
    # Double the limit until it compiles (64x the default at most). Keep doubling even when the
    # limit is no longer named: GCC 12 sometimes reports a raised-but-still-too-low
    # -fconstexpr-ops-limit only as "non-constant condition for static assertion".
    value=$default verdict=failed
    for _ in 1 2 3 4 5 6; do
      value=$((value * 2))
      if "$cxx" "${base_flags[@]}" "$flag=$value" "$build_dir/$c.cpp" 2>"$build_dir/$c.retry.err"; then verdict=ok; break; fi
    done
    measure "$cxx" "$c" "$flag=$value"
    if [ $verdict = ok ]; then
      result="ok with $flag=$value ($((value / default))x the default; $((value / 2)) is not enough)"
    else
      result="still FAILED at $flag=$value (64x the default): ${m_err//|/\\|}"
    fi
    row "$c ($flag=$value)" "$ver" "$m_cpu" "$m_wall" "$m_mb" "$(delta "$m_cpu" "$e_cpu" "%+.2f")" "$(delta "$m_mb" "$e_mb" "%+d")" "$result"
  done
done
echo
echo "Total benchmark time: $(( $(date +%s) - start )) s."
exit $overall
