#pragma once
/// Base of the heuristics whose cost reads exact evicted regions ("dtr",
/// "msps"): the regions' events go to EvictedRegions, and every pooled
/// storage whose cached region an event invalidated is marked dirty for the
/// score index (Note [Region watchers], Note [Dirty costs]).
#include <span>

#include "dtr/core/heuristics/evicted_regions.h"
#include "dtr/core/heuristics/indexed_heuristic.h"

namespace dtr {

class RegionHeuristic : public IndexedHeuristic {
 public:
  void on_storage_created(const Graph& g, StorageId s) override {
    regions_.on_storage_created(g, s);
  }
  void on_op_recorded(const Graph& g, OpId op) override {
    regions_.on_op_recorded(g, op);
    mark_stale_dirty();
  }
  void on_evicted(const Graph& g, StorageId s) override {
    IndexedHeuristic::on_evicted(g, s);
    regions_.on_changed(s);
    mark_stale_dirty();
  }
  void on_banished(const Graph& g, StorageId s) override {
    IndexedHeuristic::on_banished(g, s);
    regions_.on_changed(s);
    mark_stale_dirty();
  }
  void on_storage_recycled(const Graph& g, StorageId s) override {
    IndexedHeuristic::on_storage_recycled(g, s);
    regions_.on_recycled(s);
    mark_stale_dirty();
  }
  void on_materialized(const Graph& g,
                       std::span<const StorageId> storages) override {
    for (StorageId s : storages) regions_.on_changed(s);
    mark_stale_dirty();
  }

 protected:
  /// `with_down`: see EvictedRegions; `score` and `timeless`: see
  /// IndexedHeuristic.
  RegionHeuristic(bool with_down, ScoreIndex::RoundedScore score, bool timeless)
      : IndexedHeuristic(score, timeless), regions_(with_down, accesses_) {}

  EvictedRegions regions_;

 private:
  void mark_stale_dirty() {
    for (StorageId s : regions_.stale()) mark_dirty(s);
    regions_.stale().clear();
  }
};

}  // namespace dtr
