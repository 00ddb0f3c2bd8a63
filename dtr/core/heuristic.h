#pragma once
/// The eviction heuristic interface. A heuristic scores resident, evictable
/// storages; the runtime evicts the one with the lowest score. Heuristics that
/// need bookkeeping about evicted neighbourhoods get hooks from the runtime.
///
///   auto h = dtr::make_heuristic("dtr-eq");
///   dtr::Runtime rt({.budget_bytes = 1 << 30}, std::move(h));
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dtr/core/eviction_pool.h"
#include "dtr/core/graph.h"

namespace dtr {

/// What a heuristic may look at when it picks a victim.
struct ChooseContext {
  const Graph& graph;
  const EvictionPool& pool;
  std::int64_t now;             ///< runtime clock (ns of simulated compute)
  bool sample_sqrt;             ///< examine ~sqrt(n) candidates (prototype)
  std::int64_t min_bytes;       ///< skip candidates smaller than this
  std::mt19937_64& rng;
};

class Heuristic {
 public:
  virtual ~Heuristic() = default;
  /// The name used on the command line and in result files.
  virtual std::string_view name() const = 0;
  /// Score of evicting resident storage `s` now; lower is evicted first.
  /// +infinity means "never prefer" (e.g. zero staleness or zero size).
  virtual double score(const Graph& g, StorageId s, std::int64_t now) = 0;
  /// Picks the victim: by default a scan in pool order keeping the minimum
  /// with `<=` (the later of equal scores wins) and stopping at a score of 0.
  /// Returns kNoId only when the pool is empty.
  virtual StorageId choose(const ChooseContext& ctx);

  /// Hooks: a storage was added to the graph / evicted / made resident again.
  virtual void on_storage_created(const Graph& g, StorageId s) {}
  /// An op was recorded (or discarded after a failure): edges changed.
  virtual void on_op_recorded(const Graph& g, OpId op) {}
  virtual void on_evicted(const Graph& g, StorageId s) {}
  /// A storage was freed for good (banish policy or a failed call).
  virtual void on_banished(const Graph& g, StorageId s) {}
  /// A storage entered the eviction pool / its last access changed while
  /// in the pool (for heuristics that index the pool by a key).
  virtual void on_pool_insert(const Graph& g, StorageId s) {}
  virtual void on_access_changed(const Graph& g, StorageId s) {}
  virtual void on_materialized(const Graph& g,
                               std::span<const StorageId> storages) {}

  /// Metadata accesses so far (the paper's proxy for bookkeeping cost).
  std::uint64_t accesses() const { return accesses_; }

 protected:
  /// compute / (bytes * staleness), +inf when the denominator is 0, rounded
  /// the way the reference's exact integer division rounds.
  static double cost_density(std::int64_t compute_ns, std::int64_t bytes,
                             std::int64_t staleness);
  std::uint64_t accesses_ = 0;
};

/// Creates a heuristic by name: dtr, dtr-eq, dtr-local, lru, size, msps,
/// random. Throws dtr::InvalidArgument naming the unknown heuristic.
std::unique_ptr<Heuristic> make_heuristic(std::string_view name,
                                          std::uint64_t seed = 0);
/// All heuristic names, in the paper's order.
const std::vector<std::string>& heuristic_names();

}  // namespace dtr
