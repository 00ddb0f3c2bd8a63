#!/usr/bin/env bash
# Runs the whole test suite (builds first if needed): labels fast, slow and
# torch (see tests/CMakeLists.txt). Extra arguments go to ctest, e.g.
# `scripts/test.sh -L fast` for the inner loop. The paper's traces in
# ../shared are used when present; those tests skip with a message otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/dtr/cli/dtr ] || scripts/build.sh
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
