// trace_fuzz: bytes -> trace reader -> unbounded baseline -> every heuristic
// and deallocation policy at two budgets derived from the baseline peak.
// Rejecting the bytes with a TraceError is fine; anything else the reader
// throws, any exception from the baseline of a trace the reader accepted,
// any exception from simulate() (out of memory and thrashing are results),
// a peak above the budget of a successful run, accounting that differs
// from the resident storages' bytes at any step, or a fast-scan victim that
// is not the reference scan's (the checked replay) is a finding (abort).
// Each run also places its storages with an allocator model (best-fit at
// one budget, caching at the other) that checks its layout at every
// change: overlapping or stray blocks, unmerged free neighbours, reserved
// under live, or live bytes other than the runtime's make simulate throw.
// Every heuristic also runs in the DTR arena, where a request placed
// outside the arena or a peak above the budget is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <ios>
#include <istream>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <system_error>
#include <vector>

#include "dtr/core/dealloc_policy.h"
#include "dtr/core/heuristic.h"
#include "dtr/sim/dead_values.h"
#include "dtr/sim/simulator.h"
#include "dtr/trace/trace_reader.h"
#include "invariants.h"

namespace dtr::fuzz {
namespace {

// Serves `text`, then throws std::ios_base::failure from underflow if
// `fail` (as std::filebuf does on a read error), else ends the input.
class FailingTail : public std::streambuf {
 public:
  FailingTail(std::string& text, bool fail) : fail_(fail) {
    setg(text.data(), text.data(), text.data() + text.size());
  }

 protected:
  int_type underflow() override {
    if (fail_) {
      throw std::ios_base::failure("read error",
                                   std::make_error_code(std::errc::io_error));
    }
    return traits_type::eof();
  }

 private:
  bool fail_;
};

struct RunConfig {
  std::string heuristic;
  DeallocPolicy policy;
  double ratio;
  bool prototype;  // sample_sqrt + ignore_small
  sim::AllocatorKind allocator;
};

// After every step of the checked replay (not coverage: see
// fuzz/coverage_ignorelist.txt).
void check_step(const Runtime& rt, std::int64_t budget) {
  static const std::vector<std::uint32_t> no_locks;
  check_accounting(rt);
  check_locks(rt.graph(), no_locks);
  DTR_FUZZ_CHECK(rt.stats().memory_bytes <= budget, "memory ",
                 rt.stats().memory_bytes, " over budget ", budget);
}

// The simulator's replay (dtr/sim/simulator.cpp), with the invariants
// checked after every step. Returns the peak, or -1 if the run stopped on
// out-of-memory or thrashing.
std::int64_t checked_replay(const trace::Program& p, const sim::Baseline& b,
                            const RunConfig& c, std::int64_t budget) {
  RuntimeOptions o;
  o.budget_bytes = budget;
  o.policy = c.policy;
  o.sample_sqrt = c.prototype;
  o.ignore_small = c.prototype;
  o.remat_limit_ns = b.compute_ns;  // thrash limit 2.0, as simulate()'s
  // The fast scan, each choice checked against the reference scan (and
  // cached regions against fresh walks), while simulate() used the index:
  // the peaks compared below must still agree.
  auto heuristic = make_heuristic(c.heuristic);
  heuristic->set_choice_mode(ChoiceMode::kCheckFastScan);
  Runtime rt(o, std::move(heuristic));
  std::vector<TensorId> tensor_of(p.value_count, kNoId);
  // As the simulator: forget dead values on a trace marked FORGETS_DEAD.
  std::optional<sim::DeadValues> dead;
  if (p.forgets_dead) dead.emplace(p, rt, tensor_of);
  std::size_t next_cut = 0;
  auto check = [&] { check_step(rt, budget); };
  try {
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      const trace::Step& step = p.steps[i];
      if (next_cut < p.lineage_cuts.size() && p.lineage_cuts[next_cut] == i) {
        if (dead) dead->on_lineage_cut();
        ++next_cut;
        check();
      }
      const TensorId t = step.kind == trace::StepKind::kCompute
                             ? kNoId
                             : tensor_of[step.index];
      switch (step.kind) {
        case trace::StepKind::kCompute: {
          const trace::ProgramOp& op = p.ops[step.index];
          if (op.constant) {
            tensor_of[op.first_output] = rt.add_constant(op.outputs[0].bytes);
          } else {
            std::vector<TensorId> in;
            for (trace::ValueId v : op.inputs) in.push_back(tensor_of[v]);
            auto out = rt.call(op.name, in, op.outputs, op.cost_ns,
                               op.workspace_bytes);
            for (std::size_t k = 0; k < out.size(); ++k) {
              tensor_of[op.first_output + k] = out[k];
            }
          }
          if (dead) dead->on_compute(step.index);
          break;
        }
        case trace::StepKind::kRetain:
          rt.retain(t);
          if (dead) dead->on_retain(step.index);
          break;
        case trace::StepKind::kRelease:
          rt.release(t);
          if (dead) dead->on_release(step.index);
          break;
        case trace::StepKind::kPin:
          rt.pin(t);
          if (dead) dead->on_pin(step.index);
          break;
        case trace::StepKind::kUnpin: {
          // As the simulator does: what nothing can recompute stays pinned.
          const Graph& g = rt.graph();
          const StorageId s = g.tensor(t).storage;
          bool parent_freed = false;
          g.for_each_parent_storage(s, [&](StorageId q) {
            if (q != s && g.storage(q).banished) parent_freed = true;
          });
          if (!g.storage(s).constant && !parent_freed) rt.unpin(t);
          break;
        }
      }
      check();
    }
  } catch (const OutOfMemory&) {
    check();
    return -1;
  } catch (const RematLimitExceeded&) {
    check();
    return -1;
  }
  return rt.stats().peak_bytes;
}

void run_one(const trace::Program& p, const sim::Baseline& b,
             const RunConfig& c) {
  sim::SimConfig config;
  config.heuristic = c.heuristic;
  config.policy = c.policy;
  config.budget_ratio = c.ratio;
  config.sample_sqrt = c.prototype;
  config.ignore_small = c.prototype;
  config.allocator = c.allocator;
  config.check_allocator = true;
  sim::SimResult r;
  try {
    r = sim::simulate(p, b, config);
  } catch (const std::exception& e) {
    fail(detail::concat("simulate threw on a trace the baseline accepted (",
                        c.heuristic, ", ", to_string(c.policy), ", ratio ",
                        c.ratio, "): ", e.what()));
  }
  const std::string where =
      detail::concat(c.heuristic, "/", to_string(c.policy), " ratio ", c.ratio);
  if (r.status == sim::SimStatus::kOk) {
    DTR_FUZZ_CHECK(r.peak_bytes <= r.budget_bytes, where, ": peak ",
                   r.peak_bytes, " budget ", r.budget_bytes);
    DTR_FUZZ_CHECK(r.model_compute_ns == b.compute_ns, where, ": model ",
                   r.model_compute_ns, " baseline ", b.compute_ns);
  }
  // The checked replay is the same run: same outcome and peak.
  std::int64_t peak = checked_replay(p, b, c, r.budget_bytes);
  std::int64_t sim_peak = r.status == sim::SimStatus::kOk ? r.peak_bytes : -1;
  DTR_FUZZ_CHECK(peak == sim_peak, where, ": checked replay peak ", peak,
                 " simulate ", sim_peak);
}

void run_arena(const trace::Program& p, const sim::Baseline& b,
               const std::string& heuristic) {
  sim::SimConfig config;
  config.heuristic = heuristic;
  config.budget_ratio = 0.5;
  config.allocator = sim::AllocatorKind::kArena;
  config.check_allocator = true;
  sim::SimResult r;
  try {
    r = sim::simulate(p, b, config);
  } catch (const std::exception& e) {
    fail(detail::concat("simulate threw in the arena (", heuristic,
                        "): ", e.what()));
  }
  DTR_FUZZ_CHECK(r.allocator_ooms == 0, heuristic, ": ", r.allocator_ooms,
                 " requests placed outside the arena");
  DTR_FUZZ_CHECK(r.reserved_peak_bytes == r.budget_bytes, heuristic,
                 ": arena reserved ", r.reserved_peak_bytes, " budget ",
                 r.budget_bytes);
  DTR_FUZZ_CHECK(r.peak_bytes <= r.budget_bytes, heuristic, ": peak ",
                 r.peak_bytes, " budget ", r.budget_bytes);
}

}  // namespace
}  // namespace dtr::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace dtr;
  // One input in four ends in a read error instead of the end of the file
  // (a directory, /proc/self/mem, an I/O error): the reader must stop with
  // a TraceError there, wherever the error falls; reading on would show
  // up as a -timeout finding.
  std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::FailingTail buffer(text, size > 0 && (data[0] & 3) == 0);
  std::istream in(&buffer);
  trace::Program program;
  try {
    program = trace::read_trace(in, "fuzz");
  } catch (const trace::TraceError&) {
    return 0;  // rejected with the documented error: fine
  }
  sim::Baseline baseline;
  try {
    baseline = sim::compute_baseline(program);
  } catch (const std::exception& e) {
    fuzz::fail(std::string("the baseline rejects a trace the reader "
                           "accepted: ") +
               e.what());
  }
  DTR_FUZZ_CHECK(baseline.peak_bytes >= 0, "negative baseline peak");
  // Two budgets: one that usually needs a few evictions, one that needs
  // many (and runs out of memory on some traces), with the prototype's
  // search shortcuts on the tighter one.
  for (double ratio : {0.7, 0.3}) {
    for (const std::string& h : heuristic_names()) {
      for (DeallocPolicy policy :
           {DeallocPolicy::kEager, DeallocPolicy::kIgnore,
            DeallocPolicy::kBanish}) {
        const sim::AllocatorKind allocator = ratio < 0.5
                                                 ? sim::AllocatorKind::kCaching
                                                 : sim::AllocatorKind::kBestFit;
        fuzz::run_one(program, baseline,
                      {h, policy, ratio, ratio < 0.5, allocator});
      }
    }
  }
  for (const std::string& h : heuristic_names()) {
    fuzz::run_arena(program, baseline, h);
  }
  return 0;
}
