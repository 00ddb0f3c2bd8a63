#pragma once
/// `dtr train --model M --batch N (--budget-ratio R | --budget-bytes B)
///  --steps K [--check] [--record FILE] [--bytes-cost]`: trains a torch::nn
/// model (dtr/torch/train) under DTR and prints per step: loss, wall time,
/// peak bytes, evictions, rematerializations. Needs LibTorch; compiled into
/// `dtr` with the `dtr_torch_train` target when it exists.
#include <CLI/CLI.hpp>

namespace dtr::cli {

void add_train_command(CLI::App& app);

}  // namespace dtr::cli
