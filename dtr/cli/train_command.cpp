#include "dtr/cli/train_command.h"

#include <iostream>
#include <limits>
#include <memory>

#include "dtr/cli/validators.h"
#include "dtr/core/error.h"
#include "dtr/core/heuristic_registry.h"
#include "dtr/torch/train/data_parallel.h"
#include "dtr/torch/train/models.h"
#include "dtr/torch/train/trainer.h"

namespace dtr::cli {

void add_train_command(CLI::App& app) {
  constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();
  constexpr double kMaxReal = std::numeric_limits<double>::max();
  auto options = std::make_shared<pt::train::TrainOptions>();
  auto nproc = std::make_shared<int>(0);
  auto rank = std::make_shared<pt::train::RankOptions>();
  auto* cmd = app.add_subcommand(
      "train", "Train a LibTorch model under a DTR memory budget");
  cmd->add_option("--model", options->model,
                  "mlp, resnet, densenet, unet, lstm, treelstm, transformer "
                  "(the names of `dtr gen`; resnet32 = resnet)")
      ->required();
  cmd->add_option("--batch", options->batch,
                  "batch size, positive (default: the model's)")
      ->transform(integer_in<std::int64_t>(1, kMaxInt));
  cmd->add_option("--seq-len", options->seq_len,
                  "time steps of the lstm model, positive (default: " +
                      std::to_string(dtr::pt::train::kDefaultLstmSeqLen) + ")")
      ->transform(integer_in<std::int64_t>(1, kMaxInt));
  cmd->add_option("--steps", options->steps, "SGD steps, positive")
      ->default_val(3)
      ->transform(integer_in<std::int64_t>(1, kMaxInt));
  auto* ratio = cmd->add_option(
      "--budget-ratio", options->budget_ratio,
      "budget as a fraction in (0, 1] of the unbudgeted run's DTR peak "
      "(default: no budget)");
  ratio->check(real_in(0, 1, /*min_exclusive=*/true));
  auto* bytes = cmd->add_option("--budget-bytes", options->budget_bytes,
                                "budget in bytes, 0 to 2^63-1");
  bytes->transform(integer_in<std::int64_t>(0, kMaxInt));
  ratio->excludes(bytes);
  cmd->add_flag("--check", options->check,
                "also train plain LibTorch; fail unless bitwise identical");
  cmd->add_option("--record", options->record,
                  "write the run's trace (paper format) to this file");
  cmd->add_option("--profile", options->profile,
                  "write a Chrome trace of the budgeted run (chrome://tracing, "
                  "ui.perfetto.dev), wall clock; see docs/profiling.md");
  cmd->add_option("--heuristic", options->heuristic,
                  "auto (default: simulate each step shape under " +
                      heuristic_list(/*auto_only=*/true) +
                      " and run the best), " + heuristic_list());
  cmd->add_flag("--bytes-cost", options->bytes_cost,
                "deterministic cost model (output bytes) instead of time");
  cmd->add_flag("--stage", options->stage,
                "staging: each step replays the previous step's evictions "
                "with no heuristic search while it matches");
  cmd->add_option("--thrash-limit", options->thrash_limit,
                  "stop with an error when a step recomputes more than this "
                  "many times its own compute (default: no limit; a warning "
                  "at 10)")
      ->check(real_in(0, kMaxReal, /*min_exclusive=*/true));
  cmd->add_flag("--warmup", options->warmup,
                "first train one untimed plain step (fair wall-time ratios)");
  cmd->add_option("--lr", options->lr, "learning rate, positive")
      ->default_val(0.01)
      ->check(real_in(0, kMaxReal, /*min_exclusive=*/true));
  cmd->add_option("--nproc", *nproc,
                  "data parallel: this many processes on this machine (Gloo "
                  "over loopback), each training its shard under the budget")
      ->transform(integer_in<int>(1, 64));
  // A rank of a --nproc job (data_parallel.h), set by the launcher.
  cmd->add_option("--rank", rank->rank)->group("");
  cmd->add_option("--world", rank->world)->group("");
  cmd->add_option("--store", rank->store)->group("");
  cmd->callback([options, nproc, rank] {
    if (!rank->store.empty()) {
      pt::train::run_rank(*options, *rank, std::cout);
    } else if (*nproc > 0) {
      DTR_CHECK(options->profile.empty(),
                "--profile: not supported with --nproc (profile one process)");
      pt::train::run_data_parallel(*options, *nproc, std::cout);
    } else {
      pt::train::run_train(*options, std::cout);
    }
  });
}

}  // namespace dtr::cli
