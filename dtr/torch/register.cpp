// All dispatcher registration for dtr_torch, kept apart from the logic
// (checkpoint_context.cpp). Registration is static: link with
// -Wl,--no-as-needed or load with dlopen / torch.ops.load_library.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <vector>

#include "dtr/core/heuristic.h"
#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/counting_allocator.h"
#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/profiling.h"
#include "dtr/torch/trace_recording.h"
#include "dtr/trace/output_file.h"

namespace dtr::pt {
namespace {

void kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  Context::get().call(op, stack);
}

// Note [Composite kernels pre-empt the fallback]
// Ops with a CompositeExplicitAutograd(NonFunctional) kernel have it
// registered for every backend, PrivateUse1 included, so they would never
// reach the fallback: they would allocate plain CPU tensors behind DTR's
// back. Ops with both a CPU kernel and a CompositeImplicitAutograd one
// (silu_backward, ...) would decompose on PrivateUse1 where a CPU tensor
// runs the CPU kernel, with different rounding: efficientnet's gradients
// differed from plain PyTorch in the last bits. Register the same boxed
// kernel for all of them, so a checkpointed tensor takes exactly the path
// a CPU tensor takes, once aten is loaded (it always is: libtorch_cpu is a
// dependency of this library). Ops that only decompose (no CPU kernel)
// decompose for both.
bool needs_kernel(const c10::OperatorHandle& op) {
  const bool cpu = op.hasKernelForDispatchKey(c10::DispatchKey::CPU);
  const bool implicit =
      op.hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd);
  const bool explicit_composite =
      op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
      op.hasKernelForDispatchKey(
          c10::DispatchKey::CompositeExplicitAutogradNonFunctional);
  if (implicit) return cpu;
  return explicit_composite;
}

struct Overrides {
  Overrides() {
    cpu_accounting();  // the budget sees CPU allocations from now on
    Context::get();
    library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten",
                                               c10::DispatchKey::PrivateUse1,
                                               __FILE__, __LINE__);
    auto& dispatcher = c10::Dispatcher::singleton();
    for (const auto& name : dispatcher.getAllOpNames()) {
      if (name.name.rfind("aten::", 0) != 0) continue;
      auto op = dispatcher.findOp(name);
      if (!op) continue;
      if (op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) continue;
      if (!needs_kernel(*op)) continue;
      std::string short_name = name.name.substr(6);
      if (!name.overload_name.empty()) short_name += "." + name.overload_name;
      library->impl(short_name.c_str(),
                    torch::CppFunction::makeFromBoxedFunction<&kernel>());
      ++count;
    }
  }
  std::unique_ptr<torch::Library> library;
  int count = 0;
};

Overrides& overrides() {
  static auto* o = new Overrides();  // never destroyed (see Context::get)
  return *o;
}

[[maybe_unused]] const bool kRegistered = (overrides(), true);

// Python surface (torch.ops.dtr.*), used by python/dtr.
at::Tensor op_checkpoint(const at::Tensor& t) {
  return checkpoint(t);
}
at::Tensor op_decheckpoint(const at::Tensor& t) {
  return decheckpoint(t);
}
at::Tensor op_hold_value(const at::Tensor& t) {
  return Context::get().hold_value(t);
}
bool op_is_checkpoint(const at::Tensor& t) {
  return is_checkpoint(t);
}
BudgetScope parse_scope(const std::string& scope) {
  DTR_CHECK(scope == "checkpointed" || scope == "process",
            "[dtr] unknown budget scope '", scope, "' (checkpointed, process)");
  return scope == "process" ? BudgetScope::kProcess
                            : BudgetScope::kCheckpointed;
}
int64_t op_set_budget(int64_t bytes, std::string scope) {
  return set_budget(bytes, parse_scope(scope));
}
int64_t op_push_budget(int64_t bytes, std::string scope) {
  return static_cast<int64_t>(push_budget(bytes, parse_scope(scope)));
}
void op_pop_budget(int64_t token) {
  pop_budget(static_cast<std::uint64_t>(token));
}
std::string op_budget_scope() {
  return budget_scope() == BudgetScope::kProcess ? "process" : "checkpointed";
}
int64_t op_budget() {
  return budget();
}
int64_t op_unlimited() {
  return kUnlimited;
}
void op_begin_step() {
  begin_step();
}
bool op_set_staging(bool on) {
  return set_staging(on);
}
void op_reset_peak() {
  reset_peak();
}
void op_evict_all() {
  evict_all();
}
void op_nested_backward(bool enter) {
  if (enter) {
    Context::get().enter_nested_backward();
  } else {
    Context::get().exit_nested_backward();
  }
}
void op_dump() {
  Context::get().dump(std::cerr);
}
void op_set_cost_model(std::string model) {
  DTR_CHECK(model == "measured" || model == "bytes",
            "[dtr] unknown cost model '", model, "' (measured, bytes)");
  set_cost_model(model == "bytes" ? CostModel::kBytes : CostModel::kMeasured);
}
// Python's dtr.record(path): one recording at a time, into a file.
// The trace is renamed onto `path` when the recording stops: a killed
// process leaves no trace that reads as a shorter program.
struct FileRecording {
  explicit FileRecording(const std::string& path) : file(path) {}
  dtr::trace::AtomicOutput file;
  std::unique_ptr<TraceRecording> recording;
};
std::unique_ptr<FileRecording>& file_recording() {
  static auto* r = new std::unique_ptr<FileRecording>();
  return *r;
}
void op_start_recording(std::string path) {
  DTR_CHECK(!file_recording(), "[dtr] record: a recording is running");
  auto r = std::make_unique<FileRecording>(path);
  DTR_CHECK(r->file.stream().good(), "[dtr] record: cannot write ", path);
  r->recording = std::make_unique<TraceRecording>(r->file.stream());
  file_recording() = std::move(r);
}
void op_stop_recording() {
  auto r = std::move(file_recording());
  if (!r) return;
  r->recording.reset();
  try {
    r->file.commit();
  } catch (const dtr::Error& e) {
    throw dtr::Error(std::string("[dtr] record: ") + e.what());
  }
}

// Python's dtr.profile(path): one profile at a time.
std::unique_ptr<Profile>& file_profile() {
  static auto* p = new std::unique_ptr<Profile>();
  return *p;
}
void op_start_profile(std::string path) {
  DTR_CHECK(!file_profile(), "[dtr] profile: a profile is running");
  file_profile() = std::make_unique<Profile>(std::move(path));
}
void op_stop_profile() {
  auto p = std::move(file_profile());
  if (p) p->close();  // throws, naming the file, if a write failed
}

// By name, so the Python side never keeps a positional list in step.
c10::Dict<std::string, int64_t> op_stats() {
  const Stats s = stats();
  c10::Dict<std::string, int64_t> d;
  d.insert("budget_bytes", s.budget_bytes);
  d.insert("dtr_bytes", s.dtr_bytes);
  d.insert("dtr_peak_bytes", s.dtr_peak_bytes);
  d.insert("allocator_bytes", s.allocator_bytes);
  d.insert("allocator_peak_bytes", s.allocator_peak_bytes);
  d.insert("outside_bytes", s.outside_bytes);
  d.insert("held_bytes", s.held_bytes);
  d.insert("ops", static_cast<int64_t>(s.ops));
  d.insert("remat_ops", static_cast<int64_t>(s.remat_ops));
  d.insert("evictions", static_cast<int64_t>(s.evictions));
  d.insert("eager_evictions", static_cast<int64_t>(s.eager_evictions));
  d.insert("lineage_cuts", static_cast<int64_t>(s.lineage_cuts));
  d.insert("escapes", static_cast<int64_t>(s.escapes));
  d.insert("remat_compute_ns", s.remat_compute_ns);
  d.insert("choose_wall_ns", s.choose_wall_ns);
  d.insert("replay_wall_ns", s.replay_wall_ns);
  d.insert("graph_ops", s.graph_ops);
  d.insert("graph_tensors", s.graph_tensors);
  d.insert("graph_storages", s.graph_storages);
  d.insert("auto_heuristic", s.auto_heuristic ? 1 : 0);
  d.insert("steps", static_cast<int64_t>(s.steps));
  d.insert("auto_decisions", static_cast<int64_t>(s.auto_decisions));
  d.insert("auto_decision_ns", s.auto_decision_ns);
  d.insert("staged_steps", static_cast<int64_t>(s.staged_steps));
  d.insert("diverged_steps", static_cast<int64_t>(s.diverged_steps));
  d.insert("eviction_searches", static_cast<int64_t>(s.eviction_searches));
  return d;
}

}  // namespace
}  // namespace dtr::pt

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&dtr::pt::kernel>());
}

// A sparse tensor built from checkpointed indices or values (the sparse
// gradient of nn.Embedding(sparse=True)) dispatches here: the kernel runs
// it on the plain values and the sparse result stays a plain tensor.
TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&dtr::pt::kernel>());
}

namespace dtr::pt {
namespace {

// Note [Autograd of other libraries' operators]
// An operator another library defines without an autograd kernel
// (torchvision::nms: one CPU kernel) reaches AutogradPrivateUse1 on
// checkpointed tensors. PyTorch 2.13 has there the basic autograd fallback
// it has on AutogradCPU: the operator runs below autograd, and a backward
// through its results warns. PyTorch 2.6 has none, and such a call fails
// in the dispatcher ("Could not run ... with arguments from the
// 'AutogradPrivateUse1' backend"). Where there is none, dtr registers that
// fallback, so the operator runs on checkpointed tensors as on plain ones.
struct WrapperAutogradFallback {
  WrapperAutogradFallback() {
    if (c10::Dispatcher::singleton().hasBackendFallbackForDispatchKey(
            c10::DispatchKey::AutogradPrivateUse1)) {
      return;
    }
    library = std::make_unique<torch::Library>(
        torch::Library::IMPL, "_", c10::DispatchKey::AutogradPrivateUse1,
        __FILE__, __LINE__);
    library->fallback(torch::autograd::basicAutogradNotImplementedFallback());
  }
  std::unique_ptr<torch::Library> library;
};
// Never destroyed, like the overrides: unregistering at exit could run
// after the dispatcher is gone.
[[maybe_unused]] const WrapperAutogradFallback* const
    wrapper_autograd_fallback = new WrapperAutogradFallback();

}  // namespace
}  // namespace dtr::pt

TORCH_LIBRARY(dtr, m) {
  m.def("checkpoint(Tensor self) -> Tensor", &dtr::pt::op_checkpoint);
  m.def("decheckpoint(Tensor self) -> Tensor", &dtr::pt::op_decheckpoint);
  m.def("hold_value(Tensor self) -> Tensor", &dtr::pt::op_hold_value);
  m.def("is_checkpoint(Tensor self) -> bool", &dtr::pt::op_is_checkpoint);
  m.def("set_budget(int bytes, str scope=\"checkpointed\") -> int",
        &dtr::pt::op_set_budget);
  m.def("push_budget(int bytes, str scope=\"checkpointed\") -> int",
        &dtr::pt::op_push_budget);
  m.def("pop_budget(int token) -> ()", &dtr::pt::op_pop_budget);
  m.def("budget_scope() -> str", &dtr::pt::op_budget_scope);
  m.def("budget() -> int", &dtr::pt::op_budget);
  m.def("unlimited() -> int", &dtr::pt::op_unlimited);
  m.def("reset_peak() -> ()", &dtr::pt::op_reset_peak);
  m.def("begin_step() -> ()", &dtr::pt::op_begin_step);
  m.def("set_staging(bool on) -> bool", &dtr::pt::op_set_staging);
  m.def("dump() -> ()", &dtr::pt::op_dump);
  m.def("evict_all() -> ()", &dtr::pt::op_evict_all);
  m.def("nested_backward(bool enter) -> ()", &dtr::pt::op_nested_backward);
  m.def("set_cost_model(str model) -> ()", &dtr::pt::op_set_cost_model);
  m.def("stats() -> Dict(str, int)", &dtr::pt::op_stats);
  m.def("set_heuristic(str name) -> ()",
        [](std::string name) { dtr::pt::set_heuristic(name); });
  m.def("heuristic() -> str", [] { return dtr::pt::heuristic(); });
  m.def("heuristics(bool auto_only) -> str[]",
        [](bool auto_only) { return dtr::heuristic_names(auto_only); });
  m.def("set_thrash_limit(float ratio) -> float",
        [](double ratio) { return dtr::pt::set_thrash_limit(ratio); });
  m.def("heuristic_in_force() -> str",
        [] { return dtr::pt::stats().heuristic; });
  m.def("start_recording(str path) -> ()", &dtr::pt::op_start_recording);
  m.def("stop_recording() -> ()", &dtr::pt::op_stop_recording);
  m.def("start_profile(str path) -> ()", &dtr::pt::op_start_profile);
  m.def("stop_profile() -> ()", &dtr::pt::op_stop_profile);
}
