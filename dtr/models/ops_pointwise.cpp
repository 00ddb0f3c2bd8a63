// Elementwise ops. Their backward formulas follow PyTorch's
// derivatives.yaml: an activation saves one tensor, mul the other factor,
// add nothing.
#include "dtr/core/error.h"
#include "dtr/models/ops.h"
#include "dtr/models/ops_impl.h"

namespace dtr::models {

using detail::elementwise_ns;
using detail::Grads;

namespace {

// `<act>_backward(grad, output)`: one read of each, one write.
Var activation_backward(const char* op, const Var& g, const Var& y) {
  Tape& tape = g.tape();
  return tape.call1(op, {g, y}, {g.shape()},
                    elementwise_ns(tape, g.numel(), 3, 2));
}

// An activation whose backward reads one tensor: its input (relu, as the
// logged PyTorch build does) or its output (sigmoid, tanh).
enum class Saves { kInput, kOutput };

Var activation(const char* op, const char* backward_op, Saves what,
               const Var& x) {
  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x});
  std::vector<Var> saved;
  if (grad && what == Saves::kInput) saved.push_back(tape.save(x));
  Var y =
      tape.call1(op, {x}, {x.shape()}, elementwise_ns(tape, x.numel(), 2, 4));
  if (grad) {
    if (what == Saves::kOutput) saved.push_back(tape.save(y));
    tape.record(op, {x}, {y}, std::move(saved),
                [backward_op](const Grads& g, const Grads& s) {
                  return Grads{activation_backward(backward_op, g[0], s[0])};
                });
  }
  return y;
}

}  // namespace

Var relu(const Var& x) {
  return activation("relu", "threshold_backward", Saves::kInput, x);
}
Var sigmoid(const Var& x) {
  return activation("sigmoid", "sigmoid_backward", Saves::kOutput, x);
}
Var tanh(const Var& x) {
  return activation("tanh", "tanh_backward", Saves::kOutput, x);
}

Var& relu_(Var& x) {
  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x});
  tape.mutate("relu_", x, {}, elementwise_ns(tape, x.numel(), 2));
  if (grad) {
    // Saved after the mutation: threshold_backward reads the result.
    tape.record(
        "relu_", {x}, {x}, {tape.save(x)}, [](const Grads& g, const Grads& s) {
          return Grads{activation_backward("threshold_backward", g[0], s[0])};
        });
  }
  return x;
}

Var sum_to(const Var& g, const Shape& shape) {
  if (numel(shape) == g.numel()) return g;
  Tape& tape = g.tape();
  return tape.call1(
      "sum_dim_IntList", {g}, {shape},
      tape.cost().kernel_ns(g.numel(), g.bytes() + 4 * numel(shape)));
}

Var add(const Var& a, const Var& b) {
  DTR_ASSERT(b.numel() <= a.numel(), "[add] cannot broadcast ", b.numel(),
             " elements to ", a.numel());
  Tape& tape = a.tape();
  Var y = tape.call1("add", {a, b}, {a.shape(), -1, a.elem_bytes()},
                     elementwise_ns(tape, a.numel(), 3));
  if (tape.needs_grad({a, b})) {
    tape.record("add", {a, b}, {y}, {},
                [need_a = a.requires_grad(), need_b = b.requires_grad(),
                 b_shape = b.shape()](const Grads& g, const Grads&) {
                  // The same gradient tensor flows to both summands.
                  return Grads{need_a ? g[0] : Var(),
                               need_b ? sum_to(g[0], b_shape) : Var()};
                });
  }
  return y;
}

Var& add_(Var& a, const Var& b) {
  DTR_ASSERT(b.numel() <= a.numel(), "[add_] cannot broadcast ", b.numel(),
             " elements to ", a.numel());
  Tape& tape = a.tape();
  const bool grad = tape.needs_grad({a, b});
  const bool need_a = a.requires_grad();
  const bool need_b = b.requires_grad();
  tape.mutate("add_", a, {b}, elementwise_ns(tape, a.numel(), 3));
  if (grad) {
    tape.record(
        "add_", {a, b}, {a}, {},
        [need_a, need_b, b_shape = b.shape()](const Grads& g, const Grads&) {
          return Grads{need_a ? g[0] : Var(),
                       need_b ? sum_to(g[0], b_shape) : Var()};
        });
  }
  return a;
}

Var mul(const Var& a, const Var& b) {
  DTR_ASSERT(b.numel() <= a.numel(), "[mul] cannot broadcast ", b.numel(),
             " elements to ", a.numel());
  Tape& tape = a.tape();
  const bool grad = tape.needs_grad({a, b});
  const bool need_a = a.requires_grad();
  const bool need_b = b.requires_grad();
  std::vector<Var> saved = detail::save_factors(tape, grad, a, b);
  Var y = tape.call1("mul", {a, b}, {a.shape()},
                     elementwise_ns(tape, a.numel(), 3));
  if (grad) {
    tape.record(
        "mul", {a, b}, {y}, std::move(saved),
        [need_a, need_b, b_shape = b.shape()](const Grads& g, const Grads& s) {
          // s = {a, b}; b's gradient first, as the logged build.
          Var grad_b = need_b ? sum_to(mul(g[0], s[0]), b_shape) : Var();
          Var grad_a = need_a ? mul(g[0], s[1]) : Var();
          return Grads{grad_a, grad_b};
        });
  }
  return y;
}

Var dropout(const Var& x) {
  Tape& tape = x.tape();
  // The mask is one byte per element, as _fused_dropout returns it.
  std::vector<Var> out =
      tape.call("_fused_dropout", {x}, {{x.shape()}, {x.shape(), -1, 1}},
                tape.cost().kernel_ns(x.numel(), 2 * x.bytes() + x.numel()));
  if (tape.needs_grad({x})) {
    tape.record("_fused_dropout", {x}, {out[0]}, {tape.save(out[1])},
                [](const Grads& g, const Grads& s) {
                  Tape& t = g[0].tape();
                  return Grads{t.call1(
                      "_masked_scale", {g[0], s[0]}, {g[0].shape()},
                      t.cost().kernel_ns(g[0].numel(),
                                         2 * g[0].bytes() + s[0].bytes()))};
                });
  }
  return first_output(out);
}

}  // namespace dtr::models
