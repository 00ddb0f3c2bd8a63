#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang, ASan and UBSan
# (build-fuzz/) and runs each for SECONDS (default 60) from its seed corpus
# in fuzz/corpus/. New corpus entries go to a temporary directory, never into
# the repository; crashes, leaks and timeouts are saved under
# build-fuzz/artifacts/<target>/ and make the script exit non-zero.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(trace_fuzz runtime_fuzz)
start=$SECONDS
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g" \
  -DDTR_SANITIZE=address,undefined -DDTR_BUILD_FUZZ=ON \
  -DDTR_BUILD_TESTS=OFF -DDTR_BUILD_TORCH=OFF -DDTR_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target "${targets[@]}"
echo "fuzz.sh: built in $((SECONDS - start)) s"

# Per target: longest input (a trace of ~50 lines; ~200 runtime operations)
# and extra flags.
declare -A max_len=([trace_fuzz]=4096 [runtime_fuzz]=1024)
declare -A extra=([trace_fuzz]="-dict=fuzz/trace.dict" [runtime_fuzz]="")
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for t in "${targets[@]}"; do
  artifacts=build-fuzz/artifacts/$t
  mkdir -p "$artifacts" "$work/$t"
  echo "fuzz.sh: $t for $seconds s"
  # The first directory receives new inputs; the seed corpus is only read.
  # shellcheck disable=SC2086
  if ! build-fuzz/fuzz/$t -max_total_time="$seconds" -max_len="${max_len[$t]}" \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" ${extra[$t]} \
      "$work/$t" "fuzz/corpus/$t" 2>"$work/$t.log"; then
    status=1
    tail -n 60 "$work/$t.log"
    echo "fuzz.sh: $t FAILED; reproducer(s) in $artifacts/"
  fi
  { grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$t.log" || true
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
      "$work/$t.log"; } | sed "s/^/fuzz.sh: $t /"
  echo "fuzz.sh: $t corpus $(ls "$work/$t" | wc -l) new files"
done
echo "fuzz.sh: total $((SECONDS - start)) s"
exit $status
