// The paper's theory model (§3, App. A): t_i = f_i(t_{i-1}) for N layers,
// then t̂_i = f̂_i(t_{i-1}, t̂_{i+1}) backwards, every tensor the same size
// and every op (forward or backward) the same cost. Theorem 3.1 says DTR
// runs this in O(N) ops with a budget of Ω(√N) tensors.
#include "dtr/models/builders_impl.h"
#include "dtr/models/tape.h"

namespace dtr::models {

namespace {

constexpr std::int64_t kUnitNs = 1000;

// One layer: weights are folded into the op (frozen), so its backward needs
// exactly the layer's input and the incoming gradient.
Var layer(const Var& x) {
  Tape& tape = x.tape();
  std::vector<Var> saved{tape.save(x)};
  Var y = tape.call1("linear", {x}, {x.shape()}, tape.cost().kernel_ns(0, 0));
  tape.record("linear", {x}, {y}, std::move(saved),
              [](const std::vector<Var>& g, const std::vector<Var>& s) {
                Tape& t = g[0].tape();
                return std::vector<Var>{t.call1("linear_backward", {s[0], g[0]},
                                                {g[0].shape()},
                                                t.cost().kernel_ns(0, 0))};
              });
  return y;
}

}  // namespace

void build_chain(const ModelOptions& o, trace::TraceWriter& out) {
  Tape tape(out, CostModel::unit(kUnitNs));
  // The input requires grad so that every layer has a backward op and the
  // input's gradient is the trace's one output.
  Var x = tape.constant({o.batch, o.width}, 4, /*requires_grad=*/true);
  Var h = x;
  for (int i = 0; i < o.depth; ++i) h = layer(h);
  tape.backward(h);
}

}  // namespace dtr::models
