// Matrix products and the transposes around them. As in PyTorch, a product
// saves each factor only if the other one needs a gradient.
#include <utility>

#include "dtr/core/error.h"
#include "dtr/models/ops.h"
#include "dtr/models/ops_impl.h"

namespace dtr::models {

using detail::Grads;
using detail::save_factors;

namespace {

std::int64_t product_ns(Tape& tape, std::int64_t batch, std::int64_t m,
                        std::int64_t k, std::int64_t n) {
  return tape.cost().kernel_ns(2 * batch * m * k * n,
                               4 * batch * (m * k + k * n + m * n));
}

}  // namespace

Var t(const Var& x) {
  DTR_ASSERT(x.shape().size() == 2, "[t] needs a 2-d tensor, got ",
             x.shape().size(), "-d");
  Tape& tape = x.tape();
  Var y =
      tape.call1("t", {x}, {{x.dim(1), x.dim(0)}, 0}, tape.cost().view_ns());
  if (tape.needs_grad({x})) {
    tape.record("t", {x}, {y}, {},
                [](const Grads& g, const Grads&) { return Grads{t(g[0])}; });
  }
  return y;
}

Var transpose(const Var& x, int dim0, int dim1) {
  Shape s = x.shape();
  const int n = static_cast<int>(s.size());
  DTR_ASSERT(dim0 >= 0 && dim0 < n && dim1 >= 0 && dim1 < n,
             "[transpose] dims ", dim0, ",", dim1, " of a ", n, "-d tensor");
  std::swap(s[dim0], s[dim1]);
  Tape& tape = x.tape();
  Var y = tape.call1("transpose", {x}, {s, 0}, tape.cost().view_ns());
  if (tape.needs_grad({x})) {
    tape.record("transpose", {x}, {y}, {},
                [dim0, dim1](const Grads& g, const Grads&) {
                  return Grads{transpose(g[0], dim0, dim1)};
                });
  }
  return y;
}

Var mm(const Var& a, const Var& b) {
  DTR_ASSERT(
      a.shape().size() == 2 && b.shape().size() == 2 && a.dim(1) == b.dim(0),
      "[mm] shapes do not match");
  Tape& tape = a.tape();
  const bool grad = tape.needs_grad({a, b});
  const bool need_a = a.requires_grad();
  const bool need_b = b.requires_grad();
  std::vector<Var> saved = save_factors(tape, grad, a, b);
  Var y = tape.call1("mm", {a, b}, {{a.dim(0), b.dim(1)}},
                     product_ns(tape, 1, a.dim(0), a.dim(1), b.dim(1)));
  if (grad) {
    tape.record("mm", {a, b}, {y}, std::move(saved),
                [need_a, need_b](const Grads& g, const Grads& s) {
                  // The logged build computes mat2's gradient first.
                  Var grad_b = need_b ? mm(t(s[0]), g[0]) : Var();
                  Var grad_a = need_a ? mm(g[0], t(s[1])) : Var();
                  return Grads{grad_a, grad_b};
                });
  }
  return y;
}

Var addmm(const Var& bias, const Var& a, const Var& b) {
  DTR_ASSERT(a.shape().size() == 2 && b.shape().size() == 2 &&
                 a.dim(1) == b.dim(0) && bias.numel() == b.dim(1),
             "[addmm] shapes do not match");
  Tape& tape = a.tape();
  const bool grad = tape.needs_grad({bias, a, b});
  const bool need_bias = bias.requires_grad();
  const bool need_a = a.requires_grad();
  const bool need_b = b.requires_grad();
  std::vector<Var> saved = save_factors(tape, grad, a, b);
  Var y = tape.call1("addmm", {bias, a, b}, {{a.dim(0), b.dim(1)}},
                     product_ns(tape, 1, a.dim(0), a.dim(1), b.dim(1)));
  if (grad) {
    tape.record("addmm", {bias, a, b}, {y}, std::move(saved),
                [need_bias, need_a, need_b, bias_shape = bias.shape()](
                    const Grads& g, const Grads& s) {
                  // The logged build's order: mat1, mat2, then the bias.
                  Var grad_a = need_a ? mm(g[0], t(s[1])) : Var();
                  Var grad_b = need_b ? mm(t(s[0]), g[0]) : Var();
                  Var grad_bias = need_bias ? sum_to(g[0], bias_shape) : Var();
                  return Grads{grad_bias, grad_a, grad_b};
                });
  }
  return y;
}

Var bmm(const Var& a, const Var& b) {
  DTR_ASSERT(a.shape().size() == 3 && b.shape().size() == 3 &&
                 a.dim(0) == b.dim(0) && a.dim(2) == b.dim(1),
             "[bmm] shapes do not match");
  Tape& tape = a.tape();
  const bool grad = tape.needs_grad({a, b});
  const bool need_a = a.requires_grad();
  const bool need_b = b.requires_grad();
  std::vector<Var> saved = save_factors(tape, grad, a, b);
  Var y = tape.call1("bmm", {a, b}, {{a.dim(0), a.dim(1), b.dim(2)}},
                     product_ns(tape, a.dim(0), a.dim(1), a.dim(2), b.dim(2)));
  if (grad) {
    tape.record(
        "bmm", {a, b}, {y}, std::move(saved),
        [need_a, need_b](const Grads& g, const Grads& s) {
          // As for mm: mat2's gradient first, so the (often larger)
          // gradient of mat1 is made just before its consumer.
          Var grad_b = need_b ? bmm(transpose(s[0], 1, 2), g[0]) : Var();
          Var grad_a = need_a ? bmm(g[0], transpose(s[1], 1, 2)) : Var();
          return Grads{grad_a, grad_b};
        });
  }
  return y;
}

}  // namespace dtr::models
