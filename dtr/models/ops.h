#pragma once
/// Traced tensor ops, named and shaped like the ATen ops the paper's logger
/// saw. Each writes one CALL (or MUTATE) with a size derived from the real
/// shape (float32 unless noted) and a time from the tape's CostModel, and,
/// when an input requires grad, records its backward the way PyTorch's
/// derivatives do (what is saved, which `*_backward` op runs). The same ops
/// run inside backward formulas, where grad mode is off.
///
/// Every op takes its tape from its first tensor argument. Shape errors are
/// bugs in a model builder and throw dtr::InternalError.

// Note [Op order]: C++ leaves the evaluation order of function arguments
// unspecified (GCC goes right to left), so a builder never passes two traced
// ops as arguments of one call, as in add(linear(x, a), linear(h, b)): each
// gets its own statement, and every compiler writes the same trace. Braced
// lists ({f(x), g(y)}) are evaluated left to right and are safe.
#include <cstdint>
#include <vector>

#include "dtr/models/tape.h"

namespace dtr::models {

// ---- pointwise (ops_pointwise.cpp) ------------------------------------------

Var relu(const Var& x);
/// In place (MUTATE relu_); `x` must be the only handle on its storage.
Var& relu_(Var& x);
Var sigmoid(const Var& x);
Var tanh(const Var& x);
/// a + b; `b` may have fewer elements (broadcast bias, scalar).
Var add(const Var& a, const Var& b);
/// a += b in place (MUTATE add_); `a` must be the only handle on its storage.
Var& add_(Var& a, const Var& b);
/// a * b; `b` may have fewer elements (a scalar).
Var mul(const Var& a, const Var& b);
/// _fused_dropout: the result and a byte mask saved for _masked_scale.
Var dropout(const Var& x);
/// Gradient helper: sums `g` down to `shape` (sum_dim_IntList) if needed.
Var sum_to(const Var& g, const Shape& shape);

// ---- matrix products (ops_linalg.cpp) ---------------------------------------

/// Transpose of a 2-d tensor (a view).
Var t(const Var& x);
/// Swaps two dimensions (a view).
Var transpose(const Var& x, int dim0, int dim1);
/// [m,k] x [k,n].
Var mm(const Var& a, const Var& b);
/// bias[n] + [m,k] x [k,n].
Var addmm(const Var& bias, const Var& a, const Var& b);
/// [B,m,k] x [B,k,n].
Var bmm(const Var& a, const Var& b);

// ---- convolution, normalization, pooling (ops_conv.cpp)
// ----------------------

/// x[N,C,H,W] * w[O,C,k,k] with square stride and padding, no bias.
Var conv2d(const Var& x, const Var& w, int stride, int padding);
/// Transposed convolution x[N,C,H,W], w[C,O,k,k], kernel = stride, no bias.
Var conv_transpose2d(const Var& x, const Var& w, int stride);
/// cudnn_batch_norm in training mode; running stats are updated inside.
Var batch_norm(const Var& x, const Var& weight, const Var& bias,
               const Var& running_mean, const Var& running_var);
/// max_pool2d_with_indices with kernel = stride = `k` (int64 indices).
Var max_pool2d(const Var& x, int k);
/// avg_pool2d with kernel = stride = `k`.
Var avg_pool2d(const Var& x, int k);

// ---- views and layout (ops_shape.cpp)
// ----------------------------------------

/// Same elements, new shape (a view).
Var view(const Var& x, Shape shape);
/// `parts` equal chunks along `dim`, all views of x.
std::vector<Var> split(const Var& x, int parts, int dim);
/// Elements [start, end) with `step` along `dim` (a view).
Var slice(const Var& x, int dim, std::int64_t start, std::int64_t end,
          std::int64_t step = 1);
/// Concatenation along `dim` (a new storage; backward slices the gradient).
Var cat(const std::vector<Var>& xs, int dim);
/// A contiguous copy (clone).
Var clone(const Var& x);
/// Zero-pads x up to `shape` (constant_pad_nd).
Var pad_to(const Var& x, Shape shape);

// ---- normalization, softmax and losses (ops_loss.cpp) -----------------------

Var log_softmax(const Var& x);
/// Softmax over the last dimension.
Var softmax(const Var& x);
/// native_layer_norm over the last dimension.
Var layer_norm(const Var& x, const Var& weight, const Var& bias);
/// Negative log-likelihood of log-probabilities `logp` ([N,C] or [N,C,H,W])
/// at int64 class indices `target` ([N] or [N,H,W]); a scalar.
Var nll_loss(const Var& logp, const Var& target);
/// Sum of all elements; a scalar.
Var sum(const Var& x);

}  // namespace dtr::models
