// Autograd at DTR's border: checkpoint() inside the autograd graph, and
// gradients of plain parameters kept plain.
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "dtr/torch/checkpoint_context.h"

namespace dtr::pt {

namespace {

// Note [Differentiable checkpoint]
// checkpoint(t) of a tensor that requires grad must stay in t's autograd
// graph: the wrapper is the output of this function, whose backward hands
// the gradient to t as a plain tensor (t is plain). Without it the wrapper
// was a new leaf and every gradient upstream of it was silently lost.
struct CheckpointFunction
    : public torch::autograd::Function<CheckpointFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext*,
                            const at::Tensor& t) {
    return Context::get().wrap_constant(t);
  }
  static torch::autograd::variable_list backward(
      torch::autograd::AutogradContext*, torch::autograd::variable_list grads) {
    at::Tensor& g = grads[0];
    if (as_checkpoint(g) != nullptr && !g.requires_grad()) {
      g = Context::get().take_plain(g);
    }
    return {g};
  }
};

}  // namespace

at::Tensor checkpoint(const at::Tensor& t) {
  if (!t.defined() || as_checkpoint(t) != nullptr) return t;
  if (t.requires_grad() && at::GradMode::is_enabled()) {
    return CheckpointFunction::apply(t);
  }
  return Context::get().wrap_constant(t);
}

// Note [Plain parameter gradients]
// A parameter is a plain tensor outside DTR; its gradient is made plain
// too, by a hook that runs before the engine accumulates it into .grad.
// So the optimizer step runs on plain tensors only (foreach kernels
// included), no gradient can be evicted and rebuilt from weights that the
// step already changed, and at the end of the backward pass -- before any
// step -- the lineage is cut (Note [Lineage cut]): nothing recorded before
// the step can be replayed against the new weights. Double backward
// (create_graph=True) keeps checkpointed gradients: they are in a graph.
// The hook is a pre-hook of the parameter's AccumulateGrad node: adding a
// tensor hook from C++ would drop hooks the program registered from Python
// (ParameterWatch keeps track of which nodes carry it).
struct ParameterGradientHook final : torch::autograd::FunctionPreHook {
  torch::autograd::variable_list operator()(
      const torch::autograd::variable_list& grads) override {
    torch::autograd::variable_list out(grads);
    for (auto& g : out) {
      if (g.defined()) g = Context::get().parameter_gradient(g);
    }
    return out;
  }
};

std::unique_ptr<torch::autograd::FunctionPreHook>
make_parameter_gradient_hook() {
  return std::make_unique<ParameterGradientHook>();
}

at::Tensor Context::parameter_gradient(const at::Tensor& grad) {
  if (as_checkpoint(grad) == nullptr || grad.requires_grad()) return grad;
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  queue_cut();
  return take_plain(grad);
}

void Context::on_cut_callback_dropped(std::thread::id thread,
                                      std::uint64_t generation) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  backward_passes_.callback_dropped(thread, generation);
}

// Note [Nested backward passes]
// A reentrant torch.utils.checkpoint runs a whole backward pass inside a
// node of the outer one; its end is not an iteration boundary (the outer
// pass still needs its saved values), so the cut is deferred to the end
// of the outermost pass the program started. The Python package marks the
// nested region (python/dtr/_modules.py). Every thread has its own passes.
void Context::enter_nested_backward() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  backward_passes_.enter_nested(std::this_thread::get_id());
}

void Context::exit_nested_backward() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (backward_passes_.exit_nested(std::this_thread::get_id())) {
    queue_cut();  // we are inside the outer pass: cut at its end
  }
}

void Context::queue_cut() {
  const std::thread::id thread = std::this_thread::get_id();
  const std::optional<std::uint64_t> generation =
      backward_passes_.want_cut(thread);
  if (!generation) return;
  // The engine drops a failed backward's callbacks unrun: the token's
  // destructor then re-arms the queueing, or no cut would ever come.
  struct Token {  // built in place: a temporary's destructor would re-arm
    Token(std::thread::id t, std::uint64_t g) : thread(t), generation(g) {}
    Token(const Token&) = delete;
    Token& operator=(const Token&) = delete;
    ~Token() { Context::get().on_cut_callback_dropped(thread, generation); }
    std::thread::id thread;
    std::uint64_t generation;
  };
  auto token = std::make_shared<Token>(thread, *generation);
  // The callback runs at the end of this thread's current backward pass.
  torch::autograd::Engine::get_default_engine().queue_callback(
      [token] { Context::get().on_backward_end(token->thread); });
}

void Context::on_backward_end(std::thread::id thread) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (!backward_passes_.pass_ended(thread)) return;
  parameters_.forget_walks();  // a new graph comes next
  explained([&] { holds_.cut_lineage(thread); });
}

at::Tensor Context::take_plain(const at::Tensor& t) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  check_current(*as_checkpoint(t));
  std::shared_ptr<Cell> cell = as_checkpoint(t)->handle()->cell;
  if (!cell->value.defined()) {
    CoreScope scope(releases_);
    explained([&] { runtime_.materialize(cell->id); });
  }
  // A copy: shallow copies of `t` (.data) share its Handle, so nothing
  // proves that no one else reads this buffer. The engine adopts the copy
  // as .grad; the checkpointed gradient dies with the engine's reference.
  const at::Tensor v = cell->value;  // an eviction may reset cell->value
  return v.clone();
}

}  // namespace dtr::pt
