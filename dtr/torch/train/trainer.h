#pragma once
/// The training loop behind `dtr train`: SGD with momentum on a Task, plain
/// LibTorch or under DTR, with the bitwise check against plain LibTorch.
///
///   dtr::pt::train::TrainOptions o{.model = "mlp", .batch = 256, .steps = 2,
///                                .budget_ratio = 0.5, .check = true};
///   dtr::pt::train::run_train(o, std::cout);   // throws if the check fails
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "dtr/torch/dtr_torch.h"

namespace dtr::pt::train {

struct TrainOptions {
  std::string model = "mlp";
  std::optional<std::int64_t> batch;  ///< > 0; unset: the model's default
  /// lstm's time steps, > 0; unset: its default (models.h).
  std::optional<std::int64_t> seq_len;
  std::int64_t steps = 3;  ///< > 0
  /// At most one budget; neither: unlimited.
  std::optional<double> budget_ratio;  ///< (0, 1] of the unbudgeted DTR peak
  std::optional<std::int64_t> budget_bytes;  ///< >= 0
  bool check = false;
  std::string record;       ///< trace file, empty: none
  std::string profile;      ///< Chrome trace of the budgeted run, or none
  bool bytes_cost = false;  ///< deterministic cost model
  /// "auto" (Note [Auto protocol]) or a fixed heuristic (dtr_torch.h).
  std::string heuristic = "auto";
  /// Note [Thrash limit]: > 0; unset: no limit (a warning at 10x).
  std::optional<double> thrash_limit;
  /// Staging (docs/planners.md, "Staging"): each step replays the previous
  /// step's evictions with no search while it matches.
  bool stage = false;
  /// One untimed plain step first, so neither timed run pays the process's
  /// warm-up (thread pools, first touch of fresh heap pages).
  bool warmup = false;
  double lr = 0.01;
  double momentum = 0.9;
  std::uint64_t seed = 42;
};

struct StepReport {
  double loss = 0;
  std::int64_t wall_ns = 0;
  std::int64_t allocator_peak_bytes = 0;
  std::int64_t dtr_peak_bytes = 0;
  std::uint64_t evictions = 0;          ///< heuristic + eager, this step
  std::uint64_t remat_ops = 0;          ///< this step
  std::uint64_t eviction_searches = 0;  ///< this step; 0 when staged
};

struct RunReport {
  std::vector<StepReport> steps;
  std::vector<torch::Tensor> params;  ///< final parameters and buffers
  std::int64_t allocator_peak_bytes = 0;
  std::int64_t dtr_peak_bytes = 0;
  std::int64_t wall_ns = 0;
  dtr::pt::Stats stats;
  std::uint64_t staged_steps = 0;       ///< this run's (with --stage)
  std::uint64_t diverged_steps = 0;     ///< this run's
  std::uint64_t eviction_searches = 0;  ///< this run's
};

/// One rank of data-parallel training (data_parallel.h): step k trains on
/// batch k * world + rank, and `sync_gradients` (the all-reduce) runs on
/// the parameters between backward() and the optimizer step.
struct Shard {
  int rank = 0;
  int world = 1;
  std::function<void(std::vector<torch::Tensor>& params)> sync_gradients;
};

/// Puts o's runtime settings in force: cost model, heuristic, thrash
/// limit. Throws dtr::InvalidArgument naming a bad one.
void apply_runtime_options(const TrainOptions& o);

/// Trains from a fixed seed. `use_dtr` checkpoints the inputs; `budget`
/// (bytes) applies only then. `log` (optional) gets one line per step.
/// `shard` (optional) makes it one rank of a data-parallel job.
RunReport train_once(const TrainOptions& o, bool use_dtr, std::int64_t budget,
                     std::ostream* log, const Shard* shard = nullptr);

/// `e` with the budget known to fit appended (Note [The floor]): `peak`
/// bytes, the DTR peak of `run` (what failed, in words) without a budget.
/// The floor that `e` states is a lower bound; the real floor of `run`
/// lies between the two.
OutOfMemory with_budget_that_fits(const OutOfMemory& e, std::int64_t peak,
                                  const std::string& run);

/// `dtr train`: resolves the budget (a ratio needs an unbudgeted DTR run),
/// trains, prints per-step lines and a summary; with o.check also trains
/// plain LibTorch and throws dtr::Error unless every loss and parameter is
/// bitwise identical. Throws dtr::InvalidArgument for an option out of its
/// range (named as the CLI flag), dtr::Error if o.record or o.profile
/// cannot be written in full, and dtr::OutOfMemory (through
/// with_budget_that_fits) if the budget is below the run's floor. Returns
/// the budgeted run's report.
RunReport run_train(const TrainOptions& o, std::ostream& out);

}  // namespace dtr::pt::train
