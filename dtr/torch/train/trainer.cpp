#include "dtr/torch/train/trainer.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>

#include "dtr/core/error.h"
#include "dtr/torch/profiling.h"
#include "dtr/torch/trace_recording.h"
#include "dtr/torch/train/bitwise.h"
#include "dtr/torch/train/models.h"
#include "dtr/trace/output_file.h"

namespace dtr::pt::train {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<torch::Tensor> snapshot(torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  torch::NoGradGuard no_grad;
  for (const auto& p : m.parameters()) {
    out.push_back(dtr::pt::decheckpoint(p).clone());
  }
  for (const auto& b : m.buffers()) {
    out.push_back(dtr::pt::decheckpoint(b).clone());
  }
  return out;
}

}  // namespace

RunReport train_once(const TrainOptions& o, bool use_dtr, std::int64_t budget,
                     std::ostream* log, const Shard* shard) {
  DTR_CHECK(!o.batch || *o.batch > 0, "[train] --batch must be positive, got ",
            o.batch.value_or(0));
  const std::int64_t batch = o.batch.value_or(default_batch(o.model));
  torch::manual_seed(o.seed);
  auto task = make_task(o.model, batch, o.seq_len);
  auto params = task->module().parameters();
  torch::optim::SGD opt(params,
                        torch::optim::SGDOptions(o.lr).momentum(o.momentum));
  task->module().train();

  RunReport report;
  dtr::pt::reset_peak();
  std::unique_ptr<dtr::pt::Budget> guard;
  if (use_dtr) guard = std::make_unique<dtr::pt::Budget>(budget);
  const bool was_staging = dtr::pt::set_staging(use_dtr && o.stage);
  const auto first = dtr::pt::stats();
  const std::int64_t start = now_ns();
  for (std::int64_t step = 0; step < o.steps; ++step) {
    auto inputs = task->batch(shard ? step * shard->world + shard->rank : step);
    const auto before = dtr::pt::stats();
    const std::int64_t t0 = now_ns();
    if (use_dtr) {
      dtr::pt::begin_step();  // Note [Step boundaries]
      for (auto& t : inputs) t = dtr::pt::checkpoint(t);
    }
    opt.zero_grad();
    torch::Tensor loss = task->loss(inputs);
    loss.backward();
    if (shard != nullptr) shard->sync_gradients(params);
    opt.step();
    StepReport s;
    s.loss = loss.item<double>();
    s.wall_ns = now_ns() - t0;
    const auto after = dtr::pt::stats();
    s.allocator_peak_bytes = after.allocator_peak_bytes;
    s.dtr_peak_bytes = after.dtr_peak_bytes;
    s.evictions = (after.evictions + after.eager_evictions) -
                  (before.evictions + before.eager_evictions);
    s.remat_ops = after.remat_ops - before.remat_ops;
    s.eviction_searches = after.eviction_searches - before.eviction_searches;
    report.steps.push_back(s);
    if (log != nullptr) {
      if (shard != nullptr) *log << "rank " << shard->rank << " ";
      *log << "step " << step << " loss " << s.loss << " wall_ms "
           << s.wall_ns / 1e6 << " peak_bytes " << s.allocator_peak_bytes
           << " dtr_peak_bytes " << s.dtr_peak_bytes << " evictions "
           << s.evictions << " remats " << s.remat_ops << " searches "
           << s.eviction_searches << "\n";
    }
  }
  report.wall_ns = now_ns() - start;
  if (use_dtr) dtr::pt::begin_step();  // closes the last step's staging
  report.stats = dtr::pt::stats();
  report.staged_steps = report.stats.staged_steps - first.staged_steps;
  report.diverged_steps = report.stats.diverged_steps - first.diverged_steps;
  report.eviction_searches =
      report.stats.eviction_searches - first.eviction_searches;
  dtr::pt::set_staging(was_staging);
  report.allocator_peak_bytes = report.stats.allocator_peak_bytes;
  report.dtr_peak_bytes = report.stats.dtr_peak_bytes;
  report.params = snapshot(task->module());
  return report;
}

OutOfMemory with_budget_that_fits(const OutOfMemory& e, std::int64_t peak,
                                  const std::string& run) {
  return OutOfMemory(
      e, detail::concat(e.what(), ". Without a budget ", run, " peaks at ",
                        peak, " bytes (dtr_peak_bytes): a budget of ", peak,
                        " bytes fits, and the floor lies between the two"));
}

void apply_runtime_options(const TrainOptions& o) {
  DTR_CHECK(!o.thrash_limit || *o.thrash_limit > 0,
            "[train] --thrash-limit must be positive, got ",
            o.thrash_limit.value_or(0));
  dtr::pt::set_cost_model(o.bytes_cost ? dtr::pt::CostModel::kBytes
                                       : dtr::pt::CostModel::kMeasured);
  dtr::pt::set_heuristic(o.heuristic);
  dtr::pt::set_thrash_limit(
      o.thrash_limit.value_or(std::numeric_limits<double>::infinity()));
}

namespace {

void check_train_options(const TrainOptions& o) {
  DTR_CHECK(o.steps > 0, "[train] --steps must be positive, got ", o.steps);
  DTR_CHECK(!o.batch || *o.batch > 0, "[train] --batch must be positive, got ",
            o.batch.value_or(0));
  DTR_CHECK(!(o.budget_ratio && o.budget_bytes),
            "[train] give --budget-ratio or --budget-bytes, not both");
  // Written so that NaN fails too.
  DTR_CHECK(!o.budget_ratio || (*o.budget_ratio > 0 && *o.budget_ratio <= 1),
            "[train] --budget-ratio must be in (0, 1], got ",
            o.budget_ratio.value_or(0));
  DTR_CHECK(!o.budget_bytes || *o.budget_bytes >= 0,
            "[train] --budget-bytes must be >= 0, got ",
            o.budget_bytes.value_or(0));
  DTR_CHECK(o.lr > 0 && std::isfinite(o.lr),
            "[train] --lr must be a positive finite number, got ", o.lr);
}

void print_summary(const TrainOptions& o, std::int64_t budget,
                   const RunReport& run, std::ostream& out) {
  const auto& s = run.stats;
  out << "summary: model " << o.model << " budget_bytes " << budget
      << " allocator_peak_bytes " << run.allocator_peak_bytes
      << " dtr_peak_bytes " << run.dtr_peak_bytes << " outside_bytes "
      << (run.allocator_peak_bytes - run.dtr_peak_bytes) << " wall_ms "
      << run.wall_ns / 1e6 << " evictions " << s.evictions
      << " eager_evictions " << s.eager_evictions << " remats " << s.remat_ops
      << " lineage_cuts " << s.lineage_cuts << " eviction_searches "
      << run.eviction_searches << " remat_compute_ms "
      << s.remat_compute_ns / 1e6 << " replay_ms " << s.replay_wall_ns / 1e6
      << " choose_ms " << s.choose_wall_ns / 1e6;
  if (o.stage) {
    out << " staged_steps " << run.staged_steps << " diverged_steps "
        << run.diverged_steps;
  }
  out << "\n"
      << "heuristic: " << (s.auto_heuristic ? "auto chose " : "") << s.heuristic
      << " (" << s.auto_decisions << " decisions in "
      << s.auto_decision_ns / 1e6 << " ms, " << s.steps << " steps)\n";
}

// --check: the same training without DTR, compared bit for bit.
void check_against_plain(const TrainOptions& o, const RunReport& run,
                         std::ostream& out) {
  RunReport plain = train_once(o, false, dtr::pt::kUnlimited, nullptr);
  bool same = plain.steps.size() == run.steps.size() &&
              plain.params.size() == run.params.size();
  for (std::size_t i = 0; same && i < run.steps.size(); ++i) {
    same = bitwise_equal(plain.steps[i].loss, run.steps[i].loss);
  }
  std::size_t differing = 0;
  for (std::size_t i = 0; i < run.params.size() && i < plain.params.size();
       ++i) {
    if (!bitwise_equal(run.params[i], plain.params[i])) ++differing;
  }
  same = same && differing == 0;
  out << "check: plain LibTorch allocator_peak_bytes "
      << plain.allocator_peak_bytes << " wall_ms " << plain.wall_ns / 1e6
      << "; losses and " << run.params.size() << " parameters/buffers "
      << (same ? "bitwise identical" : "DIFFER") << "\n";
  if (!same) {
    throw Error(detail::concat("[train] --check failed for ", o.model, ": ",
                               differing, " parameters differ"));
  }
}

}  // namespace

RunReport run_train(const TrainOptions& o, std::ostream& out) {
  check_train_options(o);
  apply_runtime_options(o);
  if (o.warmup) {
    TrainOptions once = o;
    once.steps = 1;
    train_once(once, false, dtr::pt::kUnlimited, nullptr);
  }
  std::int64_t budget = dtr::pt::kUnlimited;
  if (o.budget_bytes) budget = *o.budget_bytes;
  std::optional<std::int64_t> free_peak;  // of the run without a budget
  if (o.budget_ratio) {
    RunReport free = train_once(o, true, dtr::pt::kUnlimited, nullptr);
    free_peak = free.dtr_peak_bytes;
    // ratio <= 1: the product fits.
    budget = static_cast<std::int64_t>(
        *o.budget_ratio * static_cast<double>(free.dtr_peak_bytes));
    out << "unbudgeted: dtr_peak_bytes " << free.dtr_peak_bytes
        << " allocator_peak_bytes " << free.allocator_peak_bytes << " wall_ms "
        << free.wall_ns / 1e6 << " -> budget_bytes " << budget << "\n";
  }
  // Written beside its destination and renamed there once complete: a
  // killed run leaves no trace that reads as a shorter program.
  std::unique_ptr<dtr::trace::AtomicOutput> trace;
  std::unique_ptr<dtr::pt::TraceRecording> recording;
  if (!o.record.empty()) {
    trace = std::make_unique<dtr::trace::AtomicOutput>(o.record);
    DTR_CHECK(trace->stream().good(), "[train] cannot write '", o.record, "'");
    recording = std::make_unique<dtr::pt::TraceRecording>(trace->stream());
  }
  std::optional<dtr::pt::Profile> profile;  // the budgeted run only
  if (!o.profile.empty()) profile.emplace(o.profile);
  RunReport run;
  try {
    run = train_once(o, true, budget, &out);
  } catch (const OutOfMemory& e) {
    if (!free_peak) {
      free_peak =
          train_once(o, true, dtr::pt::kUnlimited, nullptr).dtr_peak_bytes;
    }
    throw with_budget_that_fits(e, *free_peak, "this run");
  }
  if (profile) profile->close();
  recording.reset();
  if (trace) trace->commit();
  print_summary(o, budget, run, out);
  if (o.check) check_against_plain(o, run, out);
  return run;
}

}  // namespace dtr::pt::train
