#include "dtr/sim/dead_values.h"

namespace dtr::sim {

DeadValues::DeadValues(const trace::Program& program, Runtime& rt,
                       const std::vector<TensorId>& tensor_of)
    : program_(program),
      rt_(rt),
      tensor_of_(tensor_of),
      refs_(program.value_count, 0),
      readers_(program.value_count, 0),
      op_of_(program.value_count, kNoId),
      holds_lineage_(program.value_count, 0),
      dead_(program.value_count, 0),
      holders_(program.ops.size(), 0) {}

void DeadValues::on_compute(std::uint32_t op) {
  const trace::ProgramOp& o = program_.ops[op];
  const auto outputs = static_cast<std::uint32_t>(o.outputs.size());
  for (std::uint32_t k = 0; k < outputs; ++k) {
    const trace::ValueId v = o.first_output + k;
    refs_[v] = 1;
    op_of_[v] = op;
    holds_lineage_[v] = o.constant ? 0 : 1;
    computed_.push_back(v);
  }
  if (o.constant) return;
  holders_[op] = static_cast<std::int32_t>(outputs);
  for (trace::ValueId in : o.inputs) ++readers_[in];
}

void DeadValues::on_release(trace::ValueId v) {
  --refs_[v];
  check(v);
  drain();
}

void DeadValues::on_pin(trace::ValueId v) {
  let_go_of_lineage(v);
  drain();
}

void DeadValues::on_lineage_cut() {
  for (trace::ValueId v : computed_) let_go_of_lineage(v);
  computed_.clear();  // none holds lineage now
  drain();
}

// v stops holding its op's lineage; the last holder's going frees the
// op's inputs from it.
void DeadValues::let_go_of_lineage(trace::ValueId v) {
  if (!holds_lineage_[v]) return;
  holds_lineage_[v] = 0;
  const std::uint32_t op = op_of_[v];
  if (--holders_[op] > 0) return;
  for (trace::ValueId in : program_.ops[op].inputs) {
    --readers_[in];
    check(in);
  }
}

void DeadValues::check(trace::ValueId v) {
  if (!dead_[v] && refs_[v] == 0 && readers_[v] == 0) {
    dead_[v] = 1;
    work_.push_back(v);
  }
}

void DeadValues::drain() {
  while (!work_.empty()) {
    const trace::ValueId v = work_.back();
    work_.pop_back();
    if (!program_.ops[op_of_[v]].constant) {
      const TensorId t = tensor_of_[v];
      // Forgetting waits for a locked storage in the layer; nothing is
      // locked between the simulator's steps.
      if (rt_.graph().storage(rt_.graph().tensor(t).storage).locks == 0) {
        rt_.forget(t);
      }
    }
    let_go_of_lineage(v);
  }
}

}  // namespace dtr::sim
