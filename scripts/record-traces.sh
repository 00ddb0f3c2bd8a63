#!/usr/bin/env bash
# Regenerates data/traces/: one training step of every `dtr train` model,
# recorded by the LibTorch layer (`dtr train --record`) at a small size with
# measured op times, plus the manifest that `dtr sweep` reads. Needs the
# LibTorch build (scripts/build.sh with libtorch-dev installed).
set -euo pipefail
cd "$(dirname "$0")/.."
dtr=build/dtr/cli/dtr
out=data/traces
mkdir -p "$out"
# model batch description
models=(
  "mlp 256 8x256 MLP, batch 256"
  "resnet32 4 CIFAR ResNet-32, batch 4"
  "densenet 4 DenseNet block stack, batch 4"
  "unet 2 small U-Net, batch 2"
  "lstm 64 LSTM hidden 128, 16 time steps, batch 64"
  "treelstm 16 TreeLSTM over a random 32-leaf tree, batch 16"
  "transformer 2 4-layer Transformer encoder with dropout, batch 2"
)
entries=()
for m in "${models[@]}"; do
  read -r name batch desc <<<"$m"
  seq=()
  [ "$name" = lstm ] && seq=(--seq-len 16)
  "$dtr" train --model "$name" --batch "$batch" "${seq[@]}" --steps 1 \
    --record "$out/$name.log" >/dev/null
  entries+=("    {\"name\": \"$name\", \"title\": \"$name (recorded)\", \"desc\": \"$desc\", \"log\": \"$name.log\", \"has_start\": true}")
done
{
  echo '{'
  echo '  "source": "One SGD step of each dtr train model (dtr/torch/train), recorded by dtr'"'"'s LibTorch layer with dtr train --record on a 2-vCPU VM (Debian LibTorch 1.13.1, CPU); TIME is measured op time (ns), MEMORY in bytes. Regenerate with scripts/record-traces.sh.",'
  echo '  "models": ['
  (IFS=$'\n'; echo "${entries[*]}" | sed '$!s/$/,/')
  echo '  ]'
  echo '}'
} >"$out/manifest.json"
ls -la "$out"
