// Softmax, layer norm and losses: multi-output ops whose extra outputs
// (statistics, total weight) are saved for backward but get no gradient.
#include "dtr/core/error.h"
#include "dtr/models/ops.h"
#include "dtr/models/ops_impl.h"

namespace dtr::models {

using detail::elementwise_ns;
using detail::Grads;
using detail::save_if;

namespace {

// _softmax / _log_softmax: autograd keeps the input and the output, and the
// backward reads both with the incoming gradient.
Var softmax_like(const char* op, const char* backward_op, const Var& x) {
  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x});
  std::vector<Var> saved = save_if(tape, grad, {x});
  Var y =
      tape.call1(op, {x}, {x.shape()}, elementwise_ns(tape, x.numel(), 3, 6));
  if (grad) {
    saved.insert(saved.begin(), tape.save(y));
    tape.record(
        op, {x}, {y}, std::move(saved),
        [backward_op](const Grads& g, const Grads& s) {
          Tape& t = g[0].tape();
          return Grads{t.call1(backward_op, {g[0], s[0], s[1]}, {g[0].shape()},
                               elementwise_ns(t, g[0].numel(), 3, 4))};
        });
  }
  return y;
}

}  // namespace

Var log_softmax(const Var& x) {
  return softmax_like("_log_softmax", "_log_softmax_backward_data", x);
}

Var softmax(const Var& x) {
  return softmax_like("_softmax", "_softmax_backward_data", x);
}

Var layer_norm(const Var& x, const Var& weight, const Var& bias) {
  const std::int64_t d = x.dim(-1);
  DTR_ASSERT(weight.numel() == d && bias.numel() == d,
             "[native_layer_norm] last dimension ", d, " does not match");
  const std::int64_t rows = x.numel() / d;
  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x, weight, bias});
  std::vector<Var> saved = save_if(tape, grad, {x, weight});
  std::vector<Var> out = tape.call("native_layer_norm", {x, weight, bias},
                                   {{x.shape()}, {{rows}}, {{rows}}},
                                   elementwise_ns(tape, x.numel(), 2, 8));
  if (grad) {
    saved.push_back(tape.save(out[1]));
    saved.push_back(tape.save(out[2]));
    tape.record("native_layer_norm", {x, weight, bias}, {out[0]},
                std::move(saved), [](const Grads& g, const Grads& s) {
                  // s: x, weight, mean, rstd.
                  Tape& t = g[0].tape();
                  return t.call(
                      "native_layer_norm_backward",
                      {g[0], s[0], s[2], s[3], s[1]},
                      {{s[0].shape()}, {s[1].shape()}, {s[1].shape()}},
                      elementwise_ns(t, s[0].numel(), 4, 12));
                });
  }
  return first_output(out);
}

Var nll_loss(const Var& logp, const Var& target) {
  const bool spatial = logp.shape().size() == 4;
  DTR_ASSERT(logp.shape().size() == 2 || spatial,
             "[nll_loss] needs [N,C] or [N,C,H,W] log-probabilities");
  DTR_ASSERT(target.numel() * logp.dim(1) == logp.numel(),
             "[nll_loss] one target per row");
  const char* op = spatial ? "nll_loss2d_forward" : "nll_loss_forward";
  const char* backward_op =
      spatial ? "nll_loss2d_backward" : "nll_loss_backward";
  Tape& tape = logp.tape();
  const bool grad = tape.needs_grad({logp});
  std::vector<Var> saved = save_if(tape, grad, {logp, target});
  // No class weights: the logger wraps the undefined tensor as an empty
  // constant.
  Var no_weight = tape.constant({0});
  std::vector<Var> out =
      tape.call(op, {logp, target, no_weight}, {{Shape{}}, {Shape{}}},
                tape.cost().kernel_ns(target.numel(),
                                      target.bytes() + 4 * target.numel()));
  no_weight.reset();
  if (grad) {
    saved.push_back(tape.save(out[1]));
    tape.record(
        op, {logp}, {out[0]}, std::move(saved),
        [backward_op](const Grads& g, const Grads& s) {
          // s: logp, target, total_weight.
          Tape& t = g[0].tape();
          Var none = t.constant({0});
          return Grads{t.call1(
              backward_op, {g[0], s[0], s[1], none, s[2]}, {s[0].shape()},
              t.cost().kernel_ns(s[1].numel(), s[0].bytes() + s[1].bytes()))};
        });
  }
  return first_output(out);
}

Var sum(const Var& x) {
  Tape& tape = x.tape();
  Var y = tape.call1("sum", {x}, {Shape{}},
                     tape.cost().kernel_ns(x.numel(), x.bytes()));
  if (tape.needs_grad({x})) {
    tape.record(
        "sum", {x}, {y}, {}, [s = x.shape()](const Grads& g, const Grads&) {
          // expand: a broadcast view of the scalar gradient.
          Tape& t = g[0].tape();
          return Grads{t.call1("expand", {g[0]}, {s, 0}, t.cost().view_ns())};
        });
  }
  return y;
}

}  // namespace dtr::models
