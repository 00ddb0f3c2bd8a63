#pragma once
/// Exact evicted neighbourhoods e*(S) (paper App. C.2), kept incrementally.
///
/// Note [Evicted regions]
/// For every storage S we keep two regions: the evicted storages reachable
/// from S through evicted storages going to children (`down`) and going to
/// parents (`up`), each with the resident boundary (`frontier`) and the sum
/// of interior costs. The two directions are never mixed, as in the paper.
/// When S is evicted, every resident storage on the frontier of S's regions
/// absorbs S's region of the same direction. When storages become resident
/// again, their regions and those of their frontiers are rebuilt by a DFS
/// through evicted storages. This is exact: every resident storage whose
/// region contained a rematerialized storage lies on that storage's frontier.
#include <vector>

#include "dtr/core/heuristic.h"

namespace dtr {

class EvictedRegions {
 public:
  struct Region {
    std::vector<StorageId> interior;  ///< sorted storage ids
    std::vector<StorageId> frontier;  ///< sorted storage ids
    std::int64_t compute_ns = 0;      ///< sum over the interior
  };

  void on_storage_created(const Graph& g, StorageId s);
  void on_evicted(const Graph& g, StorageId s);
  void on_materialized(const Graph& g, std::span<const StorageId> storages);

  const Region& down(StorageId s) const { return down_[s]; }
  const Region& up(StorageId s) const { return up_[s]; }
  std::uint64_t accesses() const { return accesses_; }

 private:
  void absorb(const Graph& g, Region& into, const Region& from,
              StorageId evicted);
  void rebuild(const Graph& g, StorageId base, bool upward);

  std::vector<Region> down_;
  std::vector<Region> up_;
  std::vector<std::uint32_t> mark_;  // DFS epoch per storage
  std::uint32_t epoch_ = 0;
  std::vector<StorageId> stack_;
  std::vector<StorageId> scratch_;
  std::uint64_t accesses_ = 0;
};

/// h_DTR = [c0(S) + sum of c0 over e*(S)] / [m(S) * s(S)].
class DtrExactHeuristic final : public Heuristic {
 public:
  std::string_view name() const override { return "dtr"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
  void on_storage_created(const Graph& g, StorageId s) override {
    regions_.on_storage_created(g, s);
  }
  void on_evicted(const Graph& g, StorageId s) override {
    regions_.on_evicted(g, s);
  }
  void on_materialized(const Graph& g,
                       std::span<const StorageId> storages) override {
    regions_.on_materialized(g, storages);
  }
  const EvictedRegions& regions() const { return regions_; }

 private:
  EvictedRegions regions_;
};

/// h_MSPS (Capuchin) = [c0(S) + sum of c0 over evicted ancestors] / m(S).
class MspsHeuristic final : public Heuristic {
 public:
  std::string_view name() const override { return "msps"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
  void on_storage_created(const Graph& g, StorageId s) override {
    regions_.on_storage_created(g, s);
  }
  void on_evicted(const Graph& g, StorageId s) override {
    regions_.on_evicted(g, s);
  }
  void on_materialized(const Graph& g,
                       std::span<const StorageId> storages) override {
    regions_.on_materialized(g, storages);
  }

 private:
  EvictedRegions regions_;
};

}  // namespace dtr
