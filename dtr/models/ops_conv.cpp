// cuDNN convolutions, batch norm and pooling, with the argument lists and
// saved tensors the paper's ResNet and DenseNet logs show.
#include "dtr/core/error.h"
#include "dtr/models/ops.h"
#include "dtr/models/ops_impl.h"

namespace dtr::models {

using detail::Grads;
using detail::save_if;

namespace {

void check_4d(const Var& x, const char* op) {
  DTR_ASSERT(x.shape().size() == 4, "[", op, "] needs an NCHW tensor, got ",
             x.shape().size(), "-d");
}

// cudnn_convolution_backward and its transpose twin: one op computing both
// gradients, at about twice the forward's FLOPs. A gradient nobody needs is
// logged as an empty tensor, as cuDNN's undefined output is.
Grads conv_backward(const char* op, const Var& g, const Var& x, const Var& w,
                    std::int64_t forward_flops, bool need_x, bool need_w) {
  Tape& tape = g.tape();
  const std::int64_t bytes = 2 * x.bytes() + 2 * w.bytes() + g.bytes();
  std::vector<Var> r =
      tape.call(op, {x, g, w},
                {{x.shape(), -1, 4, need_x ? -1 : 0},
                 {w.shape(), -1, 4, need_w ? -1 : 0}},
                tape.cost().kernel_ns(2 * forward_flops, bytes));
  Grads grads{need_x ? r[0] : Var(), need_w ? r[1] : Var()};
  release_all(r);  // drops an unneeded (empty) gradient
  return grads;
}

}  // namespace

Var conv2d(const Var& x, const Var& w, int stride, int padding) {
  check_4d(x, "cudnn_convolution");
  check_4d(w, "cudnn_convolution");
  DTR_ASSERT(x.dim(1) == w.dim(1), "[cudnn_convolution] ", x.dim(1),
             " input channels, weight expects ", w.dim(1));
  const std::int64_t k = w.dim(2);
  const std::int64_t ho = (x.dim(2) + 2 * padding - k) / stride + 1;
  const std::int64_t wo = (x.dim(3) + 2 * padding - w.dim(3)) / stride + 1;
  const Shape out{x.dim(0), w.dim(0), ho, wo};
  const std::int64_t flops = 2 * numel(out) * x.dim(1) * k * w.dim(3);

  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x, w});
  std::vector<Var> saved = save_if(tape, grad, {x, w});
  Var y = tape.call1(
      "cudnn_convolution", {x, w}, {out},
      tape.cost().kernel_ns(flops, x.bytes() + w.bytes() + 4 * numel(out)));
  if (grad) {
    tape.record("cudnn_convolution", {x, w}, {y}, std::move(saved),
                [flops, need_x = x.requires_grad(), need_w = w.requires_grad()](
                    const Grads& g, const Grads& s) {
                  return conv_backward("cudnn_convolution_backward", g[0], s[0],
                                       s[1], flops, need_x, need_w);
                });
  }
  return y;
}

Var conv_transpose2d(const Var& x, const Var& w, int stride) {
  check_4d(x, "cudnn_convolution_transpose");
  check_4d(w, "cudnn_convolution_transpose");
  DTR_ASSERT(x.dim(1) == w.dim(0) && w.dim(2) == stride,
             "[cudnn_convolution_transpose] weight does not match input");
  const Shape out{x.dim(0), w.dim(1), x.dim(2) * stride, x.dim(3) * stride};
  const std::int64_t flops = 2 * x.numel() * w.dim(1) * w.dim(2) * w.dim(3);

  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x, w});
  std::vector<Var> saved = save_if(tape, grad, {x, w});
  Var y = tape.call1(
      "cudnn_convolution_transpose", {x, w}, {out},
      tape.cost().kernel_ns(flops, x.bytes() + w.bytes() + 4 * numel(out)));
  if (grad) {
    tape.record("cudnn_convolution_transpose", {x, w}, {y}, std::move(saved),
                [flops, need_x = x.requires_grad(), need_w = w.requires_grad()](
                    const Grads& g, const Grads& s) {
                  return conv_backward("cudnn_convolution_transpose_backward",
                                       g[0], s[0], s[1], flops, need_x, need_w);
                });
  }
  return y;
}

Var batch_norm(const Var& x, const Var& weight, const Var& bias,
               const Var& running_mean, const Var& running_var) {
  const std::int64_t c = x.dim(1);
  DTR_ASSERT(weight.numel() == c, "[cudnn_batch_norm] ", c,
             " channels, weight has ", weight.numel());
  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x, weight, bias});
  std::vector<Var> saved =
      save_if(tape, grad, {x, weight, running_mean, running_var});
  // Outputs: result, save_mean, save_invstd and an empty cuDNN reserve.
  std::vector<Var> out = tape.call(
      "cudnn_batch_norm", {x, weight, bias, running_mean, running_var},
      {{x.shape()}, {{c}}, {{c}}, {{0}}},
      tape.cost().kernel_ns(8 * x.numel(), 3 * x.bytes()));
  if (grad) {
    for (int i = 1; i <= 3; ++i) saved.push_back(tape.save(out[i]));
    tape.record("cudnn_batch_norm", {x, weight, bias}, {out[0]},
                std::move(saved), [](const Grads& g, const Grads& s) {
                  Tape& t = g[0].tape();
                  const Var& xs = s[0];
                  std::vector<Var> r = t.call(
                      "cudnn_batch_norm_backward",
                      {xs, g[0], s[1], s[2], s[3], s[4], s[5], s[6]},
                      {{xs.shape()}, {s[1].shape()}, {s[1].shape()}},
                      t.cost().kernel_ns(12 * xs.numel(), 5 * xs.bytes()));
                  return r;
                });
  }
  return first_output(out);
}

Var max_pool2d(const Var& x, int k) {
  check_4d(x, "max_pool2d_with_indices");
  const Shape out{x.dim(0), x.dim(1), x.dim(2) / k, x.dim(3) / k};
  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x});
  std::vector<Var> saved = save_if(tape, grad, {x});
  std::vector<Var> r =
      tape.call("max_pool2d_with_indices", {x}, {{out}, {out, -1, 8}},
                tape.cost().kernel_ns(x.numel(), x.bytes() + 12 * numel(out)));
  if (grad) {
    saved.push_back(tape.save(r[1]));
    tape.record("max_pool2d_with_indices", {x}, {r[0]}, std::move(saved),
                [](const Grads& g, const Grads& s) {
                  Tape& t = g[0].tape();
                  return Grads{t.call1(
                      "max_pool2d_with_indices_backward", {g[0], s[0], s[1]},
                      {s[0].shape()},
                      t.cost().kernel_ns(s[0].numel(),
                                         2 * s[0].bytes() + 3 * g[0].bytes()))};
                });
  }
  return first_output(r);
}

Var avg_pool2d(const Var& x, int k) {
  check_4d(x, "avg_pool2d");
  const Shape out{x.dim(0), x.dim(1), x.dim(2) / k, x.dim(3) / k};
  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x});
  std::vector<Var> saved = save_if(tape, grad, {x});
  Var y =
      tape.call1("avg_pool2d", {x}, {out},
                 tape.cost().kernel_ns(x.numel(), x.bytes() + 4 * numel(out)));
  if (grad) {
    tape.record("avg_pool2d", {x}, {y}, std::move(saved),
                [](const Grads& g, const Grads& s) {
                  Tape& t = g[0].tape();
                  return Grads{t.call1(
                      "avg_pool2d_backward", {g[0], s[0]}, {s[0].shape()},
                      t.cost().kernel_ns(s[0].numel(),
                                         2 * s[0].bytes() + g[0].bytes()))};
                });
  }
  return y;
}

}  // namespace dtr::models
