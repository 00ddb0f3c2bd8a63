#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install dependencies, build, and
# sweep every heuristic over budget ratios 1.0 ... 0.1 on the built-in model
# traces, then the traces recorded from the example models (data/traces).
# Writes out/sweep/ and out/recorded/: results.csv and one PNG per model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build/dtr/cli/dtr sweep --out out/sweep "$@"
build/dtr/cli/dtr sweep data/traces/manifest.json --out out/recorded "$@"
