#pragma once
/// "dtr-local": the DTR score without the evicted neighbourhood.
#include "dtr/core/heuristics/index/indexed_heuristic.h"

namespace dtr {

/// h_DTR^local = c0(S) / (m(S) * s(S)). The cost of a storage never
/// changes, so only pool entries and accesses update the index.
class DtrLocalHeuristic final : public IndexedHeuristic {
 public:
  std::string_view name() const override { return "dtr-local"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;

 protected:
  StorageId scan(const ChooseContext& ctx) override;
  std::int64_t cost_of(const Graph& g, StorageId s) override {
    ++accesses_;
    return g.storage(s).compute_ns;
  }
};

}  // namespace dtr
