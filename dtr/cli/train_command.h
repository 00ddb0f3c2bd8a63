#pragma once
/// `dtr train --model M --batch N (--budget-ratio R | --budget-bytes B)
///  --steps K [--check] [--record FILE] [--bytes-cost]`: trains a torch::nn
/// model (examples/models) under DTR and prints per step: loss, wall time,
/// peak bytes, evictions, rematerializations. Needs LibTorch; link the
/// `dtr_models` target (built by dtr/torch).
#include <CLI/CLI.hpp>

namespace dtr::cli {

void add_train_command(CLI::App& app);

}  // namespace dtr::cli
