#!/usr/bin/env bash
# Slowdown at a budget ratio of two dtr builds side by side: for each
# `dtr train` model, one `--check` run per build, alternated, printing DTR's
# wall time over plain LibTorch's from the same run (and whether it was
# bitwise identical). Usage:
#   bench/torch/compare_builds.sh OLD_DTR NEW_DTR [RATIO]
# e.g. a build of an older commit against build/dtr/cli/dtr. MODELS picks
# the models (default: all seven).
set -euo pipefail
old=$1 new=$2 ratio=${3:-0.5}
echo "model build dtr_ms plain_ms slowdown identical"
for m in ${MODELS:-mlp resnet densenet unet lstm treelstm transformer}; do
  for b in old new; do
    bin=$old
    [ "$b" = new ] && bin=$new
    out=$("$bin" train --model "$m" --budget-ratio "$ratio" --steps 3 --check 2>&1 || true)
    dtr=$(grep -o '^summary:.* wall_ms [0-9.]*' <<<"$out" | awk '{print $NF}')
    plain=$(grep -o 'plain LibTorch.*wall_ms [0-9.]*' <<<"$out" | awk '{print $NF}')
    same=$(grep -q "bitwise identical" <<<"$out" && echo yes || echo NO)
    ratio_=$(awk -v a="${dtr:-0}" -v b="${plain:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    echo "$m $b ${dtr:--} ${plain:--} $ratio_ $same"
  done
done
