#pragma once
/// Data-parallel training behind `dtr train --nproc N`: N processes on this
/// machine, each a copy of the `dtr` binary, joined by a
/// c10d::ProcessGroupGloo over a c10d::FileStore (loopback). Each rank
/// trains its shard of every global batch (batch(step * N + rank)) under
/// its own budget; gradients are all-reduced and averaged before the SGD
/// step. Parameters and their gradients are plain tensors under DTR (Note
/// [Plain parameter gradients]), so a collective never sees a checkpointed
/// tensor and is never replayed.
///
///   dtr::pt::train::TrainOptions o{.model = "resnet", .batch = 2,
///                                .budget_ratio = 0.5, .check = true};
///   dtr::pt::train::run_data_parallel(o, /*nproc=*/2, std::cout);
#include <cstdint>
#include <ostream>
#include <string>

#include "dtr/torch/train/trainer.h"

namespace dtr::pt::train {

/// Where a rank process finds its job (the hidden CLI flags).
struct RankOptions {
  int rank = 0;
  int world = 1;
  std::string store;  ///< c10d::FileStore path shared by the ranks
  std::int64_t timeout_ms = 60000;  ///< the process group's timeout
};

/// Launches `nproc` ranks (fork + exec of /proc/self/exe) and waits. Ranks
/// die with the launcher, SIGKILL included; while it waits, SIGTERM or
/// SIGINT kills the ranks, removes their temporary folder and then ends
/// the launcher by that signal (Note [Ranks die with their launcher]). The
/// budget is resolved here, before any rank starts (a ratio needs one
/// unbudgeted run of one rank's shard), and one step on a rank's shard
/// under it must fit: a budget below the floor throws dtr::Error before
/// any collective. If a rank fails, the others are killed at once and
/// dtr::Error names the rank and its message (an OutOfMemory's states the
/// budget and the floor in bytes). With o.check every rank also trains
/// plain data parallel and the job fails unless all parameters and losses
/// are bitwise identical, on every rank and across ranks.
void run_data_parallel(const TrainOptions& o, int nproc, std::ostream& out);

/// One rank's job (inside a launched process); throws on failure.
void run_rank(const TrainOptions& o, const RankOptions& r, std::ostream& out);

}  // namespace dtr::pt::train
