// Views (which share their input's storage: ALIAS "0") and the layout ops
// that copy. A view's backward is another view of the gradient, except
// where PyTorch materializes a full-size gradient (split, slice).
#include "dtr/core/error.h"
#include "dtr/models/ops.h"
#include "dtr/models/ops_impl.h"

namespace dtr::models {

using detail::elementwise_ns;
using detail::Grads;
using detail::save_if;

namespace {

int normalize_dim(const Var& x, int dim, const char* op) {
  const int n = static_cast<int>(x.shape().size());
  const int d = dim < 0 ? n + dim : dim;
  DTR_ASSERT(d >= 0 && d < n, "[", op, "] dimension ", dim, " of a ", n,
             "-d tensor");
  return d;
}

}  // namespace

Var view(const Var& x, Shape shape) {
  DTR_ASSERT(numel(shape) == x.numel(), "[view] ", x.numel(),
             " elements cannot take ", numel(shape));
  Tape& tape = x.tape();
  Var y = tape.call1("view", {x}, {std::move(shape), 0, x.elem_bytes()},
                     tape.cost().view_ns());
  if (tape.needs_grad({x})) {
    tape.record("view", {x}, {y}, {},
                [s = x.shape()](const Grads& g, const Grads&) {
                  return Grads{view(g[0], s)};
                });
  }
  return y;
}

std::vector<Var> split(const Var& x, int parts, int dim) {
  const int d = normalize_dim(x, dim, "split");
  DTR_ASSERT(parts > 0 && x.dim(d) % parts == 0, "[split] ", x.dim(d),
             " is not divisible into ", parts, " parts");
  Shape part = x.shape();
  part[d] /= parts;
  std::vector<OutSpec> outs(parts, OutSpec{part, 0});
  Tape& tape = x.tape();
  const bool grad = tape.needs_grad({x});
  // The logged PyTorch build saves split's whole input (for its sizes and
  // options), keeping it alive until the backward although split_backward
  // never reads it.
  std::vector<Var> saved = save_if(tape, grad, {x});
  std::vector<Var> ys = tape.call("split", {x}, outs, tape.cost().view_ns());
  if (grad) {
    tape.record("split", {x}, ys, std::move(saved),
                [s = x.shape()](const Grads& g, const Grads&) {
                  // Stacks the chunks' gradients into one new tensor; a
                  // chunk without a gradient contributes zeros.
                  std::vector<Var> args;
                  for (const Var& gi : g) {
                    if (gi.defined()) args.push_back(gi);
                  }
                  Tape& t = args.front().tape();
                  return Grads{t.call1("split_backward", args, {s},
                                       elementwise_ns(t, numel(s), 2))};
                });
  }
  return ys;
}

Var slice(const Var& x, int dim, std::int64_t start, std::int64_t end,
          std::int64_t step) {
  const int d = normalize_dim(x, dim, "slice");
  DTR_ASSERT(0 <= start && start < end && end <= x.dim(d) && step > 0,
             "[slice] bad range [", start, ",", end, ") step ", step, " of ",
             x.dim(d));
  Shape s = x.shape();
  s[d] = (end - start + step - 1) / step;
  Tape& tape = x.tape();
  Var y =
      tape.call1("slice", {x}, {s, 0, x.elem_bytes()}, tape.cost().view_ns());
  if (tape.needs_grad({x})) {
    tape.record("slice", {x}, {y}, {},
                [s = x.shape()](const Grads& g, const Grads&) {
                  Tape& t = g[0].tape();
                  return Grads{t.call1("slice_backward", {g[0]}, {s},
                                       elementwise_ns(t, numel(s), 2))};
                });
  }
  return y;
}

Var cat(const std::vector<Var>& xs, int dim) {
  DTR_ASSERT(!xs.empty(), "[_cat] nothing to concatenate");
  const int d = normalize_dim(xs[0], dim, "_cat");
  Shape out = xs[0].shape();
  out[d] = 0;
  std::vector<std::int64_t> sizes;
  std::vector<bool> need;
  for (const Var& x : xs) {
    DTR_ASSERT(x.shape().size() == out.size(), "[_cat] ranks differ");
    out[d] += x.dim(d);
    sizes.push_back(x.dim(d));
    need.push_back(x.requires_grad());
  }
  Tape& tape = xs[0].tape();
  Var y = tape.call1("_cat", xs, {out}, elementwise_ns(tape, numel(out), 2));
  if (tape.needs_grad(xs)) {
    tape.record(
        "_cat", xs, {y}, {}, [d, sizes, need](const Grads& g, const Grads&) {
          // Each input's gradient is a slice (a view) of the
          // concatenated gradient, which therefore stays alive until
          // every slice is consumed.
          Grads r;
          std::int64_t offset = 0;
          for (std::size_t i = 0; i < sizes.size(); ++i) {
            r.push_back(need[i] ? slice(g[0], d, offset, offset + sizes[i])
                                : Var());
            offset += sizes[i];
          }
          return r;
        });
  }
  return y;
}

Var clone(const Var& x) {
  Tape& tape = x.tape();
  Var y = tape.call1("clone", {x}, {x.shape(), -1, x.elem_bytes()},
                     elementwise_ns(tape, x.numel(), 2));
  if (tape.needs_grad({x})) {
    tape.record("clone", {x}, {y}, {},
                [](const Grads& g, const Grads&) { return Grads{g[0]}; });
  }
  return y;
}

Var pad_to(const Var& x, Shape shape) {
  DTR_ASSERT(shape.size() == x.shape().size() && numel(shape) >= x.numel(),
             "[constant_pad_nd] cannot pad to a smaller shape");
  Tape& tape = x.tape();
  Var y = tape.call1("constant_pad_nd", {x}, {shape},
                     elementwise_ns(tape, numel(shape), 2));
  if (tape.needs_grad({x})) {
    tape.record("constant_pad_nd", {x}, {y}, {},
                [s = x.shape()](const Grads& g, const Grads&) {
                  // Negative padding crops the gradient back.
                  Tape& t = g[0].tape();
                  return Grads{t.call1("constant_pad_nd", {g[0]}, {s},
                                       elementwise_ns(t, numel(s), 2))};
                });
  }
  return y;
}

}  // namespace dtr::models
