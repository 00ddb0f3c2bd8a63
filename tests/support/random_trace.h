#pragma once
// A random program (random_program.h) as the trace Program the simulator
// and the static planners read: the same values, calls and handles.
#include "dtr/trace/program.h"
#include "support/random_program.h"

namespace dtr::testing {

inline trace::Program to_trace_program(const RandomProgram& rp) {
  trace::Program p;
  p.source = "random";
  p.value_count = static_cast<std::uint32_t>(rp.value_count);
  for (const Instr& in : rp.instrs) {
    const auto value = static_cast<std::uint32_t>(in.value);
    switch (in.kind) {
      case Instr::kConstant:
      case Instr::kCall: {
        trace::ProgramOp op;
        op.name = in.name;
        op.cost_ns = in.cost_ns;
        op.inputs.assign(in.inputs.begin(), in.inputs.end());
        op.outputs = in.outputs;
        op.first_output = value;
        op.constant = in.kind == Instr::kConstant;
        op.backward = in.name.find("backward") != std::string::npos;
        p.steps.push_back({trace::StepKind::kCompute,
                           static_cast<std::uint32_t>(p.ops.size())});
        p.total_cost_ns += op.cost_ns;
        p.constant_count += op.constant ? 1 : 0;
        p.ops.push_back(std::move(op));
        break;
      }
      case Instr::kRetain:
        p.steps.push_back({trace::StepKind::kRetain, value});
        break;
      case Instr::kRelease:
        p.steps.push_back({trace::StepKind::kRelease, value});
        break;
      case Instr::kPin:
        p.steps.push_back({trace::StepKind::kPin, value});
        break;
    }
  }
  return p;
}

}  // namespace dtr::testing
