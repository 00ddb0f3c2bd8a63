// One LSTM layer unrolled over a sequence, written the way a hand-rolled
// PyTorch LSTM cell runs (the paper's LSTM trace): per step, both gate
// products (addmm with the input, mm with the previous hidden state, each on
// a fresh t() view of its weight), one split into four gate views,
// sigmoid/tanh, and the cell update with an in-place add_. The weights are
// shared by every step, so their gradients are accumulated once per step.
#include "dtr/core/error.h"
#include "dtr/models/builders_impl.h"
#include "dtr/models/layers.h"
#include "dtr/models/ops.h"

namespace dtr::models {

namespace {

struct Cell {
  Linear input;   // [4H, I] with the gate bias
  Linear hidden;  // [4H, H], no bias
};

struct State {
  Var h;
  Var c;
};

State step(const Var& x, const State& prev, const Cell& cell) {
  // Two statements, not add(linear(..), linear(..)): see Note [Op order].
  Var from_input = linear(x, cell.input);
  Var from_hidden = linear(prev.h, cell.hidden);
  std::vector<Var> gates = split(add(from_input, from_hidden), 4, 1);
  from_input.reset();
  from_hidden.reset();
  Var i = sigmoid(gates[0]);
  Var f = sigmoid(gates[1]);
  Var g = tanh(gates[2]);
  Var o = sigmoid(gates[3]);
  release_all(gates);
  Var c = mul(f, prev.c);
  add_(c, mul(i, g));  // c = f * c_prev + i * g, accumulated in place
  Var h = mul(o, tanh(c));
  return {h, c};
}

}  // namespace

void build_lstm(const ModelOptions& o, trace::TraceWriter& out) {
  DTR_CHECK(o.width >= 2, "[model lstm] width must be >= 2, got ", o.width);
  const std::int64_t hidden = o.width;
  const std::int64_t input = o.width / 2;
  Tape tape(out, CostModel(o.seed));

  Cell cell{make_linear(tape, input, 4 * hidden),
            make_linear(tape, hidden, 4 * hidden, /*bias=*/false)};
  // The sequence arrives as one tensor per step (already unbound), and the
  // initial state is zeros.
  std::vector<Var> xs;
  for (int s = 0; s < o.depth; ++s)
    xs.push_back(tape.constant({o.batch, input}));
  State state{tape.constant({o.batch, hidden}),
              tape.constant({o.batch, hidden})};

  for (const Var& x : xs) state = step(x, state, cell);
  Var loss = sum(state.h);
  state = {};
  tape.backward(loss);
  release_all(xs);  // in order: see Note [Release order]
}

}  // namespace dtr::models
