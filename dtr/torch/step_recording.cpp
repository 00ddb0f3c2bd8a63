#include "dtr/torch/step_recording.h"

#include <algorithm>
#include <utility>

namespace dtr::pt {

namespace {
constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;
}  // namespace

StepRecording::StepRecording() {
  restart(false);
}

void StepRecording::restart(bool write) {
  hash_ = kFnvOffset;
  calls_ = 0;
  writing_ = write;
  in_backward_ = false;
  program_ = trace::Program{};
  program_.source = "auto step";
  released_.clear();
  if (++epoch_ == 0) {  // wrapped: no stale stamp may match again
    std::fill(stamp_.begin(), stamp_.end(), 0u);
    epoch_ = 1;
  }
}

void StepRecording::stop_writing() {
  writing_ = false;
  program_ = trace::Program{};
  released_ = {};
}

void StepRecording::mix(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    hash_ = (hash_ ^ ((v >> (8 * i)) & 0xff)) * kFnvPrime;
  }
}

void StepRecording::mix(const std::string& s) {
  for (unsigned char c : s) hash_ = (hash_ ^ c) * kFnvPrime;
  mix(s.size());
}

trace::ValueId StepRecording::define(TensorId id) {
  if (id >= stamp_.size()) {
    stamp_.resize(id + 1, 0u);
    value_of_.resize(id + 1);
  }
  const trace::ValueId v = program_.value_count++;
  released_.push_back(false);
  value_of_[id] = v;
  stamp_[id] = epoch_;
  return v;
}

// As the trace reader's add_op: consecutive output values, the backward
// flag from the first "*backward*" op on, a compute step.
void StepRecording::add_op(trace::ProgramOp op) {
  if (op.name.find("backward") != std::string::npos) in_backward_ = true;
  op.first_output = program_.value_count;
  op.backward = in_backward_;
  program_.total_cost_ns += op.cost_ns;
  program_.steps.push_back({trace::StepKind::kCompute,
                            static_cast<std::uint32_t>(program_.ops.size())});
  program_.ops.push_back(std::move(op));
}

trace::ValueId StepRecording::use(const Graph& g, TensorId id) {
  if (mapped(id)) return value_of_[id];
  // Made before this step: to the simulator, memory it cannot free.
  return add_constant(id, g.storage(g.tensor(id).storage).bytes);
}

// As the trace reader reads CONSTANT: a nullary op of one new value.
trace::ValueId StepRecording::add_constant(TensorId id, std::int64_t bytes) {
  trace::ProgramOp op;
  op.name = "constant";
  op.constant = true;
  op.outputs.push_back({bytes, -1});
  add_op(std::move(op));
  ++program_.constant_count;
  return define(id);
}

void StepRecording::constant(TensorId id, std::int64_t bytes) {
  mix(static_cast<std::uint64_t>(bytes));
  if (writing_) add_constant(id, bytes);
}

void StepRecording::call(const Graph& g, const std::string& op,
                         std::span<const TensorId> inputs,
                         std::span<const TensorId> outputs,
                         std::span<const OutputSpec> specs,
                         std::int64_t cost_ns, std::int64_t workspace_bytes) {
  ++calls_;
  mix(op);
  mix(inputs.size());
  for (const OutputSpec& s : specs) {
    mix(static_cast<std::uint64_t>(s.alias_of < 0 ? s.bytes : -1));
    mix(static_cast<std::uint64_t>(s.alias_of));
  }
  if (!writing_) return;
  if (calls_ > kMaxWrittenCalls) {
    stop_writing();
    return;
  }
  trace::ProgramOp p;
  p.name = op;
  p.cost_ns = cost_ns;
  p.workspace_bytes = workspace_bytes;
  p.inputs.reserve(inputs.size());
  for (TensorId in : inputs) p.inputs.push_back(use(g, in));
  p.outputs.reserve(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const int alias = specs[i].alias_of;
    p.outputs.push_back({alias >= 0 ? 0 : specs[i].bytes, alias});
  }
  add_op(std::move(p));
  for (TensorId out : outputs) define(out);
}

void StepRecording::release(TensorId id) {
  if (!writing_ || !mapped(id)) return;  // made before the step: not ours
  const trace::ValueId v = value_of_[id];
  program_.steps.push_back({trace::StepKind::kRelease, v});
  released_[v] = true;
  stamp_[id] = 0;
}

void StepRecording::pin(TensorId id) {
  if (!writing_ || !mapped(id)) return;  // made before the step: not ours
  program_.steps.push_back({trace::StepKind::kPin, value_of_[id]});
}

void StepRecording::unpin(TensorId id) {
  if (!writing_ || !mapped(id)) return;
  program_.steps.push_back({trace::StepKind::kUnpin, value_of_[id]});
}

void StepRecording::annotate(const std::string& what) {
  if (!writing_ || what != "LINEAGE_CUT") return;
  auto& cuts = program_.lineage_cuts;
  if (cuts.empty() || cuts.back() != program_.steps.size()) {
    cuts.push_back(program_.steps.size());
  }
}

trace::Program StepRecording::program() const {
  trace::Program p = program_;
  // The output condition: every value still referenced stays resident.
  for (trace::ValueId v = 0; v < p.value_count; ++v) {
    if (!released_[v]) p.steps.push_back({trace::StepKind::kPin, v});
  }
  return p;
}

}  // namespace dtr::pt
