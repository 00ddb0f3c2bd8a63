#pragma once
// Random training-like programs for property tests: a forward pass shaped
// as chains, diamonds, trees or residual blocks (with multi-output ops and
// views), then a backward pass that consumes the saved activations in
// reverse and releases them, keeping weight gradients to the end.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "dtr/core/runtime.h"

namespace dtr::testing {

enum class Shape { kChain, kDiamond, kTree, kResidual };
inline const char* shape_name(Shape s) {
  switch (s) {
    case Shape::kChain:
      return "chain";
    case Shape::kDiamond:
      return "diamond";
    case Shape::kTree:
      return "tree";
    case Shape::kResidual:
      return "residual";
  }
  return "?";
}

struct Instr {
  enum Kind { kConstant, kCall, kRetain, kRelease, kPin } kind;
  std::string name;
  std::vector<int> inputs;          // value ids
  std::vector<OutputSpec> outputs;  // for kCall / kConstant (one output)
  std::int64_t cost_ns = 0;
  int value = -1;  // first output, or the target value
};

struct RandomProgram {
  std::vector<Instr> instrs;
  int value_count = 0;
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::uint64_t seed) : rng_(seed) {}

  int constant(std::int64_t bytes) {
    Instr i{Instr::kConstant, "constant", {}, {{bytes, -1}}, 0, p_.value_count};
    p_.instrs.push_back(i);
    return p_.value_count++;
  }
  // Returns the first output's value id; outputs are consecutive.
  int call(const std::string& name, std::vector<int> inputs,
           std::vector<OutputSpec> outputs) {
    std::int64_t cost = std::uniform_int_distribution<int>(1, 50)(rng_);
    int first = p_.value_count;
    p_.instrs.push_back(
        {Instr::kCall, name, std::move(inputs), outputs, cost, first});
    p_.value_count += static_cast<int>(outputs.size());
    return first;
  }
  void release(int v) {
    p_.instrs.push_back({Instr::kRelease, "", {}, {}, 0, v});
  }
  void retain(int v) {
    p_.instrs.push_back({Instr::kRetain, "", {}, {}, 0, v});
  }
  void pin(int v) { p_.instrs.push_back({Instr::kPin, "", {}, {}, 0, v}); }
  std::int64_t size() {
    return std::uniform_int_distribution<int>(1, 100)(rng_);
  }
  bool coin(double p) { return std::bernoulli_distribution(p)(rng_); }
  std::mt19937_64& rng() { return rng_; }
  RandomProgram take() { return std::move(p_); }

 private:
  std::mt19937_64 rng_;
  RandomProgram p_;
};

/// A forward pass of `blocks` blocks of the given shape plus its backward.
inline RandomProgram make_random_program(Shape shape, int blocks,
                                         std::uint64_t seed) {
  ProgramBuilder b(seed);
  struct Saved {
    int value;
    int weight;
  };
  std::vector<Saved> saved;  // forward values the backward will read
  int x = b.constant(b.size());
  for (int i = 0; i < blocks; ++i) {
    int w = b.constant(b.size() / 4 + 1);
    int y = -1;
    switch (shape) {
      case Shape::kChain:
        y = b.call("f", {x, w}, {{b.size(), -1}});
        break;
      case Shape::kDiamond: {
        int l = b.call("left", {x}, {{b.size(), -1}});
        int r = b.call("right", {x, w}, {{b.size(), -1}});
        y = b.call("join", {l, r}, {{b.size(), -1}});
        b.release(l);
        b.release(r);
        break;
      }
      case Shape::kTree: {
        // A two-output op (like split) whose halves are reduced again.
        int pair = b.call("split", {x}, {{b.size(), -1}, {b.size(), -1}});
        int l = b.call("leaf", {pair, w}, {{b.size(), -1}});
        int r = b.call("leaf", {pair + 1}, {{b.size(), -1}});
        b.release(pair);
        b.release(pair + 1);
        y = b.call("reduce", {l, r}, {{b.size(), -1}});
        b.release(l);
        b.release(r);
        break;
      }
      case Shape::kResidual: {
        int v = b.call("view", {x}, {{0, 0}});  // an alias of x
        int h = b.call("conv", {v, w}, {{b.size(), -1}});
        b.release(v);
        int h2 = b.call("relu", {h}, {{b.size(), -1}});
        b.release(h);
        y = b.call("add", {h2, x}, {{b.size(), -1}});
        b.release(h2);
        break;
      }
    }
    saved.push_back({x, w});
    x = y;
  }
  // Loss, then backward in reverse: each step reads the saved input and the
  // incoming gradient, produces the input gradient and a weight gradient.
  int grad = b.call("loss_backward", {x}, {{b.size(), -1}});
  b.release(x);
  std::vector<int> weight_grads;
  for (int i = blocks - 1; i >= 0; --i) {
    int g = b.call("block_backward", {grad, saved[i].value, saved[i].weight},
                   {{b.size(), -1}, {b.size() / 4 + 1, -1}});
    b.release(grad);
    if (i > 0) b.release(saved[i].value);  // the input x stays referenced
    b.release(saved[i].weight);
    grad = g;
    weight_grads.push_back(g + 1);
  }
  b.pin(grad);
  for (int wg : weight_grads) b.pin(wg);
  return b.take();
}

}  // namespace dtr::testing
