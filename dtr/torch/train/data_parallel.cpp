#include "dtr/torch/train/data_parallel.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/torch/train/bitwise.h"
#include "dtr/torch/train/models.h"

// Gloo's headers come with Debian's libgloo-dev (scripts/install-deps.sh);
// without them `--nproc` says so (libtorch has the symbols either way).
#if __has_include(<gloo/algorithm.h>)
#ifndef USE_C10D_GLOO  // Torch's CMake config defines it; a plain g++ not
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

namespace dtr::pt::train {
namespace {

namespace fs = std::filesystem;

void wait_all(c10d::Backend& pg, std::vector<at::Tensor>& v) {
  pg.allreduce(v)->wait();
}

/// train_once (trainer.cpp) for one rank: its shard of each global batch,
/// gradients averaged over the ranks before the step.
RunReport train_rank(const TrainOptions& o, c10d::Backend& pg,
                     const RankOptions& r, bool use_dtr, std::int64_t budget,
                     std::ostream* log) {
  Shard shard;
  shard.rank = r.rank;
  shard.world = r.world;
  shard.sync_gradients = [&pg, world = r.world](std::vector<at::Tensor>& ps) {
    torch::NoGradGuard no_grad;
    for (auto& p : ps) {
      if (!p.grad().defined()) continue;
      // Note [Plain parameter gradients]: never a checkpointed tensor in a
      // collective (an all-reduce must never be replayed).
      DTR_ASSERT(!dtr::pt::is_checkpoint(p.grad()),
                 "a checkpointed parameter gradient reached the all-reduce");
      std::vector<at::Tensor> v{p.grad()};
      pg.allreduce(v)->wait();
      p.grad().div_(world);
    }
  };
  return train_once(o, use_dtr, budget, log, &shard);
}

std::string last_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last.empty() ? "(no message)" : last;
}

std::string format_double(double v) {
  std::ostringstream s;
  s << std::setprecision(17) << v;
  return s.str();
}

// Note [Ranks die with their launcher]
// A job scheduler stops a job by signalling the process it started, the
// launcher: SIGTERM (or SIGINT), then SIGKILL. Ranks must not outlive it,
// training at full CPU under init with their folder left in /tmp.
// - Each rank asks the kernel for SIGKILL when its parent dies
//   (PR_SET_PDEATHSIG, kept across exec), and exits at once if the
//   launcher died before the request (getppid() is no longer it). This
//   holds for SIGKILL of the launcher too, which nothing can catch.
// - A launcher stopped by SIGTERM or SIGINT kills its ranks, reaps them,
//   removes its folder, and then dies of that signal, so whoever sent it
//   sees the usual status. The handler only records the signal: the wait
//   loop polls for it, and does the work outside the handler.
// The death signal follows the thread that forked, which is the thread
// that waits for the ranks (run_data_parallel does both).
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void record_stop_signal(int sig) {
  g_stop_signal = sig;
}

/// SIGTERM and SIGINT recorded in g_stop_signal while alive; the previous
/// handlers come back on destruction.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction a {};
    a.sa_handler = &record_stop_signal;
    sigemptyset(&a.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      sigaction(kSignals[i], &a, &previous_[i]);
    }
  }
  ~StopSignals() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      sigaction(kSignals[i], &previous_[i], nullptr);
    }
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  int received() const { return g_stop_signal; }

 private:
  static constexpr std::array<int, 2> kSignals = {SIGTERM, SIGINT};
  std::array<struct sigaction, 2> previous_{};
};

/// In a forked rank, before exec: die with the launcher (Note [Ranks die
/// with their launcher]).
void die_with(pid_t launcher) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != launcher) {
    _exit(127);
  }
}

/// Kills and reaps every rank still running.
void stop_ranks(std::vector<pid_t>& pids) {
  for (pid_t pid : pids) {
    if (pid > 0) kill(pid, SIGKILL);
  }
  for (pid_t& pid : pids) {
    if (pid <= 0) continue;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
  }
}

}  // namespace

void run_rank(const TrainOptions& o, const RankOptions& r, std::ostream& out) {
  try {
    at::set_num_threads(1);
    apply_runtime_options(o);
    auto store = c10::make_intrusive<c10d::FileStore>(r.store, r.world);
    auto opts = c10d::ProcessGroupGloo::Options::create(
        std::chrono::milliseconds(r.timeout_ms));
    opts->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    c10d::ProcessGroupGloo pg(store, r.rank, r.world, opts);
    const std::int64_t budget = o.budget_bytes.value_or(dtr::pt::kUnlimited);
    RunReport run = train_rank(o, pg, r, true, budget, &out);
    out << "rank " << r.rank << " summary: budget_bytes " << budget
        << " allocator_peak_bytes " << run.allocator_peak_bytes
        << " dtr_peak_bytes " << run.dtr_peak_bytes << " wall_ms "
        << run.wall_ns / 1e6 << "\n";
    if (!o.check) return;
    RunReport plain = train_rank(o, pg, r, false, dtr::pt::kUnlimited, nullptr);
    std::int64_t differing = 0;
    for (std::size_t i = 0; i < run.steps.size(); ++i) {
      if (!bitwise_equal(plain.steps[i].loss, run.steps[i].loss)) ++differing;
    }
    for (std::size_t i = 0; i < run.params.size(); ++i) {
      if (!bitwise_equal(run.params[i], plain.params[i])) ++differing;
    }
    // Every rank's parameters are rank 0's (buffers -- BatchNorm's running
    // statistics -- are each rank's own).
    const std::size_t nparams = [&] {
      torch::manual_seed(o.seed);
      return make_task(o.model, 1, o.seq_len)->module().parameters().size();
    }();
    std::int64_t across = 0;
    for (std::size_t i = 0; i < nparams; ++i) {
      std::vector<at::Tensor> v{run.params[i].clone()};
      pg.broadcast(v)->wait();
      if (!bitwise_equal(v[0], run.params[i])) ++across;
    }
    std::vector<at::Tensor> counts{
        torch::tensor({differing, across}, torch::kLong)};
    wait_all(pg, counts);
    const auto total = counts[0].accessor<std::int64_t, 1>();
    out << "rank " << r.rank << " check: plain data parallel wall_ms "
        << plain.wall_ns / 1e6 << "; losses and " << run.params.size()
        << " parameters/buffers "
        << (differing == 0 ? "bitwise identical" : "DIFFER") << "; " << nparams
        << " parameters "
        << (across == 0 ? "identical to rank 0's" : "DIFFER from rank 0's")
        << "\n";
    if (total[0] != 0 || total[1] != 0) {
      throw Error(detail::concat("--check failed for ", o.model, ": ", total[0],
                                 " values differ from plain data "
                                 "parallel, ",
                                 total[1], " parameters differ across ranks"));
    }
  } catch (const std::exception& e) {
    throw Error(detail::concat("rank ", r.rank, ": ", e.what()));
  }
}

namespace {

// The budget per rank (from --budget-ratio, on one rank's shard), checked
// to fit one step before any rank starts: no collective can be left
// waiting for a rank that fails on its first step.
std::optional<std::int64_t> budget_per_rank(const TrainOptions& o,
                                            std::ostream& out) {
  std::optional<std::int64_t> budget = o.budget_bytes;
  if (o.budget_ratio) {
    RunReport free = train_once(o, true, dtr::pt::kUnlimited, nullptr);
    budget = static_cast<std::int64_t>(
        *o.budget_ratio * static_cast<double>(free.dtr_peak_bytes));
    out << "unbudgeted (one rank's shard): dtr_peak_bytes "
        << free.dtr_peak_bytes << " -> budget_bytes per rank " << *budget
        << "\n";
  }
  if (!budget) return budget;
  TrainOptions once = o;
  once.steps = 1;
  try {
    train_once(once, true, *budget, nullptr);
  } catch (const OutOfMemory& e) {
    const std::int64_t peak =
        train_once(once, true, dtr::pt::kUnlimited, nullptr).dtr_peak_bytes;
    throw Error(detail::concat(
        "[train] budget of ", *budget,
        " bytes per rank fails before launching any "
        "rank (no collective ran): ",
        with_budget_that_fits(e, peak, "one step of a rank's shard").what()));
  }
  return budget;
}

// The command line every rank runs (its --rank added by the launcher).
std::vector<std::string> rank_command(const TrainOptions& o, int nproc,
                                      std::optional<std::int64_t> budget,
                                      const std::string& exe,
                                      const fs::path& dir) {
  std::vector<std::string> common = {exe,       "train",
                                     "--model", o.model,
                                     "--steps", std::to_string(o.steps),
                                     "--lr",    format_double(o.lr),
                                     "--world", std::to_string(nproc),
                                     "--store", (dir / "store").string()};
  if (o.batch)
    common.insert(common.end(), {"--batch", std::to_string(*o.batch)});
  if (o.seq_len) {
    common.insert(common.end(), {"--seq-len", std::to_string(*o.seq_len)});
  }
  if (budget) {
    common.insert(common.end(), {"--budget-bytes", std::to_string(*budget)});
  }
  if (o.check) common.push_back("--check");
  if (o.bytes_cost) common.push_back("--bytes-cost");
  common.push_back("--heuristic");
  common.push_back(o.heuristic);
  if (o.stage) common.push_back("--stage");
  if (o.thrash_limit) {
    common.insert(common.end(),
                  {"--thrash-limit", format_double(*o.thrash_limit)});
  }
  return common;
}

// Starts `nproc` ranks, each running `common` with its --rank, its stdout
// and stderr in `dir`; each dies with this process.
std::vector<pid_t> launch_ranks(const std::vector<std::string>& common,
                                int nproc, const fs::path& dir) {
  const pid_t launcher = getpid();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nproc; ++rank) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--rank", std::to_string(rank)});
    const std::string out_path =
        (dir / ("rank" + std::to_string(rank) + ".out")).string();
    const std::string err_path =
        (dir / ("rank" + std::to_string(rank) + ".err")).string();
    const pid_t pid = fork();
    DTR_CHECK(pid >= 0, "[train] fork failed");
    if (pid == 0) {
      die_with(launcher);
      const int fo = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int fe = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(127);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(common[0].c_str(), argv.data());
      _exit(127);
    }
    pids.push_back(pid);
  }
  return pids;
}

struct RankFailure {
  int rank = -1;  // the first rank that failed, or -1
  int status = 0;
};

// Waits for every rank, or for a stop signal. The first rank to fail
// stops the others: they would wait for it in a collective until the
// process group's timeout. Exited ranks' pids become -1.
RankFailure wait_for_ranks(std::vector<pid_t>& pids, const StopSignals& stop) {
  RankFailure failure;
  int running = static_cast<int>(pids.size());
  while (running > 0) {
    if (stop.received() != 0) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;
    if (pid == 0) {  // none exited: look again soon, or at a stop signal
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    for (std::size_t rank = 0; rank < pids.size(); ++rank) {
      if (pids[rank] != pid) continue;
      pids[rank] = -1;
      --running;
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && failure.rank < 0) {
        failure = {static_cast<int>(rank), status};
        for (pid_t other : pids) {
          if (other > 0) kill(other, SIGKILL);
        }
      }
    }
  }
  return failure;
}

}  // namespace

void run_data_parallel(const TrainOptions& o, int nproc, std::ostream& out) {
  DTR_CHECK(nproc >= 1, "[train] --nproc must be positive, got ", nproc);
  DTR_CHECK(o.record.empty(), "[train] --record is not supported with --nproc");
  DTR_CHECK(!(o.budget_ratio && o.budget_bytes),
            "[train] give --budget-ratio or --budget-bytes, not both");
  DTR_CHECK(!o.batch || *o.batch > 0, "[train] --batch must be positive, got ",
            o.batch.value_or(0));
  apply_runtime_options(o);  // an unknown heuristic fails here
  const std::optional<std::int64_t> budget = budget_per_rank(o, out);
  // From here on SIGTERM and SIGINT stop the ranks and remove the folder.
  StopSignals stop;
  char dir_template[] = "/tmp/dtr_train_XXXXXX";
  DTR_CHECK(mkdtemp(dir_template) != nullptr,
            "[train] cannot create a directory in /tmp");
  const fs::path dir(dir_template);
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  out.flush();
  std::vector<pid_t> pids =
      launch_ranks(rank_command(o, nproc, budget, exe, dir), nproc, dir);
  const RankFailure failed = wait_for_ranks(pids, stop);
  if (const int sig = stop.received(); sig != 0) {
    stop_ranks(pids);
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    std::cerr << "dtr: [train] stopped by signal " << sig << ": ranks killed, "
              << dir.string() << " removed\n";
    std::signal(sig, SIG_DFL);  // die of it, as without this handler
    std::raise(sig);
    _exit(128 + sig);  // only if the signal is blocked on this thread
  }
  for (int rank = 0; rank < nproc; ++rank) {
    std::ifstream in(dir / ("rank" + std::to_string(rank) + ".out"));
    out << in.rdbuf();
  }
  std::string message;
  if (failed.rank >= 0) {
    message = last_line(dir / ("rank" + std::to_string(failed.rank) + ".err"));
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  if (failed.rank >= 0) {
    throw Error(detail::concat(
        "[train] rank ", failed.rank, " of ", nproc, " failed (",
        WIFEXITED(failed.status)
            ? "exit " + std::to_string(WEXITSTATUS(failed.status))
            : "signal " + std::to_string(WTERMSIG(failed.status)),
        "), the others were stopped: ", message));
  }
  out << "data parallel: " << nproc << " ranks"
      << (o.check ? ", every rank bitwise identical to plain data parallel"
                  : "")
      << "\n";
}

}  // namespace dtr::pt::train

#else  // no gloo headers

namespace dtr::pt::train {

void run_rank(const TrainOptions&, const RankOptions&, std::ostream&) {
  throw Error(
      "[train] --nproc needs Gloo's headers: install libgloo-dev "
      "and rebuild");
}

void run_data_parallel(const TrainOptions& o, int, std::ostream& out) {
  run_rank(o, RankOptions{}, out);
}

}  // namespace dtr::pt::train
#endif
