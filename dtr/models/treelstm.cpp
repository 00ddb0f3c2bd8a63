// Binary Tree-LSTM (Tai et al. 2015, the N-ary variant with N = 2) over a
// random tree drawn from the seed: a dynamic model, whose graph shape changes
// with its input, like the paper's TreeLSTM trace. Nodes are evaluated
// children first; each has an input vector, an input/output/update gate
// block split from one product, and one forget gate per child.
#include "dtr/core/error.h"
#include "dtr/models/builders_impl.h"
#include "dtr/models/layers.h"
#include "dtr/models/ops.h"
#include "dtr/models/rng.h"

namespace dtr::models {

namespace {

// Probability (percent) that a node above the depth limit has children:
// high enough that trees are bushy (about 20-50 nodes at depth 6), low
// enough that shapes differ from seed to seed.
constexpr std::uint64_t kBranchPercent = 80;
constexpr int kMaxTreeDepth = 26;

struct TreeNode {
  std::size_t input;               // index into the tree's input vectors
  std::vector<TreeNode> children;  // empty or two
};

// The input vectors live in one flat vector, released in order at the end
// (see Note [Release order]), not inside the recursive nodes.
struct Tree {
  TreeNode root;
  std::vector<Var> inputs;
};

struct Params {
  Linear iou_x;         // [3H, I] with bias
  Linear iou_left;      // [3H, H]
  Linear iou_right;     // [3H, H]
  Linear forget_x;      // [H, I] with bias
  Linear forget_left;   // [H, H]
  Linear forget_right;  // [H, H]
};

struct State {
  Var h;
  Var c;
};

// Pre-order, so inputs are created (and named) root first. The root always
// branches so that even the smallest tree has a combine.
TreeNode random_node(Tape& tape, SplitMix64& rng, int depth, int max_depth,
                     const Shape& input, std::vector<Var>& inputs) {
  TreeNode node{inputs.size(), {}};
  inputs.push_back(tape.constant(input));
  const bool branch =
      depth + 1 < max_depth && (depth == 0 || rng.below(100) < kBranchPercent);
  if (branch) {
    for (int i = 0; i < 2; ++i) {
      node.children.push_back(
          random_node(tape, rng, depth + 1, max_depth, input, inputs));
    }
  }
  return node;
}

State evaluate(const TreeNode& node, const Tree& tree, const Params& p) {
  const Var& x = tree.inputs[node.input];
  // One statement per traced op where two would share a call: see
  // Note [Op order] in ops.h.
  std::vector<Var> iou;
  State l, r;
  if (node.children.empty()) {
    iou = split(linear(x, p.iou_x), 3, 1);
  } else {
    l = evaluate(node.children[0], tree, p);
    r = evaluate(node.children[1], tree, p);
    Var from_x = linear(x, p.iou_x);
    Var from_left = linear(l.h, p.iou_left);
    Var from_right = linear(r.h, p.iou_right);
    Var from_children = add(from_left, from_right);
    from_left.reset();
    from_right.reset();
    iou = split(add(from_x, from_children), 3, 1);
  }
  Var in = sigmoid(iou[0]);
  Var out = sigmoid(iou[1]);
  Var update = tanh(iou[2]);
  release_all(iou);
  Var c = mul(in, update);
  if (!node.children.empty()) {
    Var fx = linear(x, p.forget_x);
    Var f_left = sigmoid(add(fx, linear(l.h, p.forget_left)));
    Var f_right = sigmoid(add(fx, linear(r.h, p.forget_right)));
    add_(c, mul(f_left, l.c));
    add_(c, mul(f_right, r.c));
  }
  Var h = mul(out, tanh(c));
  return {h, c};
}

}  // namespace

void build_treelstm(const ModelOptions& o, trace::TraceWriter& out) {
  // Trees grow about 1.6x per level: depth 26 gives some 10^5 to 10^6
  // nodes (the recursion below is only `depth` deep).
  DTR_CHECK(o.depth >= 2 && o.depth <= kMaxTreeDepth,
            "[model treelstm] depth must be in [2, ", kMaxTreeDepth, "], got ",
            o.depth);
  DTR_CHECK(o.width >= 2, "[model treelstm] width must be >= 2, got ", o.width);
  const std::int64_t hidden = o.width;
  const std::int64_t input = o.width / 2;
  Tape tape(out, CostModel(o.seed));

  Params p{make_linear(tape, input, 3 * hidden),
           make_linear(tape, hidden, 3 * hidden, false),
           make_linear(tape, hidden, 3 * hidden, false),
           make_linear(tape, input, hidden),
           make_linear(tape, hidden, hidden, false),
           make_linear(tape, hidden, hidden, false)};
  // A separate stream from the cost model's, so the tree shape depends on
  // the seed alone and not on how many ops came before.
  SplitMix64 rng(o.seed ^ 0x7265657473ULL);
  Tree tree;
  tree.root = random_node(tape, rng, 0, o.depth, {o.batch, input}, tree.inputs);

  Var loss = sum(evaluate(tree.root, tree, p).h);
  tape.backward(loss);
  release_all(tree.inputs);
}

}  // namespace dtr::models
