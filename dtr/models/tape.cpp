#include "dtr/models/tape.h"

#include <utility>

#include "dtr/core/error.h"

namespace dtr::models {

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

// ---- Var -------------------------------------------------------------------

Tape& Var::tape() const {
  DTR_ASSERT(defined(), "use of an undefined Var");
  return *impl_->tape;
}
const Shape& Var::shape() const {
  DTR_ASSERT(defined(), "use of an undefined Var");
  return impl_->shape;
}
std::int64_t Var::dim(int i) const {
  const Shape& s = shape();
  const int n = static_cast<int>(s.size());
  const int k = i < 0 ? n + i : i;
  DTR_ASSERT(k >= 0 && k < n, "dimension ", i, " of a ", n, "-d tensor");
  return s[k];
}
std::int64_t Var::numel() const {
  return dtr::models::numel(shape());
}
int Var::elem_bytes() const {
  DTR_ASSERT(defined(), "use of an undefined Var");
  return impl_->elem_bytes;
}
std::int64_t Var::bytes() const {
  return numel() * elem_bytes();
}
Handle& Var::handle() const {
  DTR_ASSERT(defined(), "use of an undefined Var");
  return impl_->handle;
}
const std::string& Var::name() const {
  return handle().name();
}
bool Var::requires_grad() const {
  return defined() && impl_->slot >= 0;
}

void release_all(std::vector<Var>& vars) {
  for (Var& v : vars) v.reset();
  vars.clear();
}

Var first_output(std::vector<Var>& vars) {
  DTR_ASSERT(!vars.empty(), "first_output of no outputs");
  Var first = std::move(vars[0]);
  release_all(vars);
  return first;
}

// ---- Tape: making tensors --------------------------------------------------

Tape::Tape(trace::TraceWriter& out, CostModel cost, std::size_t max_values)
    : builder_(out), cost_(std::move(cost)), max_values_(max_values) {
  builder_.annotate("START");
}

Tape::~Tape() {
  // Never-run backward nodes hold saved tensors the program would free
  // with the graph.
  for (Node& n : nodes_) release_all(n.saved);
  nodes_.clear();
  for (Slot& s : slots_) {
    if (s.leaf && s.grad.defined() && s.grad.handle().defined()) {
      builder_.keep(s.grad.handle());
    }
    s.grad.reset();
  }
  for (Var& v : state_) {
    if (v.defined() && v.handle().defined()) builder_.keep(v.handle());
  }
}

Var Tape::wrap(Handle handle, Shape shape, int elem_bytes) {
  DTR_CHECK(++values_ <= max_values_, "[model] the model passes ", max_values_,
            " tensors, the most one is built with (parameters and "
            "activations are held until backward); lower --depth, --batch "
            "or --width");
  Var v;
  v.impl_ = std::make_shared<Var::Impl>();
  v.impl_->tape = this;
  v.impl_->handle = std::move(handle);
  v.impl_->shape = std::move(shape);
  v.impl_->elem_bytes = elem_bytes;
  return v;
}

int Tape::new_slot(bool leaf) {
  slots_.push_back({Var(), leaf});
  return static_cast<int>(slots_.size() - 1);
}

Var Tape::parameter(Shape shape) {
  Var v = constant(std::move(shape), 4, /*requires_grad=*/true);
  state_.push_back(v);
  return v;
}

Var& Tape::buffer(Shape shape, int elem_bytes) {
  state_.push_back(constant(std::move(shape), elem_bytes));
  return state_.back();
}

Var Tape::constant(Shape shape, int elem_bytes, bool requires_grad) {
  const std::int64_t bytes = dtr::models::numel(shape) * elem_bytes;
  Var v = wrap(builder_.constant(bytes), std::move(shape), elem_bytes);
  if (requires_grad) v.impl_->slot = new_slot(/*leaf=*/true);
  return v;
}

// ---- Tape: ops
// ---------------------------------------------------------------

std::vector<Var> Tape::call(std::string_view op, const std::vector<Var>& args,
                            const std::vector<OutSpec>& outs,
                            std::int64_t time_ns) {
  std::vector<const Handle*> handles;
  handles.reserve(args.size());
  for (const Var& a : args) {
    DTR_ASSERT(a.defined() && a.impl_->tape == this, "[", op,
               "] argument is undefined or from another tape");
    handles.push_back(&a.handle());
  }
  std::vector<TraceBuilder::Output> logged;
  logged.reserve(outs.size());
  for (const OutSpec& o : outs) {
    const std::int64_t bytes =
        o.bytes >= 0 ? o.bytes : dtr::models::numel(o.shape) * o.elem_bytes;
    logged.push_back({bytes, o.alias});
  }
  std::vector<Handle> results = builder_.call(op, handles, logged, time_ns);
  std::vector<Var> vars;
  vars.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    vars.push_back(
        wrap(std::move(results[i]), outs[i].shape, outs[i].elem_bytes));
  }
  return vars;
}

Var Tape::call1(std::string_view op, const std::vector<Var>& args, OutSpec out,
                std::int64_t time_ns) {
  return std::move(call(op, args, {std::move(out)}, time_ns)[0]);
}

bool Tape::can_mutate(const Var& v) const {
  return v.defined() && builder_.can_mutate(v.handle());
}

void Tape::mutate(std::string_view op, Var& target,
                  const std::vector<Var>& others, std::int64_t time_ns) {
  DTR_ASSERT(target.defined(), "[", op, "] undefined target");
  std::vector<const Handle*> handles;
  for (const Var& a : others) handles.push_back(&a.handle());
  builder_.mutate(op, target.handle(), handles, time_ns);
}

// ---- Tape: autograd
// ----------------------------------------------------------

bool Tape::needs_grad(const std::vector<Var>& inputs) const {
  if (!grad_mode_) return false;
  for (const Var& v : inputs) {
    if (v.requires_grad()) return true;
  }
  return false;
}

Var Tape::save(const Var& v) {
  return wrap(builder_.copy(v.handle()), v.shape(), v.elem_bytes());
}

void Tape::record(std::string_view op, const std::vector<Var>& inputs,
                  const std::vector<Var>& outputs, std::vector<Var> saved,
                  BackwardFn backward) {
  DTR_ASSERT(grad_mode_, "[", op, "] recorded during backward");
  Node node{std::string(op), {}, {}, std::move(saved), std::move(backward)};
  // Read the inputs' slots before giving the outputs new ones: an in-place
  // op's output is its input, and its backward feeds the old slot.
  for (const Var& v : inputs)
    node.inputs.push_back(v.requires_grad() ? v.impl_->slot : -1);
  for (const Var& v : outputs) {
    DTR_ASSERT(v.defined(), "[", op, "] undefined output");
    v.impl_->slot = new_slot(/*leaf=*/false);
    node.outputs.push_back(v.impl_->slot);
  }
  nodes_.push_back(std::move(node));
}

void Tape::accumulate(int slot, Var grad) {
  Slot& s = slots_[slot];
  if (!s.grad.defined()) {
    // AccumulateGrad stores a detached shallow copy in param.grad.
    s.grad = s.leaf ? save(grad) : std::move(grad);
    return;
  }
  const std::int64_t time = cost_.kernel_ns(grad.numel(), 3 * grad.bytes());
  if (s.leaf && can_mutate(s.grad)) {
    // param.grad += g: in place once the gradient buffer is its own.
    mutate("add_", s.grad, {grad}, time);
    return;
  }
  // The engine's input buffer sums two contributions out of place.
  s.grad = call1("add", {s.grad, grad}, {s.grad.shape()}, time);
}

void Tape::run(Node& node) {
  std::vector<Var> grads(node.outputs.size());
  bool any = false;
  for (std::size_t i = 0; i < node.outputs.size(); ++i) {
    const int slot = node.outputs[i];
    if (slot < 0) continue;
    grads[i] = std::move(slots_[slot].grad);
    slots_[slot].grad.reset();
    any = any || grads[i].defined();
  }
  if (any) {
    std::vector<Var> unpacked;
    unpacked.reserve(node.saved.size());
    for (const Var& v : node.saved)
      unpacked.push_back(v.defined() ? save(v) : Var());
    std::vector<Var> input_grads = node.backward(grads, unpacked);
    DTR_ASSERT(input_grads.size() == node.inputs.size(), "[", node.op,
               "] backward returned ", input_grads.size(), " gradients for ",
               node.inputs.size(), " inputs");
    // Same release order as the engine: unpacked copies, incoming
    // gradients, then the node's saved variables.
    release_all(unpacked);
    release_all(grads);
    release_all(node.saved);
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] >= 0 && input_grads[i].defined()) {
        accumulate(node.inputs[i], std::move(input_grads[i]));
      }
    }
    release_all(input_grads);
  }
  release_all(node.saved);
  node.backward = nullptr;
}

void Tape::backward(const Var& root) {
  DTR_CHECK(root.requires_grad(), "[backward] '",
            root.defined() ? root.name() : std::string("?"),
            "' does not require grad");
  builder_.annotate("BACKWARD");
  grad_mode_ = false;
  Var seed = call1("ones_like", {root}, {root.shape()},
                   cost_.kernel_ns(0, root.bytes()));
  accumulate(root.impl_->slot, std::move(seed));
  // Reverse creation order is a topological order of the backward graph,
  // and the one PyTorch's engine follows on a single device.
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) run(*it);
  nodes_.clear();
  // Gradients that reached no leaf (e.g. of an unused output) die here.
  for (Slot& s : slots_) {
    if (!s.leaf) s.grad.reset();
  }
  grad_mode_ = true;
}

}  // namespace dtr::models
