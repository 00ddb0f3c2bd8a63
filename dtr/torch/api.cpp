// The public C++ API (dtr_torch.h): thin forwarding to the Context.
#include <sstream>

#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/trace_recording.h"

namespace dtr::pt {

namespace module_detail {
void check_parameters(const torch::nn::Module& module) {
  // Parameters stay plain (optimizers and state_dict() expect real tensors
  // they can write and save): the optimizer updates
  // them in place and a lineage cut keeps replays correct. Check here that
  // they are tensors the kernel can read.
  for (const auto& p : module.parameters()) {
    DTR_CHECK(p.device().is_cpu() && p.layout() == at::kStrided,
              "[dtr] checkpoint(module): parameter is not a dense CPU "
              "tensor: ",
              p.toString());
  }
}
}  // namespace module_detail

at::Tensor decheckpoint(const at::Tensor& t) {
  return Context::get().decheckpoint(t);
}

bool is_checkpoint(const at::Tensor& t) {
  return as_checkpoint(t) != nullptr;
}

std::int64_t set_budget(std::int64_t bytes, BudgetScope scope) {
  return Context::get().set_budget(bytes, scope);
}

std::uint64_t push_budget(std::int64_t bytes, BudgetScope scope) {
  return Context::get().push_budget(bytes, scope);
}

void pop_budget(std::uint64_t token) {
  Context::get().pop_budget(token);
}

std::int64_t budget() {
  return Context::get().budget();
}

BudgetScope budget_scope() {
  return Context::get().budget_scope();
}

void set_cost_model(CostModel model) {
  Context::get().set_cost_model(model);
}

void set_heuristic(const std::string& name) {
  Context::get().set_heuristic(name);
}

double set_thrash_limit(double ratio) {
  return Context::get().set_thrash_limit(ratio);
}

std::string heuristic() {
  return Context::get().heuristic_name();
}

Stats stats() {
  return Context::get().stats();
}

void reset_peak() {
  Context::get().reset_peak();
}

void evict_all() {
  Context::get().evict_all();
}

std::string to_string(const Stats& s) {
  std::ostringstream out;
  out << "budget_bytes=" << s.budget_bytes << " dtr_bytes=" << s.dtr_bytes
      << " dtr_peak_bytes=" << s.dtr_peak_bytes
      << " allocator_bytes=" << s.allocator_bytes
      << " allocator_peak_bytes=" << s.allocator_peak_bytes
      << " outside_bytes=" << s.outside_bytes << " held_bytes=" << s.held_bytes
      << " ops=" << s.ops << " remat_ops=" << s.remat_ops
      << " evictions=" << s.evictions
      << " eager_evictions=" << s.eager_evictions
      << " lineage_cuts=" << s.lineage_cuts << " escapes=" << s.escapes
      << " remat_compute_ns=" << s.remat_compute_ns
      << " choose_wall_ns=" << s.choose_wall_ns
      << " replay_wall_ns=" << s.replay_wall_ns << " graph_ops=" << s.graph_ops
      << " graph_tensors=" << s.graph_tensors
      << " graph_storages=" << s.graph_storages << " heuristic=" << s.heuristic
      << (s.auto_heuristic ? " (auto)" : "") << " steps=" << s.steps
      << " auto_decisions=" << s.auto_decisions
      << " auto_decision_ns=" << s.auto_decision_ns;
  return out.str();
}

}  // namespace dtr::pt

namespace dtr::pt {

TraceRecording::TraceRecording(std::ostream& out)
    : recorder_(std::make_unique<TraceRecorder>(out)) {
  recorder_->annotate("START");
  // The runtime forgets dead values; so must the simulator replaying this.
  recorder_->annotate("FORGETS_DEAD");
  Context::get().set_recorder(recorder_.get());
}

TraceRecording::~TraceRecording() {
  Context::get().set_recorder(nullptr);
}

}  // namespace dtr::pt
