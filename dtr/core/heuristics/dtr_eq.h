#pragma once
/// h_DTR^eq: the evicted neighbourhood approximated by union-find classes of
/// evicted storages (the paper's Appendix C.3).
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
///
/// Note [Class watchers]
/// The victim is found in a ScoreIndex (indexed_heuristic.h), so every
/// pooled storage whose cost may change must be marked dirty. A cost reads
/// the values of the classes next to the storage, so each class node keeps
/// the storages whose cost read it since it last changed (its watchers).
/// When a class changes (a merge at an eviction, a member leaving at a
/// rematerialization or recycling) its watchers are marked dirty and the
/// list is emptied: a recomputed cost registers again with the classes it
/// reads. Whether a class is next to a storage changes only when a
/// neighbour is evicted, rematerialized or banished, or an op adds edges;
/// those neighbours are marked directly. So one eviction costs the number
/// of storages next to the classes it merges (every one of them really
/// changes cost, unless it was registered and then stopped reading the
/// class: each registration is paid once), which is not bounded by a
/// function of n: a class with many resident neighbours makes each change
/// to it touch all of them.
#include <vector>

#include "dtr/core/heuristics/index/indexed_heuristic.h"

namespace dtr {

class DtrEqHeuristic final : public IndexedHeuristic {
 public:
  std::string_view name() const override { return "dtr-eq"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
  void on_storage_created(const Graph& g, StorageId s) override;
  void on_evicted(const Graph& g, StorageId s) override;
  void on_materialized(const Graph& g,
                       std::span<const StorageId> storages) override;
  void on_storage_recycled(const Graph& g, StorageId s) override;
  void on_banished(const Graph& g, StorageId s) override;
  void on_op_recorded(const Graph& g, OpId op) override;
  /// Class nodes allocated (for tests: stays bounded in a steady loop).
  std::size_t node_count() const { return parent_.size(); }

 private:
  std::uint32_t find_root(std::uint32_t node);
  void detach(const Graph& g, StorageId s);
  void compact();
  /// Collects the distinct class roots of s's evicted neighbours.
  void neighbour_roots(const Graph& g, StorageId s);
  /// c0(s) plus the values of the classes next to s (the score's numerator).
  std::int64_t neighbourhood_cost(const Graph& g, StorageId s);
  std::int64_t cost_of(const Graph& g, StorageId s) override;
  StorageId scan(const ChooseContext& ctx) override;
  bool drops_index_on_churn() const override { return true; }
  /// Note [Class watchers]: class `root` changed.
  void notify_watchers(std::uint32_t root);
  void mark_neighbours_dirty(const Graph& g, StorageId s);

  std::vector<std::uint32_t> parent_;     // per class node
  std::vector<std::int64_t> value_;       // meaningful at roots
  std::vector<std::uint32_t> node_of_;    // per storage; kNoId if resident
  std::vector<std::uint32_t> roots_;      // scratch
  std::vector<std::uint32_t> root_mark_;  // per class node: epoch seen
  std::vector<std::vector<StorageId>> watchers_;  // per class node
  std::uint32_t epoch_ = 0;
  bool recycling_ = false;  // a storage was ever recycled
};

}  // namespace dtr
