// The handlers of special_ops.h: autograd metadata (detach_), in-place
// restriding (as_strided_, transpose_, ...), unsafe_split (clones), rrelu's
// noise, and explicit device copies (run plain).
#include "dtr/torch/special_ops.h"

#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/torch/call_guard.h"
#include "dtr/torch/checkpoint_tensor.h"
#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/ivalue_tensors.h"
#include "dtr/torch/op_rules.h"

namespace dtr::pt {

namespace {

// Strides for a compact copy of a view that TensorIterator loops over
// exactly as over the view: the same order of dimensions, and the same
// pairs of neighbours that coalesce into one loop (one element of padding
// after each pair that does not). nullopt if the view overlaps itself.
std::optional<std::vector<std::int64_t>> layout_preserving_strides(
    const at::Tensor& v) {
  const auto sizes = v.sizes();
  const auto strides = v.strides();
  const std::int64_t dims = v.dim();
  std::vector<std::int64_t> order;  // dimensions TensorIterator keeps
  for (std::int64_t d = 0; d < dims; ++d) {
    if (sizes[d] != 1) order.push_back(d);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return strides[a] < strides[b]; });
  std::vector<std::int64_t> out(dims, 1);
  std::int64_t next = 1;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::int64_t d = order[k];
    if (strides[d] == 0) return std::nullopt;
    out[d] = next;
    next *= sizes[d];
    const bool coalesces =
        k + 1 == order.size() || strides[order[k + 1]] == strides[d] * sizes[d];
    if (!coalesces) next += 1;
  }
  if (!order.empty() && strides[order[0]] != 1) {
    for (auto& s : out) s *= 2;  // a strided inner loop stays strided
  }
  return out;
}

// A recomputable copy of the checkpointed view `p` in its own storage.
at::Tensor layout_preserving_clone(const at::Tensor& p) {
  auto strides = layout_preserving_strides(p);
  if (!strides) return p.clone(at::MemoryFormat::Contiguous);
  return p.new_empty_strided(p.sizes(), *strides).copy_(p);
}

}  // namespace

// Operators that are not recorded as one call of themselves.
bool SpecialOps::route(const c10::OperatorHandle& op, const OpRules& rules,
                       torch::jit::Stack* stack, Args& args) {
  using Route = OpRules::Route;
  switch (rules.route) {
    case Route::kNone:
      return false;
    case Route::kDetach:  // autograd metadata only
      stack->push_back(std::move(args[0]));
      return true;
    case Route::kUnsafeSplit:
      if (in_unsafe_split_ || as_checkpoint(args[0].toTensor()) == nullptr) {
        return false;
      }
      unsafe_split(op, stack, args);
      return true;
    case Route::kInPlaceView:
      if (as_checkpoint(args[0].toTensor()) == nullptr) return false;
      in_place_view(*rules.view, stack, args);
      return true;
    case Route::kRreluWithNoise:
      if (as_checkpoint(args[1].toTensor()) == nullptr) return false;
      rrelu_with_noise(op, stack, args);
      return true;
    case Route::kToCopy:
      // An explicit device asks for a real tensor (printing does this).
      if (!rules.device_arg || args[*rules.device_arg].isNone()) return false;
      plain(op, stack, std::move(args));
      return true;
  }
  return false;
}

// Note [In-place view operators]
// `x.as_strided_(...)`, `x.transpose_(0, 1)` and friends change only the
// metadata of x: they are the view operator applied to x (its row in
// kSpecialOps names it), with x's handle then pointing at the view. The
// view is an alias in the runtime, replayed like any other view, so
// channels_last outputs (adaptive_avg_pool2d restrides its result with
// as_strided_) stay checkpointed values.
void SpecialOps::in_place_view(const c10::OperatorHandle& view,
                               torch::jit::Stack* stack, Args& args) {
  at::Tensor self = args[0].toTensor();
  if (auto* in = as_checkpoint(self); in && in->handle()->cell->program_input) {
    // The caller's tensor is not ours to reshape: only the wrapper would
    // change, silently unlike PyTorch, where the caller sees it.
    throw UnsupportedOperator(detail::concat(
        "[dtr] ", view.schema().name(),
        "_: cannot change the shape of a "
        "tensor given to checkpoint() (a module's input) in place; the "
        "caller's tensor would not change. Use the out-of-place view "
        "(x = x.",
        view.schema().name().substr(6), "(...))"));
  }
  for (auto& a : args) stack->push_back(a);
  kernel_(view, stack);
  at::Tensor result = stack->back().toTensor();
  stack->pop_back();
  auto* w = as_checkpoint(self);
  auto* r = as_checkpoint(result);
  DTR_ASSERT(r != nullptr, "in-place view of a checkpointed tensor is plain");
  // This wrapper alone changes shape: shallow copies (.data) keep theirs.
  w->set_handle(std::make_shared<Handle>(r->handle()->cell));
  w->refresh_metadata(r->handle()->cell->value);
  stack->push_back(self);
}

// Note [unsafe_split]
// lstm_cell (and GRU cells) split the gates with unsafe_split and then
// apply sigmoid_/tanh_ to each chunk in place. On aliases of one storage
// with live siblings, an in-place write must run directly and holds the
// whole storage (one gates buffer per time step: the LSTM could not go
// below ~95% of its peak). PyTorch leaves the aliasing of these outputs
// to the caller ("safe as long as only the input, or only the outputs,
// are modified in place"), so we return independent clones: each chunk
// is a fresh, recomputable storage, mutated by copy-on-write/move like
// any other value, and the split input is evictable again.
// The clones keep the chunks' layout (layout_preserving_strides): a
// contiguous clone makes TensorIterator coalesce the rows into one loop,
// which moves the vectorized loop's scalar tail and changes sigmoid_'s
// last bits (nn.GRU differed from plain PyTorch in 128 of 300 trials).
void SpecialOps::unsafe_split(const c10::OperatorHandle& op,
                              torch::jit::Stack* stack, Args& args) {
  for (auto& a : args) stack->push_back(std::move(a));
  in_unsafe_split_ = true;
  try {
    kernel_(op, stack);
  } catch (...) {
    in_unsafe_split_ = false;
    throw;
  }
  in_unsafe_split_ = false;
  auto parts = stack->back().toTensorList();
  stack->pop_back();
  c10::List<at::Tensor> out;
  out.reserve(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    at::Tensor p = parts.get(i);
    out.push_back(as_checkpoint(p) != nullptr ? layout_preserving_clone(p) : p);
  }
  parts = c10::List<at::Tensor>();
  stack->push_back(std::move(out));
}

// Note [rrelu's noise]
// aten::rrelu_with_noise fills `noise` (each element's factor, which its
// backward reads) although the 1.13 schema does not mark it written. The
// kernel would record noise as what made it (empty_like), and a replay
// after eviction would hand backward uninitialized memory: silently wrong
// gradients. It runs as dtr::rrelu_with_noise_functional instead, which
// returns the filled noise as a second value (recorded with the
// generator's state: a replay draws the same numbers), and noise's wrapper
// moves to it, as after any in-place write. The in-place form then copies
// the result into self (the same bits: it is what the op would write).
void SpecialOps::rrelu_with_noise(const c10::OperatorHandle& op,
                                  torch::jit::Stack* stack, Args& args) {
  static const c10::OperatorHandle functional =
      c10::Dispatcher::singleton().findSchemaOrThrow(
          "dtr::rrelu_with_noise_functional", "");
  for (const auto& a : args) stack->push_back(a);
  kernel_(functional, stack);
  at::Tensor filled = stack->back().toTensor();
  stack->pop_back();
  at::Tensor result = stack->back().toTensor();
  stack->pop_back();
  auto* noise = as_checkpoint(args[1].toTensor());
  const std::shared_ptr<Cell> cell = as_checkpoint(filled)->handle()->cell;
  noise->handle()->reset(cell);
  if (cell->value.defined()) noise->refresh_metadata(cell->value);
  if (op.schema().name() == "aten::rrelu_with_noise_") {
    static const c10::OperatorHandle copy =
        c10::Dispatcher::singleton().findSchemaOrThrow("aten::copy_", "");
    stack->push_back(args[0]);
    stack->push_back(result);
    stack->push_back(false);
    kernel_(copy, stack);
    return;
  }
  stack->push_back(std::move(result));
}

namespace {

// Note [rrelu's noise]: rrelu_with_noise with the noise it fills as a
// second result, on plain CPU tensors.
std::tuple<at::Tensor, at::Tensor> rrelu_with_noise_functional(
    const at::Tensor& self, const at::Tensor& noise, const at::Scalar& lower,
    const at::Scalar& upper, bool training,
    std::optional<at::Generator> generator) {
  at::Tensor filled = noise.clone();
  at::Tensor out =
      at::rrelu_with_noise(self, filled, lower, upper, training, generator);
  return {out, filled};
}

}  // namespace

// Runs `op` on the plain values of its arguments without recording it.
void SpecialOps::plain(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                       Args args) {
  ReleaseQueue::Scope scope(releases_);
  std::vector<std::shared_ptr<Cell>> cells;
  std::vector<TensorId> ids;
  for (const auto& a : args) {
    for_each_tensor(a, [&](const at::Tensor& t) {
      if (auto* w = as_checkpoint(t)) {
        cells.push_back(w->handle()->cell);
        ids.push_back(cells.back()->id);
      }
    });
  }
  CallGuard guard(runtime_, ids);
  std::size_t k = 0;
  for (const auto& a : args) {
    stack->push_back(map_tensors(a, [&](const at::Tensor& t) {
      return as_checkpoint(t) != nullptr ? cells[k++]->value : t;
    }));
  }
  at::AutoDispatchBelowADInplaceOrView below;
  op.callBoxed(stack);
}

}  // namespace dtr::pt

TORCH_LIBRARY_FRAGMENT(dtr, m) {
  m.def(
      "rrelu_with_noise_functional(Tensor self, Tensor noise, Scalar lower, "
      "Scalar upper, bool training, Generator? generator) -> (Tensor, Tensor)");
}

// CPU only: on checkpointed tensors the fallback (the kernel) runs it.
TORCH_LIBRARY_IMPL(dtr, CPU, m) {
  m.impl("rrelu_with_noise_functional", &dtr::pt::rrelu_with_noise_functional);
}
