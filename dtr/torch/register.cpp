// All dispatcher registration for dtr_torch, kept apart from the logic
// (checkpoint_context.cpp). Registration is static: link with
// -Wl,--no-as-needed or load with dlopen / torch.ops.load_library.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <iostream>
#include <memory>
#include <vector>

#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/counting_allocator.h"
#include "dtr/torch/dtr_torch.h"

namespace dtr::pt {
namespace {

void kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  Context::get().call(op, stack);
}

// Note [Composite kernels pre-empt the fallback]
// Ops with a CompositeExplicitAutograd(NonFunctional) kernel have it
// registered for every backend, PrivateUse1 included, so they would never
// reach the fallback: they would allocate plain CPU tensors behind DTR's
// back. Register the same boxed kernel for each of them, once aten is
// loaded (it always is: libtorch_cpu is a dependency of this library).
struct Overrides {
  Overrides() {
    install_counting_allocator();
    Context::get();
    library = std::make_unique<torch::Library>(
        torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1,
        __FILE__, __LINE__);
    auto& dispatcher = c10::Dispatcher::singleton();
    for (const auto& name : dispatcher.getAllOpNames()) {
      if (name.name.rfind("aten::", 0) != 0) continue;
      auto op = dispatcher.findOp(name);
      if (!op) continue;
      if (op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) continue;
      if (op->hasKernelForDispatchKey(
              c10::DispatchKey::CompositeImplicitAutograd)) {
        continue;
      }
      if (!op->hasKernelForDispatchKey(
              c10::DispatchKey::CompositeExplicitAutograd) &&
          !op->hasKernelForDispatchKey(
              c10::DispatchKey::CompositeExplicitAutogradNonFunctional)) {
        continue;
      }
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
at::Tensor op_checkpoint(const at::Tensor& t) { return checkpoint(t); }
at::Tensor op_decheckpoint(const at::Tensor& t) { return decheckpoint(t); }
bool op_is_checkpoint(const at::Tensor& t) { return is_checkpoint(t); }
int64_t op_set_budget(int64_t bytes) { return set_budget(bytes); }
int64_t op_budget() { return budget(); }
void op_reset_peak() { reset_peak(); }
void op_evict_all() { evict_all(); }
void op_dump() { Context::get().dump(std::cerr); }
void op_set_cost_model(std::string model) {
  TORCH_CHECK(model == "measured" || model == "bytes",
              "[dtr] unknown cost model '", model, "' (measured, bytes)");
  set_cost_model(model == "bytes" ? CostModel::kBytes : CostModel::kMeasured);
}
std::vector<int64_t> op_stats() {
  Stats s = stats();
  return {s.budget_bytes,
          s.dtr_bytes,
          s.dtr_peak_bytes,
          s.allocator_bytes,
          s.allocator_peak_bytes,
          s.outside_bytes,
          s.held_bytes,
          static_cast<int64_t>(s.ops),
          static_cast<int64_t>(s.remat_ops),
          static_cast<int64_t>(s.evictions),
          static_cast<int64_t>(s.eager_evictions),
          static_cast<int64_t>(s.lineage_cuts),
          s.remat_compute_ns,
          static_cast<int64_t>(s.escapes)};
}

}  // namespace
}  // namespace dtr::pt

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(
      torch::CppFunction::makeFromBoxedFunction<&dtr::pt::kernel>());
}

TORCH_LIBRARY(dtr, m) {
  m.def("checkpoint(Tensor self) -> Tensor", &dtr::pt::op_checkpoint);
  m.def("decheckpoint(Tensor self) -> Tensor", &dtr::pt::op_decheckpoint);
  m.def("is_checkpoint(Tensor self) -> bool", &dtr::pt::op_is_checkpoint);
  m.def("set_budget(int bytes) -> int", &dtr::pt::op_set_budget);
  m.def("budget() -> int", &dtr::pt::op_budget);
  m.def("reset_peak() -> ()", &dtr::pt::op_reset_peak);
  m.def("dump() -> ()", &dtr::pt::op_dump);
  m.def("evict_all() -> ()", &dtr::pt::op_evict_all);
  m.def("set_cost_model(str model) -> ()", &dtr::pt::op_set_cost_model);
  m.def("stats() -> int[]", &dtr::pt::op_stats);
}
