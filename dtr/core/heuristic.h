#pragma once
/// The eviction heuristic interface. A heuristic scores resident, evictable
/// storages; the runtime evicts the one with the lowest score. Heuristics that
/// need bookkeeping about evicted neighbourhoods get hooks from the runtime.
///
///   auto h = dtr::make_heuristic("dtr-eq");
///   dtr::Runtime rt({.budget_bytes = 1 << 30}, std::move(h));
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dtr/core/eviction_pool.h"
#include "dtr/core/graph.h"

namespace dtr {

/// How a heuristic with an index (heuristics/index/score_index.h) finds its
/// victim. Every mode returns the same victim; kScan is the reference.
enum class ChoiceMode {
  kIndex,  ///< the index where the heuristic has one (the default)
  kScan,   ///< the linear scan over the pool (scan_pool)
  kCheck,  ///< both, throwing dtr::InternalError if they differ (tests)
  /// The scan the index falls back to under churn, on every choice (Note
  /// [Index or scan]): pruned for "dtr" and "msps", the plain scan else.
  kFastScan,
  kCheckFastScan,  ///< kFastScan and kScan, compared as kCheck does (tests)
};

/// What a heuristic may look at when it picks a victim.
struct ChooseContext {
  const Graph& graph;
  const EvictionPool& pool;
  std::int64_t now;        ///< runtime clock (ns of simulated compute)
  bool sample_sqrt;        ///< examine ~sqrt(n) candidates (prototype)
  std::int64_t min_bytes;  ///< skip candidates smaller than this
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
  /// A storage was freed for good (banish policy, a failed call, forget).
  virtual void on_banished(const Graph& g, StorageId s) {}
  /// The record of `s` (dead, banished) is about to be recycled: drop every
  /// piece of state about it, since its id will name a new storage.
  virtual void on_storage_recycled(const Graph& g, StorageId s) {}
  /// A storage entered the eviction pool / its last access changed while
  /// in the pool (for heuristics that index the pool by a key).
  virtual void on_pool_insert(const Graph& g, StorageId s) {}
  virtual void on_access_changed(const Graph& g, StorageId s) {}
  virtual void on_materialized(const Graph& g,
                               std::span<const StorageId> storages) {}

  /// Metadata accesses so far (the paper's proxy for bookkeeping cost).
  std::uint64_t accesses() const { return accesses_; }
  /// Selects index, scan or both (see ChoiceMode); heuristics without an
  /// index always scan. Sampling and the size filter always scan.
  void set_choice_mode(ChoiceMode mode) { choice_mode_ = mode; }
  ChoiceMode choice_mode() const { return choice_mode_; }

 protected:
  /// compute / (bytes * staleness), +inf when the denominator is 0, rounded
  /// the way the reference's exact integer division rounds.
  static double cost_density(std::int64_t compute_ns, std::int64_t bytes,
                             std::int64_t staleness) {
    if (bytes <= 0 || staleness <= 0) {
      return std::numeric_limits<double>::infinity();
    }
    // Below 2^53 both operands are exact doubles and one IEEE division is
    // correctly rounded, like Python's int / int.
    constexpr std::int64_t kExact = std::int64_t{1} << 53;
    std::int64_t den;
    if (!__builtin_mul_overflow(bytes, staleness, &den) && den < kExact &&
        compute_ns < kExact) {
      return static_cast<double>(compute_ns) / static_cast<double>(den);
    }
    return cost_density_wide(compute_ns, bytes, staleness);
  }
  static double cost_density_wide(std::int64_t compute_ns, std::int64_t bytes,
                                  std::int64_t staleness);

  /// The default search over the pool with a given scoring function (see
  /// choose()); final heuristics call it with an inlinable scorer.
  template <typename Score>
  StorageId scan_pool(const ChooseContext& ctx, Score&& score_of);
  std::uint64_t accesses_ = 0;
  ChoiceMode choice_mode_ = ChoiceMode::kIndex;
};

template <typename Score>
StorageId Heuristic::scan_pool(const ChooseContext& ctx, Score&& score_of) {
  const auto& slots = ctx.pool.slots();
  StorageId best = kNoId;
  double best_score = std::numeric_limits<double>::infinity();
  auto consider = [&](StorageId s) {
    double sc = score_of(s);
    if (sc <= best_score) {
      best_score = sc;
      best = s;
    }
    return sc == 0.0;
  };
  if (!ctx.sample_sqrt && ctx.min_bytes <= 0) {
    for (StorageId s : slots) {
      if (s != kNoId && consider(s)) break;
    }
    return best;
  }
  // The prototype's optimizations: skip small storages, and step through the
  // pool by a random stride of 1..sqrt(n), which examines about 2 sqrt(n).
  std::size_t max_stride = 1;
  if (ctx.sample_sqrt) {
    max_stride = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::sqrt(double(ctx.pool.size()))));
  }
  std::uniform_int_distribution<std::size_t> stride(1, max_stride);
  for (std::size_t i = 0; i < slots.size();) {
    StorageId s = slots[i];
    if (s == kNoId) {
      ++i;
      continue;
    }
    if (ctx.graph.storage(s).bytes >= ctx.min_bytes && consider(s)) break;
    i += ctx.sample_sqrt ? stride(ctx.rng) : 1;
  }
  if (best != kNoId) return best;
  // Sampling or the size filter found nothing: fall back to a full scan so
  // that an optimization never turns into a spurious out-of-memory.
  for (StorageId s : slots) {
    if (s != kNoId && consider(s)) break;
  }
  return best;
}

/// Creates a registered heuristic by name (heuristic_registry.h: dtr,
/// dtr-eq, dtr-local, msps, lru, size, random, and any registered later).
/// Throws dtr::InvalidArgument naming the unknown heuristic.
std::unique_ptr<Heuristic> make_heuristic(std::string_view name,
                                          std::uint64_t seed = 0);
/// The registered heuristics' names, the paper's seven first in its order;
/// with `auto_only`, those `auto` considers (HeuristicEntry::auto_candidate).
std::vector<std::string> heuristic_names(bool auto_only = false);
/// "index", "scan", "check", "fast-scan" or "check-fast-scan"; throws
/// dtr::InvalidArgument naming the value.
ChoiceMode parse_choice_mode(std::string_view name);

}  // namespace dtr
