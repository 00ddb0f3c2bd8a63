#include "dtr/cli/train_command.h"

#include <iostream>
#include <memory>

#include "examples/models/models.h"
#include "examples/models/trainer.h"

namespace dtr::cli {

void add_train_command(CLI::App& app) {
  auto options = std::make_shared<models::TrainOptions>();
  auto* cmd = app.add_subcommand(
      "train", "Train a LibTorch model under a DTR memory budget");
  cmd->add_option("--model", options->model,
                  "mlp, resnet32, densenet, unet, lstm, treelstm, transformer")
      ->required();
  cmd->add_option("--batch", options->batch,
                  "batch size (default: the model's)");
  cmd->add_option("--steps", options->steps, "SGD steps")->default_val(3);
  auto* ratio = cmd->add_option(
      "--budget-ratio", options->budget_ratio,
      "budget as a fraction of the unbudgeted run's DTR peak");
  auto* bytes = cmd->add_option("--budget-bytes", options->budget_bytes,
                                "budget in bytes");
  ratio->excludes(bytes);
  cmd->add_flag("--check", options->check,
                "also train plain LibTorch; fail unless bitwise identical");
  cmd->add_option("--record", options->record,
                  "write the run's trace (paper format) to this file");
  cmd->add_flag("--bytes-cost", options->bytes_cost,
                "deterministic cost model (output bytes) instead of time");
  cmd->add_flag("--warmup", options->warmup,
                "first train one untimed plain step (fair wall-time ratios)");
  cmd->add_option("--lr", options->lr, "learning rate")->default_val(0.01);
  cmd->callback([options] { models::run_train(*options, std::cout); });
}

}  // namespace dtr::cli
