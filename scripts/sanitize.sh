#!/usr/bin/env bash
# Builds dtr with clang under AddressSanitizer + UndefinedBehaviorSanitizer
# (-O1 -g, build-sanitize/) and runs the core, sim and cli tests under them.
# The LibTorch layer is left out: LibTorch itself is not instrumented. So
# are the install tests (label install): they link an outside project,
# built without sanitizers, against the instrumented libraries.
# Bounded: the tests listed in slow_tests below are excluded (each takes
# minutes under ASan and only repeats what the quicker tests cover). The
# other tests labelled slow stay: without LibTorch the CLI starts at once,
# and the long chain and Theorem 3.1 are worth running instrumented.
# Extra arguments go to ctest (e.g. -R Runtime). Prints its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))
cmake -S . -B build-sanitize -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DDTR_SANITIZE=address,undefined \
  -DDTR_BUILD_TORCH=OFF -DDTR_BUILD_BENCH=OFF >/dev/null
cmake --build build-sanitize -j"$jobs"
built=$SECONDS
# Leaks are findings too; a failed check prints a symbolized stack.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0
slow_tests='RecordedTracesTest|SharedTracesTest.AgreesWithTheAuthorsSimulator'
ctest --test-dir build-sanitize --output-on-failure -j"$jobs" \
  -LE 'torch|install' -E "$slow_tests" "$@"
echo "sanitize.sh: build $((built - start)) s, tests $((SECONDS - built)) s," \
     "total $((SECONDS - start)) s"
