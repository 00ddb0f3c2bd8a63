#pragma once
/// Modules built from ops.h, mirroring torch.nn: each holds its parameters
/// (and buffers) on the tape and writes the op sequence the nn module runs.
///
///   Linear fc = make_linear(tape, 512, 10);
///   BatchNorm2d bn = make_batch_norm(tape, 16);
///   Var y = linear(relu(batch_norm(conv2d(x, w, 1, 1), bn)), fc);
#include <cstdint>

#include "dtr/models/tape.h"

namespace dtr::models {

/// torch.nn.Linear: weight [out, in], optional bias [out].
struct Linear {
  Var weight;
  Var bias;  // undefined without bias
};
Linear make_linear(Tape& tape, std::int64_t in, std::int64_t out,
                   bool bias = true);
/// F.linear on x[..., in]: t(weight) then addmm for a 2-d input; for more
/// dimensions view to 2-d, mm, add_ (bias) and view back, as matmul does.
Var linear(const Var& x, const Linear& layer);

/// torch.nn.BatchNorm2d in training mode.
struct BatchNorm2d {
  Var weight;
  Var bias;
  Var running_mean;
  Var running_var;
  Var* num_batches_tracked;  // int64 counter owned by the tape, replaced each
                             // step
};
BatchNorm2d make_batch_norm(Tape& tape, std::int64_t channels);
/// num_batches_tracked += 1 (an `add` on the 8-byte counter, as logged),
/// then cudnn_batch_norm.
Var batch_norm(const Var& x, BatchNorm2d& bn);

/// torch.nn.LayerNorm over the last dimension.
struct LayerNorm {
  Var weight;
  Var bias;
};
LayerNorm make_layer_norm(Tape& tape, std::int64_t features);
Var layer_norm(const Var& x, const LayerNorm& ln);

/// A conv weight [out, in, k, k] (the models use bias-free convolutions
/// followed by batch norm).
Var make_conv_weight(Tape& tape, std::int64_t in, std::int64_t out, int k);

}  // namespace dtr::models
