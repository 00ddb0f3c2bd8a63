#include "dtr/torch/parameter_watch.h"

#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/variable.h>

#include <vector>

namespace dtr::pt {

namespace {

// Drops entries whose node died; the next sweep comes at twice the size
// that is left, so sweeping stays amortized O(1) per insert.
void sweep(std::unordered_map<const void*, WeakNodePtr>& nodes,
           std::size_t& sweep_at, std::size_t slack) {
  if (nodes.size() < sweep_at) return;
  for (auto it = nodes.begin(); it != nodes.end();) {
    it = it->second.expired() ? nodes.erase(it) : std::next(it);
  }
  sweep_at = 2 * nodes.size() + slack;
}

}  // namespace

void ParameterWatch::note(const at::Tensor& t) {
  if (t.is_leaf()) {
    watch(t);
  } else {
    walk(t);
  }
}

// The node lives as long as some graph uses it, so a parameter is watched
// per node, and re-watched when a new graph makes a new node.
void ParameterWatch::watch(const at::Tensor& leaf) {
  NodePtr node = torch::autograd::impl::grad_accumulator(leaf);
  if (!node) return;
  auto it = watched_.find(node.get());
  if (it != watched_.end() && it->second.lock() == node) return;
  sweep(watched_, watched_sweep_at_, 64);
  watched_.insert_or_assign(node.get(), WeakNodePtr(node));
  node->add_pre_hook(make_hook_());
}

// A plain non-leaf input (`weight.t()` inside linear) was computed from
// plain tensors only: its parameters are the AccumulateGrad leaves of its
// autograd history. Walked once per node per backward pass.
void ParameterWatch::walk(const at::Tensor& t) {
  std::vector<NodePtr> work{t.grad_fn()};
  while (!work.empty()) {
    NodePtr node = std::move(work.back());
    work.pop_back();
    if (node == nullptr) continue;
    // Checked by identity: a graph that died without a backward pass
    // leaves addresses that new nodes reuse.
    auto it = walked_.find(node.get());
    if (it != walked_.end() && it->second.lock() == node) continue;
    walked_.insert_or_assign(node.get(), WeakNodePtr(node));
    if (auto* acc =
            dynamic_cast<torch::autograd::AccumulateGrad*>(node.get())) {
      watch(acc->variable);
      continue;
    }
    for (const auto& edge : node->next_edges()) work.push_back(edge.function);
  }
  sweep(walked_, walked_sweep_at_, 1024);
}

}  // namespace dtr::pt
