#pragma once
/// The pool indexed by score for heuristics whose score is
/// cost / (bytes * staleness): the victim the scan (Heuristic::scan_pool)
/// would pick, without scanning. Costs are supplied by the heuristic.
///
/// Note [Exact victim from an index]
/// The scan compares *rounded* scores: among equal rounded scores it keeps
/// the later pool entry (`<=`), it stops at the first score of exactly 0
/// (so of several zero scores the earliest entry wins), and if every score
/// is +inf it ends on the last entry. The index reproduces each rule:
/// - zero scores (cost 0, bytes > 0, staleness > 0) are kept apart in pool
///   order; the earliest whose staleness is positive at the query wins;
/// - bytes 0 (always +inf) are not indexed; when no entry has a finite
///   score the victim is the last pool entry;
/// - the rest are ordered by their exact score (KineticTournament). Every
///   rounding of cost_density is faithful (within one ulp of the exact
///   quotient, also through cost_density_wide), so entries further in
///   exact order than one whose rounded score is 8 ulps above the best
///   rounded score so far cannot tie or beat it. The walk pops entries in
///   exact order until then and keeps the lowest rounded score, of equal
///   ones the latest pool entry: exactly the scan's choice. Usually it pops
///   one or two entries.
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "dtr/core/heuristic.h"
#include "dtr/core/heuristics/kinetic_tournament.h"

namespace dtr {

class ScoreIndex {
 public:
  /// The heuristic's rounded score of a line at a clock (the same function
  /// the scan uses, so that both round alike).
  using RoundedScore = double (*)(const StalenessLine& line, std::int64_t now);
  explicit ScoreIndex(RoundedScore score) : score_(score) {}

  /// Indexes pooled storage `s` with cost `cost_ns` (its bytes, last access
  /// and pool entry are read from the graph), replacing any older entry.
  void set(const Graph& g, StorageId s, std::int64_t cost_ns, std::int64_t now);
  /// Drops the entry of `s`, if any.
  void erase(StorageId s, std::int64_t now);
  void clear();
  /// The scan's victim among the indexed pool members; entries of storages
  /// that left the pool are dropped on the way. kNoId iff the pool is empty.
  /// O(log^2 n) amortized plus one step per entry within 8 ulps of the
  /// best score. Adds one to `accesses` per entry it reads.
  StorageId choose(const ChooseContext& ctx, std::uint64_t& accesses);

 private:
  struct Entry {
    StorageId storage = kNoId;
    std::uint64_t seq = 0;  // Storage::pool_seq when indexed
    StalenessLine line;
    bool zero = false;  // in zeros_ rather than the tournament
  };
  bool still_pooled(const Graph& g, std::uint32_t slot) const;
  void drop(std::uint32_t slot, std::int64_t now);
  StorageId first_zero(const ChooseContext& ctx, std::uint64_t& accesses);
  StorageId walk(const ChooseContext& ctx, std::uint64_t& accesses);

  RoundedScore score_;
  KineticTournament tournament_;
  std::vector<Entry> entries_;             // per slot
  std::vector<std::uint32_t> slot_of_;     // per storage, kNoId if none
  std::vector<std::uint32_t> free_slots_;  // recycled slots
  std::set<std::pair<std::uint64_t, std::uint32_t>> zeros_;  // (seq, slot)
  std::vector<std::uint32_t> popped_;  // scratch for walk()
};

}  // namespace dtr
