#include "dtr/models/layers.h"

#include "dtr/core/error.h"
#include "dtr/models/ops.h"

namespace dtr::models {

Linear make_linear(Tape& tape, std::int64_t in, std::int64_t out, bool bias) {
  Linear l;
  l.weight = tape.parameter({out, in});
  if (bias) l.bias = tape.parameter({out});
  return l;
}

Var linear(const Var& x, const Linear& layer) {
  const std::int64_t in = layer.weight.dim(1);
  const std::int64_t out = layer.weight.dim(0);
  DTR_ASSERT(x.dim(-1) == in, "[linear] input has ", x.dim(-1),
             " features, layer expects ", in);
  Var wt = t(layer.weight);
  if (x.shape().size() == 2) {
    if (layer.bias.defined()) return addmm(layer.bias, x, wt);
    return mm(x, wt);
  }
  Shape out_shape = x.shape();
  out_shape.back() = out;
  Var y = mm(view(x, {x.numel() / in, in}), wt);
  // The bias is added in place on the fresh product, before it is viewed
  // back, so the mutated tensor is never an alias.
  if (layer.bias.defined()) add_(y, layer.bias);
  return view(y, out_shape);
}

BatchNorm2d make_batch_norm(Tape& tape, std::int64_t channels) {
  BatchNorm2d bn;
  bn.weight = tape.parameter({channels});
  bn.bias = tape.parameter({channels});
  bn.running_mean = tape.buffer({channels});
  bn.running_var = tape.buffer({channels});
  bn.num_batches_tracked = &tape.buffer({1}, 8);
  return bn;
}

Var batch_norm(const Var& x, BatchNorm2d& bn) {
  Tape& tape = x.tape();
  Var& counter = *bn.num_batches_tracked;
  {
    // The logged build updates the counter out of place: a scalar
    // constant, an `add`, and the result replaces the buffer (the old one
    // is released).
    Var one = tape.constant({}, 8);
    counter = tape.call1("add", {counter, one}, {{1}, -1, 8},
                         tape.cost().kernel_ns(1, 24));
  }
  return batch_norm(x, bn.weight, bn.bias, bn.running_mean, bn.running_var);
}

LayerNorm make_layer_norm(Tape& tape, std::int64_t features) {
  return {tape.parameter({features}), tape.parameter({features})};
}

Var layer_norm(const Var& x, const LayerNorm& ln) {
  return layer_norm(x, ln.weight, ln.bias);
}

Var make_conv_weight(Tape& tape, std::int64_t in, std::int64_t out, int k) {
  return tape.parameter({out, in, k, k});
}

}  // namespace dtr::models
