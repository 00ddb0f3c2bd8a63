#pragma once
/// "dtr-local": the DTR score without the evicted neighbourhood.
#include "dtr/core/heuristic.h"

namespace dtr {

/// h_DTR^local = c0(S) / (m(S) * s(S)).
class DtrLocalHeuristic final : public Heuristic {
 public:
  std::string_view name() const override { return "dtr-local"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
  StorageId choose(const ChooseContext& ctx) override;
};

}  // namespace dtr
