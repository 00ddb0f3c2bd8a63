// runtime_fuzz: bytes -> a random sequence of core runtime operations (calls,
// two-phase calls, constants, release/retain, pin/unpin, materialize,
// make_room, set_budget, evict_all, forget) on a Runtime whose executor can
// be made to throw in a replay. After every operation, whatever it threw:
// the accounting equals the resident storages' bytes, memory is within the
// budget (unless the budget was lowered since the last allocation), only the
// pending two-phase calls hold locks, and every defined tensor the program
// holds has its original value. dtr::Error subclasses other than
// InternalError are acceptable outcomes; any other exception is a finding.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string_view>
#include <vector>

#include "dtr/core/heuristic.h"
#include "dtr/core/runtime.h"
#include "fault_executor.h"
#include "invariants.h"

namespace dtr::fuzz {
namespace {

constexpr const char* kOpNames[] = {"f", "g", "h", "view"};

#define DTR_FUZZ_NOTE(...)           \
  do {                               \
    if (verbose_) note(__VA_ARGS__); \
  } while (0)

// The inputs that broke an invariant are in fuzz/corpus/runtime_fuzz/ (so
// every run replays them) and their tests in tests/core/failed_call_test.cpp;
// fuzz/regressions/runtime_fuzz/README.md says how a new finding is kept.

class Driver {
 public:
  explicit Driver(FuzzedDataProvider& in) : in_(in) {
    RuntimeOptions o;
    o.budget_bytes = in_.ConsumeIntegralInRange<std::int64_t>(0, 2000);
    o.policy = static_cast<DeallocPolicy>(in_.ConsumeIntegralInRange(0, 2));
    o.remat_limit_ns =
        in_.ConsumeBool() ? in_.ConsumeIntegralInRange(0, 500) : -1;
    o.sample_sqrt = in_.ConsumeBool();
    o.ignore_small = in_.ConsumeBool();
    o.free_dead_constants = in_.ConsumeBool();
    o.seed = in_.ConsumeIntegral<std::uint8_t>();
    const auto& names = heuristic_names();
    const std::string& h =
        names[in_.ConsumeIntegralInRange<std::size_t>(0, names.size() - 1)];
    rt_ = std::make_unique<Runtime>(o, make_heuristic(h, o.seed), &ex_);
    verbose_ = std::getenv("DTR_FUZZ_VERBOSE") != nullptr;
    DTR_FUZZ_NOTE(
        "runtime heuristic=", h, " policy=", to_string(o.policy),
        " budget=", o.budget_bytes, " remat_limit=", o.remat_limit_ns,
        " sample_sqrt=", o.sample_sqrt, " ignore_small=", o.ignore_small,
        " free_dead_constants=", o.free_dead_constants, " seed=", o.seed);
  }

  void run() {
    while (in_.remaining_bytes() > 0) {
      const std::int64_t before = rt_->stats().memory_bytes;
      try {
        step();
      } catch (const InternalError& e) {
        fail(e.what());
      } catch (const Error& e) {
        // OutOfMemory, RematLimitExceeded, InvalidArgument: documented.
        DTR_FUZZ_NOTE("  -> ", e.what());
      } catch (const InjectedFailure& e) {
        DTR_FUZZ_NOTE("  -> ", e.what());
      }
      check(before);
    }
    finish();
  }

 private:
  // With DTR_FUZZ_VERBOSE set, prints each operation (to read a reproducer);
  // called through DTR_FUZZ_NOTE, so the strings are built only then.
  template <typename... Args>
  static void note(const Args&... args) {
    std::cerr << detail::concat(args...) << "\n";
  }
  static std::string ids(std::span<const TensorId> ts) {
    std::string s = "[";
    for (TensorId t : ts) s += (s.size() > 1 ? "," : "") + std::to_string(t);
    return s + "]";
  }
  static std::string specs(std::span<const OutputSpec> os) {
    std::string s = "[";
    for (const OutputSpec& o : os) {
      s += (s.size() > 1 ? "," : "") +
           (o.alias_of >= 0 ? "alias " + std::to_string(o.alias_of)
                            : std::to_string(o.bytes));
    }
    return s + "]";
  }

  std::int64_t size() { return in_.ConsumeIntegralInRange(0, 255); }

  // Mostly a tensor the program holds, sometimes a forgotten one or an id
  // it was never given (maybe an output of a failed call), so that the
  // error paths run too.
  TensorId pick() {
    const std::uint8_t r = in_.ConsumeIntegral<std::uint8_t>();
    const std::size_t n = rt_->graph().tensor_count();
    if (r < 16 && !forgotten_.empty()) {
      return forgotten_[r % forgotten_.size()];
    }
    if (r < 20 || known_.empty()) return r + n / 2;
    return known_[in_.ConsumeIntegralInRange<std::size_t>(0,
                                                          known_.size() - 1)];
  }
  std::vector<TensorId> pick_inputs() {
    std::vector<TensorId> v(in_.ConsumeIntegralInRange(0, 3));
    for (TensorId& t : v) t = pick();
    return v;
  }
  std::vector<OutputSpec> outputs(std::size_t inputs) {
    std::vector<OutputSpec> v(in_.ConsumeIntegralInRange(1, 3));
    for (OutputSpec& o : v) {
      o.alias_of = inputs > 0 && in_.ConsumeIntegralInRange(0, 3) == 0
                       ? in_.ConsumeIntegralInRange<int>(0, inputs - 1)
                       : -1;
      o.bytes = o.alias_of >= 0 ? 0 : size();
    }
    return v;
  }
  void hold(std::span<const TensorId> ts) {
    for (TensorId t : ts) {
      known_.push_back(t);
      std::erase(forgotten_, t);  // a recycled id, live again
    }
  }

  void step() {
    switch (in_.ConsumeIntegralInRange(0, 15)) {
      case 0:
        constant();
        break;
      case 1:
      case 2:
        call();
        break;
      case 3:
        begin();
        break;
      case 4:
        end();
        break;
      case 5:
        abort();
        break;
      case 6:
        on(pick(), "release", &Runtime::release);
        break;
      case 7:
        on(pick(), "retain", &Runtime::retain);
        break;
      case 8:
        on(pick(), "pin", &Runtime::pin);
        break;
      case 9:
        on(pick(), "unpin", &Runtime::unpin);
        break;
      case 10:
        on(pick(), "materialize", &Runtime::materialize);
        break;
      case 11: {
        std::int64_t b = size() * in_.ConsumeIntegralInRange(1, 16);
        DTR_FUZZ_NOTE("set_budget ", b);
        rt_->set_budget(b);
        budget_lowered_ = rt_->stats().memory_bytes > rt_->budget_bytes();
        break;
      }
      case 12:
        DTR_FUZZ_NOTE("evict_all");
        rt_->evict_all();
        break;
      case 13:
        forget();
        break;
      case 14: {
        std::uint32_t n = in_.ConsumeIntegralInRange(1, 4);
        DTR_FUZZ_NOTE("arm: replay #", n, " from now fails");
        ex_.arm(n);
        break;
      }
      case 15: {
        std::int64_t b = size();
        DTR_FUZZ_NOTE("make_room ", b);
        rt_->make_room(b);
        break;
      }
    }
  }

  void on(TensorId t, const char* what, void (Runtime::*f)(TensorId)) {
    DTR_FUZZ_NOTE(what, " ", t);
    ((*rt_).*f)(t);
  }

  void constant() {
    std::int64_t bytes = size();
    DTR_FUZZ_NOTE("add_constant ", bytes);
    TensorId t = rt_->add_constant(bytes);
    DTR_FUZZ_NOTE("  = ", t);
    ex_.first_compute(rt_->graph(), rt_->graph().tensor(t).op,
                      ex_.first_hash("constant", {}));
    hold({&t, 1});
  }
  void call() {
    const char* name = kOpNames[in_.ConsumeIntegralInRange(0, 3)];
    std::vector<TensorId> in = pick_inputs();
    std::vector<OutputSpec> out = outputs(in.size());
    std::int64_t cost = in_.ConsumeIntegralInRange(0, 100);
    DTR_FUZZ_NOTE("call ", name, " ", ids(in), " -> ", specs(out), " cost ",
                  cost);
    auto res = rt_->call(name, in, out, cost);
    DTR_FUZZ_NOTE("  = ", ids(res));
    OpId op = rt_->graph().tensor(res[0]).op;
    ex_.first_compute(rt_->graph(), op, ex_.first_hash(name, in));
    hold(res);
  }
  void begin() {
    std::vector<TensorId> in = pick_inputs();
    DTR_FUZZ_NOTE("begin_call ", ids(in));
    rt_->begin_call(in);
    pending_.push_back(std::move(in));
  }
  // make_room for the outputs, run the op (read its inputs), end_call.
  void end() {
    if (pending_.empty()) return;
    std::vector<TensorId> in = std::move(pending_.back());
    pending_.pop_back();
    const char* name = kOpNames[in_.ConsumeIntegralInRange(0, 3)];
    std::vector<OutputSpec> out = outputs(in.size());
    std::int64_t bytes = 0;
    for (const OutputSpec& o : out) bytes += o.alias_of < 0 ? o.bytes : 0;
    std::uint64_t h = 0;
    DTR_FUZZ_NOTE("make_room ", bytes, " + end_call ", name, " ", ids(in),
                  " -> ", specs(out));
    try {
      rt_->make_room(bytes);
      // The op runs now: begin_call's locks kept its inputs resident.
      for (TensorId t : in) {
        DTR_FUZZ_CHECK(ex_.read(t) == ex_.truth(t), "input ", t);
      }
      h = ex_.first_hash(name, in);
    } catch (...) {
      rt_->abort_call(in);
      throw;
    }
    auto res = rt_->end_call(name, in, out, in_.ConsumeIntegralInRange(0, 100));
    DTR_FUZZ_NOTE("  = ", ids(res));
    ex_.first_compute(rt_->graph(), rt_->graph().tensor(res[0]).op, h);
    hold(res);
  }
  void abort() {
    if (pending_.empty()) return;
    DTR_FUZZ_NOTE("abort_call ", ids(pending_.back()));
    rt_->abort_call(pending_.back());
    pending_.pop_back();
  }
  void forget() {
    TensorId t = pick();
    DTR_FUZZ_NOTE("forget ", t);
    rt_->forget(t);
    forgot_ = true;
    std::erase(known_, t);
    forgotten_.push_back(t);
  }

  void check(std::int64_t before) {
    check_accounting(*rt_);
    locks_.assign(rt_->graph().storage_count(), 0);
    for (const auto& call : pending_) {
      for (TensorId t : call) ++locks_[rt_->graph().tensor(t).storage];
    }
    check_locks(rt_->graph(), locks_);
    // Memory may exceed a budget lowered since the last allocation, but
    // nothing may allocate past the budget.
    const std::int64_t now = rt_->stats().memory_bytes;
    if (now <= rt_->budget_bytes()) budget_lowered_ = false;
    DTR_FUZZ_CHECK(
        now <= rt_->budget_bytes() || (budget_lowered_ && now <= before),
        "memory ", now, " budget ", rt_->budget_bytes(), " before the step ",
        before);
    for (TensorId t : known_) {
      if (!rt_->graph().tensor(t).defined) continue;
      DTR_FUZZ_CHECK(ex_.read(t) == ex_.truth(t), "tensor ", t,
                     " changed value");
    }
  }

  // Ends the pending calls; then, with room to spare, every tensor the
  // program was given that can still be computed has its original value.
  // Only a storage freed for good, or a forget() (whose promise that the
  // value is never needed again the harness does not keep), may make one
  // impossible to compute: banishing must never free what a value that
  // is not freed for good still needs.
  void finish() {
    for (; !pending_.empty(); pending_.pop_back()) {
      rt_->abort_call(pending_.back());
    }
    ex_.arm(0);
    rt_->set_budget(kUnlimitedBytes);
    for (TensorId t : known_) {
      try {
        rt_->materialize(t);
      } catch (const InvalidArgument& e) {
        const Graph& g = rt_->graph();
        DTR_FUZZ_CHECK(forgot_ || g.storage(g.tensor(t).storage).banished,
                       "tensor ", t, " cannot be computed again: ", e.what());
        continue;
      } catch (const RematLimitExceeded&) {
        break;
      }
      DTR_FUZZ_CHECK(ex_.read(t) == ex_.truth(t), "tensor ", t,
                     " recomputed to another value");
    }
    check(rt_->stats().memory_bytes);
  }

  FuzzedDataProvider& in_;
  FaultExecutor ex_;
  std::unique_ptr<Runtime> rt_;
  std::vector<TensorId> known_;      // returned to the program, not forgotten
  std::vector<TensorId> forgotten_;  // for the error paths
  std::vector<std::vector<TensorId>> pending_;  // begin_call inputs
  std::vector<std::uint32_t> locks_;  // check(): the locks pending_ holds
  bool budget_lowered_ = false;
  bool forgot_ = false;  // a forget() succeeded (see finish)
  bool verbose_ = false;
};

}  // namespace
}  // namespace dtr::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  FuzzedDataProvider in(data, size);
  dtr::fuzz::Driver(in).run();
  return 0;
}
