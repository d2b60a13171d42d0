#!/usr/bin/env bash
# gpubudget compile-time benchmark.
#
#   run.sh                  full run: every case (generate.py) x every compiler, 3 runs each,
#                           median; prints a markdown table (about 2 minutes on 2 cores)
#   run.sh --smoke          CTest smoke test: builds distinct_100 and repeat_1000 once with the
#                           default compiler ($CXX, else c++); exit 1 if either fails
#   run.sh --profile        GCC -ftime-report of distinct_1600_model vs distinct_1600
#
# Options: --build-dir DIR (default: a fresh temporary directory, removed afterwards)
#          --include DIR   (default: <repo>/include)
#          --compilers "g++-12 clang++-14"   --runs N (default 3)   --cases "empty distinct_100 ..."
# Extra compiler flags come from $CXXFLAGS (e.g. -I/path/to/boost-1.81).
#
# Every case is compiled with `-std=c++20 -O0 -fsyntax-only -I<include>` (the constexpr
# evaluation, which is all the library costs, happens in the front end; there is no code to
# generate) and measured with GNU time: user+sys CPU seconds and peak RSS (%M). Deltas are
# against `empty`, a file that only includes <gpubudget/gpubudget.hpp>, built with the same
# compiler and flags. A case that fails because it ran out of a constexpr evaluation limit
# (Clang's -fconstexpr-steps, GCC's -fconstexpr-ops-limit / -fconstexpr-loop-limit, either's
# -fconstexpr-depth) is re-run with the limit doubled until it compiles (up to 64x the default)
# and reported both ways, with the flag value it needed.
# Compilers run one at a time (the benchmark machine has 2 cores).
set -u

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(git -C "$script_dir" rev-parse --show-toplevel 2>/dev/null || (cd "$script_dir/../.." && pwd))

mode=full
build_dir=""
include_dir="$repo/include"
compilers=""
runs=3
cases=""
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=smoke ;;
    --profile) mode=profile ;;
    --build-dir) build_dir=$2; shift ;;
    --include) include_dir=$2; shift ;;
    --compilers) compilers=$2; shift ;;
    --runs) runs=$2; shift ;;
    --cases) cases=$2; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
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

# ---------------------------------------------------------------------------------------------
first_error() {  # first line of a diagnostic that says "error" (location relative to the build dir)
  grep -m1 -E 'error' "$1" | sed "s|$build_dir/||g" | cut -c1-200
}

if [ "$mode" = smoke ]; then
  cxx=${CXX:-c++}
  status=0
  for c in distinct_100 repeat_1000; do
    if "$cxx" "${base_flags[@]}" "$build_dir/$c.cpp" 2>"$build_dir/$c.smoke.err"; then
      echo "compile_time smoke: $c: ok ($cxx)"
    else
      echo "compile_time smoke: $c: FAILED ($cxx): $(first_error "$build_dir/$c.smoke.err")"
      head -n 40 "$build_dir/$c.smoke.err"
      status=1
    fi
  done
  exit $status
fi

if [ -z "$compilers" ]; then
  for pair in "g++-12 g++" "clang++-14 clang++"; do
    for c in $pair; do
      if command -v "$c" >/dev/null 2>&1; then compilers="$compilers $c"; break; fi
    done
  done
fi

if [ "$mode" = profile ]; then
  gxx=$(for c in $compilers; do "$c" --version 2>/dev/null | grep -q 'Free Software' && echo "$c" && break; done)
  [ -n "$gxx" ] || { echo "run.sh --profile needs GCC" >&2; exit 2; }
  for c in empty distinct_1600_model distinct_1600_budget distinct_1600; do
    echo "### $gxx -ftime-report: $c"
    echo '```'
    "$gxx" "${base_flags[@]}" -ftime-report "$build_dir/$c.cpp" 2>&1 \
      | grep -E '^ (TOTAL|phase parsing|constant expression evaluation|template instantiation|parser|preprocessing|\|name lookup|\|overload)' \
      | sort -t: -k2 -rn
    echo '```'
  done
  exit 0
fi

# ---------------------------------------------------------------------------------------------
[ -x /usr/bin/time ] || { echo "run.sh: needs GNU time at /usr/bin/time" >&2; exit 2; }
[ -n "$cases" ] || cases=$(python3 "$script_dir/generate.py" "$build_dir" --list | tr '\n' ' ')

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# measure COMPILER CASE [FLAGS...]: sets m_rc, m_cpu, m_wall, m_mb, m_err (first error line)
measure() {
  local cxx=$1 case=$2; shift 2
  local i cpus="" walls="" mems="" out="$build_dir/$case.time" err="$build_dir/$case.err"
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
  [ $m_rc -eq 0 ] || m_err=$(first_error "$err")
}

# limit_flag STDERR_FILE COMPILER: prints "flag default" for a constexpr limit the error names
limit_flag() {
  if grep -q 'constexpr evaluation hit maximum step limit' "$1"; then echo "-fconstexpr-steps 1048576"
  elif grep -q 'operation count exceeds limit' "$1"; then echo "-fconstexpr-ops-limit 33554432"
  elif grep -q 'loop iteration count exceeds limit' "$1"; then echo "-fconstexpr-loop-limit 262144"
  elif grep -qE 'exceeded maximum depth|depth exceeds maximum' "$1"; then echo "-fconstexpr-depth 512"
  fi
}

version_of() {  # "g++ 12.2.0" / "clang++ 14.0.6"
  local line v
  line=$("$1" --version | head -n1)
  v=$(grep -oE '[0-9]+\.[0-9]+\.[0-9]+' <<<"$line" | tail -n1)
  case "$line" in *clang*) echo "clang++ $v" ;; *) echo "g++ $v" ;; esac
}

row() {  # case compiler cpu wall mb dcpu dmb result
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$@"
}

start=$(date +%s)
echo "Compile-time benchmark: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg),"
echo "flags: ${base_flags[*]}, median of $runs runs, seconds = user+sys CPU of the compiler, wall = elapsed."
echo
echo "| case | compiler | seconds | wall s | peak MB | Δ seconds vs empty | Δ MB vs empty | result |"
echo "|---|---|---:|---:|---:|---:|---:|---|"
overall=0
for cxx in $compilers; do
  ver=$(version_of "$cxx")
  measure "$cxx" empty
  e_cpu=$m_cpu e_mb=$m_mb
  if [ $m_rc -ne 0 ]; then
    row empty "$ver" "$m_cpu" "$m_wall" "$m_mb" - - "FAILED: $m_err"; overall=1; continue
  fi
  for c in $cases; do
    [ "$c" = empty ] && { row empty "$ver" "$m_cpu" "$m_wall" "$m_mb" 0 0 ok; continue; }
    measure "$cxx" "$c"
    dcpu=$(awk -v a="$m_cpu" -v b="$e_cpu" 'BEGIN{printf "%+.2f", a-b}')
    dmb=$(awk -v a="$m_mb" -v b="$e_mb" 'BEGIN{printf "%+d", a-b}')
    if [ $m_rc -eq 0 ]; then
      row "$c" "$ver" "$m_cpu" "$m_wall" "$m_mb" "$dcpu" "$dmb" ok
      continue
    fi
    read -r flag default < <(limit_flag "$build_dir/$c.err") || true
    why=""
    [ -n "${flag:-}" ] && why=" (constexpr limit: needs more than $flag=$default)"
    row "$c" "$ver" "$m_cpu" "$m_wall" "$m_mb" "$dcpu" "$dmb" "FAILED$why: ${m_err//|/\\|}"
    overall=1
    [ -n "${flag:-}" ] || continue
    value=$default verdict=limit
    for _ in 1 2 3 4 5 6; do  # double the limit until it compiles (64x the default at most)
      value=$((value * 2))
      if "$cxx" "${base_flags[@]}" "$flag=$value" "$build_dir/$c.cpp" 2>"$build_dir/$c.retry.err"; then verdict=ok; break; fi
      [ -n "$(limit_flag "$build_dir/$c.retry.err")" ] || { verdict=other; break; }
    done
    case $verdict in
      ok)
        measure "$cxx" "$c" "$flag=$value"
        dcpu=$(awk -v a="$m_cpu" -v b="$e_cpu" 'BEGIN{printf "%+.2f", a-b}')
        dmb=$(awk -v a="$m_mb" -v b="$e_mb" 'BEGIN{printf "%+d", a-b}')
        row "$c ($flag=$value)" "$ver" "$m_cpu" "$m_wall" "$m_mb" "$dcpu" "$dmb" "ok with $flag=$value ($((value / default))x the default; $((value / 2)) failed)" ;;
      other)
        measure "$cxx" "$c" "$flag=$value"
        dcpu=$(awk -v a="$m_cpu" -v b="$e_cpu" 'BEGIN{printf "%+.2f", a-b}')
        dmb=$(awk -v a="$m_mb" -v b="$e_mb" 'BEGIN{printf "%+d", a-b}')
        row "$c ($flag=$value)" "$ver" "$m_cpu" "$m_wall" "$m_mb" "$dcpu" "$dmb" "evaluation fits $flag=$value ($((value / 2)) did not), but FAILED: ${m_err//|/\\|}" ;;
      *) row "$c ($flag=$value)" "$ver" - - - - - "still out of the constexpr limit at $flag=$value" ;;
    esac
    flag=""
  done
done
echo
echo "Total benchmark time: $(( $(date +%s) - start )) s."
exit $overall
