#pragma once
// Drives a Runtime through a RandomProgram with a CheckedExecutor, checking
// after every instruction that the budget holds and the bookkeeping is
// consistent; at the end, that every output has its original value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"
#include "support/checked_executor.h"
#include "support/random_program.h"

namespace dtr::testing {

struct CheckedOutcome {
  bool oom = false;
  bool thrash = false;
  RuntimeStats stats;
  std::vector<std::uint64_t> outputs;  // values of the pinned tensors
  std::size_t replays = 0;
};

/// Runs one instruction of a RandomProgram that makes or drops a value
/// (constant, call, retain, release) on `rt`: ids go to `tensor` (indexed by
/// the program's values) and first computations to `ex`. Returns false, doing
/// nothing, for kPin, whose meaning (pin, materialize) is the caller's.
inline bool apply_instr(Runtime& rt, CheckedExecutor& ex, const Instr& ins,
                        std::vector<TensorId>& tensor) {
  switch (ins.kind) {
    case Instr::kConstant:
      tensor[ins.value] = rt.add_constant(ins.outputs[0].bytes);
      ex.first_compute(rt.graph(), rt.graph().tensor(tensor[ins.value]).op);
      return true;
    case Instr::kCall: {
      std::vector<TensorId> in;
      for (int v : ins.inputs) in.push_back(tensor[v]);
      auto res = rt.call(ins.name, in, ins.outputs, ins.cost_ns);
      ex.first_compute(rt.graph(), rt.graph().tensor(res[0]).op);
      for (std::size_t k = 0; k < res.size(); ++k) {
        tensor[ins.value + k] = res[k];
      }
      return true;
    }
    case Instr::kRetain:
      rt.retain(tensor[ins.value]);
      return true;
    case Instr::kRelease:
      rt.release(tensor[ins.value]);
      return true;
    case Instr::kPin:
      return false;
  }
  return false;
}

/// With `recover_from_oom`, an out-of-memory raises the budget to unlimited
/// and retries the instruction (checking that the runtime is still usable).
/// By default every victim search runs both the index and the scan and
/// throws dtr::InternalError if they differ (ChoiceMode::kCheck).
/// `observer` (not owned), if any, watches the run; `placement` (not
/// owned), if any, places its storages.
inline CheckedOutcome run_checked(const RandomProgram& p,
                                  const RuntimeOptions& options,
                                  const std::string& heuristic,
                                  bool recover_from_oom = false,
                                  ChoiceMode choice = ChoiceMode::kCheck,
                                  RuntimeObserver* observer = nullptr,
                                  Placement* placement = nullptr) {
  CheckedExecutor ex;
  auto h = make_heuristic(heuristic, options.seed);
  h->set_choice_mode(choice);
  Runtime rt(options, std::move(h), &ex);
  rt.set_observer(observer);
  rt.set_placement(placement);
  std::vector<TensorId> tensor(p.value_count, kNoId);
  CheckedOutcome out;
  auto check = [&] {
    EXPECT_LE(rt.stats().memory_bytes, rt.budget_bytes());
    EXPECT_LE(rt.stats().peak_bytes, rt.budget_bytes());
    rt.check_invariants();
  };
  for (std::size_t i = 0; i < p.instrs.size(); ++i) {
    const Instr& ins = p.instrs[i];
    try {
      if (!apply_instr(rt, ex, ins, tensor)) {  // kPin: an output
        rt.pin(tensor[ins.value]);
        TensorId t = tensor[ins.value];
        EXPECT_EQ(ex.read(t), ex.truth(t)) << "output value changed";
        out.outputs.push_back(ex.read(t));
      }
    } catch (const OutOfMemory& e) {
      check();
      EXPECT_GT(e.needed_bytes(), 0);
      if (!recover_from_oom) {
        out.oom = true;
        break;
      }
      out.oom = true;
      rt.set_budget(kUnlimitedBytes);
      --i;  // retry with room to spare
      continue;
    } catch (const RematLimitExceeded&) {
      check();
      out.thrash = true;
      break;
    }
    check();
  }
  out.stats = rt.stats();
  out.replays = ex.replays();
  return out;
}

}  // namespace dtr::testing
