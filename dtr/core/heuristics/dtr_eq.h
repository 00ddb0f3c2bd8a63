#pragma once
/// h_DTR^eq: the evicted neighbourhood approximated by union-find classes of
/// evicted storages (paper App. C.3; see DTR.md a.6).
///
/// Note [Union-find split approximation]
/// Evicting S makes a fresh class node valued c0(S) and unions it with the
/// classes of S's distinct evicted neighbours (both directions), summing the
/// values. Rematerializing S only subtracts c0(S) from its class's value and
/// detaches S; edges are never removed, so classes can keep "phantom"
/// dependencies. A score reads the distinct roots of S's evicted neighbours.
/// A recycled storage is detached like a rematerialized one; once storages
/// are being recycled, the node arrays are compacted to one node per class
/// when they outgrow twice the storage ids (same classes, same values).
#include <vector>

#include "dtr/core/heuristic.h"

namespace dtr {

class DtrEqHeuristic final : public Heuristic {
 public:
  std::string_view name() const override { return "dtr-eq"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
  void on_storage_created(const Graph& g, StorageId s) override;
  void on_evicted(const Graph& g, StorageId s) override;
  void on_materialized(const Graph& g,
                       std::span<const StorageId> storages) override;
  void on_storage_recycled(const Graph& g, StorageId s) override;
  /// Class nodes allocated (for tests: stays bounded in a steady loop).
  std::size_t node_count() const { return parent_.size(); }

 private:
  std::uint32_t find_root(std::uint32_t node);
  void detach(const Graph& g, StorageId s);
  void compact();
  /// Collects the distinct class roots of s's evicted neighbours.
  void neighbour_roots(const Graph& g, StorageId s);

  std::vector<std::uint32_t> parent_;     // per class node
  std::vector<std::int64_t> value_;       // meaningful at roots
  std::vector<std::uint32_t> node_of_;    // per storage; kNoId if resident
  std::vector<std::uint32_t> roots_;      // scratch
  std::vector<std::uint32_t> root_mark_;  // per class node: epoch seen
  std::uint32_t epoch_ = 0;
  bool recycling_ = false;  // a storage was ever recycled
};

}  // namespace dtr
