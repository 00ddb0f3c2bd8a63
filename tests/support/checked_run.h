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

/// With `recover_from_oom`, an out-of-memory raises the budget to unlimited
/// and retries the instruction (checking that the runtime is still usable).
/// By default every victim search runs both the index and the scan and
/// throws dtr::InternalError if they differ (ChoiceMode::kCheck).
inline CheckedOutcome run_checked(const RandomProgram& p,
                                  const RuntimeOptions& options,
                                  const std::string& heuristic,
                                  bool recover_from_oom = false,
                                  ChoiceMode choice = ChoiceMode::kCheck) {
  CheckedExecutor ex;
  auto h = make_heuristic(heuristic, options.seed);
  h->set_choice_mode(choice);
  Runtime rt(options, std::move(h), &ex);
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
      switch (ins.kind) {
        case Instr::kConstant: {
          TensorId t = rt.add_constant(ins.outputs[0].bytes,
                                       "constant#" + std::to_string(ins.value));
          ex.first_compute(rt.graph(), rt.graph().tensor(t).op);
          tensor[ins.value] = t;
          break;
        }
        case Instr::kCall: {
          std::vector<TensorId> in;
          for (int v : ins.inputs) in.push_back(tensor[v]);
          auto res = rt.call(ins.name, in, ins.outputs, ins.cost_ns);
          ex.first_compute(rt.graph(), rt.graph().tensor(res[0]).op);
          for (std::size_t k = 0; k < res.size(); ++k) {
            tensor[ins.value + k] = res[k];
          }
          break;
        }
        case Instr::kRetain:
          rt.retain(tensor[ins.value]);
          break;
        case Instr::kRelease:
          rt.release(tensor[ins.value]);
          break;
        case Instr::kPin: {
          rt.pin(tensor[ins.value]);
          TensorId t = tensor[ins.value];
          EXPECT_EQ(ex.read(t), ex.truth(t)) << "output value changed";
          out.outputs.push_back(ex.read(t));
          break;
        }
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
