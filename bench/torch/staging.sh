#!/bin/sh
# Staging on the `dtr train` models: eviction searches and mean wall time
# per step after the first, online vs --stage, at budget ratios 0.5 and 0.3
# (docs/planners.md, "Staging"). Usage: bench/torch/staging.sh [DTR] [STEPS]
# Prints one markdown row per model and ratio; the LSTM runs 16 time steps.
set -eu
DTR=${1:-build/dtr/cli/dtr}
STEPS=${2:-4}
run() {  # model batch ratio [--stage] -> "searches mean_wall_ms staged diverged"
  seq=""
  [ "$1" = lstm ] && seq="--seq-len 16"
  "$DTR" train --model "$1" --batch "$2" --budget-ratio "$3" --steps "$STEPS" \
    --bytes-cost $seq $4 | awk '
    /^step / { for (i = 1; i < NF; i++) { if ($i == "wall_ms") w = $(i+1);
                 if ($i == "searches") s = $(i+1) }
               if ($2 > 0) { wall += w; n++ }; searches += s }
    /^summary/ { for (i = 1; i < NF; i++) { if ($i == "staged_steps") st = $(i+1);
                   if ($i == "diverged_steps") dv = $(i+1) } }
    END { if (n == 0) { print "failed failed - -"; exit }  # dtr says why
          printf "%d %.1f %s %s", searches, wall / n, st == "" ? "-" : st,
                 dv == "" ? "-" : dv }'
}
echo "| model | batch | ratio | searches online | searches staged | ms/step online | ms/step staged | staged / diverged steps |"
echo "|---|---|---|---|---|---|---|---|"
for spec in resnet:4 densenet:4 unet:2 lstm:64 treelstm:16 transformer:4; do
  model=${spec%:*}; batch=${spec#*:}
  for ratio in 0.5 0.3; do
    on=$(run "$model" "$batch" "$ratio" "") || on="failed"
    st=$(run "$model" "$batch" "$ratio" --stage) || st="failed"
    set -- $on; son=$1; won=$2
    set -- $st; sst=$1; wst=$2; stg=$3; dvg=$4
    echo "| $model | $batch | $ratio | $son | $sst | $won | $wst | $stg / $dvg |"
  done
done
