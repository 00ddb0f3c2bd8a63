// Transformer encoder (Vaswani et al. 2017) in the post-norm form of
// torch.nn.TransformerEncoderLayer, the shape of the paper's Transformer
// trace: multi-head self-attention (one packed q/k/v projection split into
// views, heads made contiguous with transpose + clone, bmm, softmax,
// dropout), residual adds, layer norm and a ReLU feed-forward block, then a
// token classifier with log-softmax and NLL loss.
#include "dtr/core/error.h"
#include "dtr/models/builders_impl.h"
#include "dtr/models/layers.h"
#include "dtr/models/ops.h"

namespace dtr::models {

namespace {

constexpr std::int64_t kTokens = 256;
constexpr std::int64_t kHeads = 8;
constexpr std::int64_t kVocab = 1000;

struct EncoderLayer {
  Linear qkv;  // [3D, D]
  Linear out;  // [D, D]
  LayerNorm norm1;
  Linear ff1;  // [4D, D]
  Linear ff2;  // [D, 4D]
  LayerNorm norm2;
};

EncoderLayer make_layer(Tape& tape, std::int64_t d) {
  return {make_linear(tape, d, 3 * d), make_linear(tape, d, d),
          make_layer_norm(tape, d),    make_linear(tape, d, 4 * d),
          make_linear(tape, 4 * d, d), make_layer_norm(tape, d)};
}

// [B, S, D] -> [B*heads, S, D/heads], contiguous.
Var split_heads(const Var& x) {
  const std::int64_t b = x.dim(0), s = x.dim(1), d = x.dim(2);
  Var heads = clone(transpose(view(x, {b, s, kHeads, d / kHeads}), 1, 2));
  return view(heads, {b * kHeads, s, d / kHeads});
}

// [B*heads, S, D/heads] -> [B, S, D], contiguous.
Var merge_heads(const Var& x, std::int64_t batch) {
  const std::int64_t s = x.dim(1), dh = x.dim(2);
  Var merged = clone(transpose(view(x, {batch, kHeads, s, dh}), 1, 2));
  return view(merged, {batch, s, kHeads * dh});
}

Var self_attention(const Var& x, const EncoderLayer& l) {
  Tape& tape = x.tape();
  std::vector<Var> qkv = split(linear(x, l.qkv), 3, 2);
  // q / sqrt(d_head), with the Python float wrapped as a scalar constant.
  Var scale = tape.constant({}, 8);
  Var q = split_heads(mul(qkv[0], scale));
  scale.reset();
  Var k = split_heads(qkv[1]);
  Var v = split_heads(qkv[2]);
  release_all(qkv);
  Var weights = dropout(softmax(bmm(q, transpose(k, 1, 2))));
  return linear(merge_heads(bmm(weights, v), x.dim(0)), l.out);
}

Var encoder_layer(const Var& x, const EncoderLayer& l) {
  Var h = layer_norm(add(x, dropout(self_attention(x, l))), l.norm1);
  Var ff = linear(dropout(relu(linear(h, l.ff1))), l.ff2);
  return layer_norm(add(h, dropout(ff)), l.norm2);
}

}  // namespace

void build_transformer(const ModelOptions& o, trace::TraceWriter& out) {
  DTR_CHECK(o.width >= kHeads && o.width % kHeads == 0,
            "[model transformer] width must be a multiple of ", kHeads,
            ", got ", o.width);
  const std::int64_t d = o.width;
  Tape tape(out, CostModel(o.seed));

  std::vector<EncoderLayer> layers;
  for (int i = 0; i < o.depth; ++i) layers.push_back(make_layer(tape, d));
  Linear classifier = make_linear(tape, d, kVocab);

  // Embedded tokens (embedding and positional encoding happen outside).
  Var tokens = tape.constant({o.batch, kTokens, d});
  Var labels = tape.constant({o.batch * kTokens}, 8);
  Var h = tokens;
  for (const EncoderLayer& l : layers) h = encoder_layer(h, l);
  Var logits = view(linear(h, classifier), {o.batch * kTokens, kVocab});
  h.reset();
  Var loss = nll_loss(log_softmax(logits), labels);
  tape.backward(loss);
}

}  // namespace dtr::models
