#!/bin/sh
# Generates the two large traces of the scale check and replays each with
# lru and dtr at a 0.01 budget ratio, printing wall time and peak RSS
# (GNU time). Needs a built `dtr` and a few GB free in $OUT.
#   bench/scale/big_traces.sh [path/to/dtr] [out dir]
# A 10^6-op chain (--depth 500000, 360 MB of text) and a Tree-LSTM of
# 134,003 nodes (--depth 23 --seed 1, 7.3 x 10^6 ops, 2.3 GB).
set -eu
DTR=${1:-build/dtr/cli/dtr}
OUT=${2:-/tmp}
TIME="/usr/bin/time -f %e_s_%M_KB"

run() {
  echo "== $*"
  $TIME "$@" 2>&1 | tail -3
}

run "$DTR" gen chain --depth 500000 -o "$OUT/dtr-chain-1e6.log"
run "$DTR" gen treelstm --depth 23 --seed 1 -o "$OUT/dtr-tree-1e5.log"
for trace in "$OUT/dtr-chain-1e6.log" "$OUT/dtr-tree-1e5.log"; do
  for h in lru dtr; do
    run "$DTR" sim "$trace" --budget-ratio 0.01 --heuristic "$h"
  done
done
