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
///   order; the earliest whose staleness is positive at the query wins
///   (any staleness for a timeless score);
/// - bytes 0 (always +inf) are not indexed; when no entry has a finite
///   score the victim is the last pool entry;
/// - the rest are ordered by their exact score (KineticTournament). Every
///   rounding of cost_density is faithful (within one ulp of the exact
///   quotient, also through cost_density_wide), so entries further in
///   exact order than one whose rounded score is 8 ulps above the best
///   rounded score so far cannot tie or beat it. The walk pops entries in
///   exact order until then and keeps the lowest rounded score, of equal
///   ones the latest pool entry: exactly the scan's choice. Usually it pops
///   one or two lines (identical lines share one slot, see Bucket).
#include <cstdint>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dtr/core/heuristic.h"
#include "dtr/core/heuristics/index/kinetic_tournament.h"

namespace dtr {

class ScoreIndex {
 public:
  /// The heuristic's rounded score of a line at a clock (the same function
  /// the scan uses, so that both round alike).
  using RoundedScore = double (*)(const StalenessLine& line, std::int64_t now);
  /// `timeless`: the score does not depend on the clock ("msps"): every
  /// line gets the same last access (kTimelessAccess), so the exact order
  /// is by cost / bytes, and a zero score is zero at every clock.
  explicit ScoreIndex(RoundedScore score, bool timeless = false)
      : score_(score), timeless_(timeless) {}
  static constexpr std::int64_t kTimelessAccess = -1;  // clocks are >= 0

  /// Indexes pooled storage `s` with cost `cost_ns` (its bytes, last access
  /// and pool entry are read from the graph), replacing any older entry.
  void set(const Graph& g, StorageId s, std::int64_t cost_ns, std::int64_t now);
  /// Drops the entry of `s`, if any.
  void erase(StorageId s, std::int64_t now);
  void clear();
  /// The scan's victim among the indexed pool members; entries of storages
  /// that left the pool are dropped on the way. kNoId iff the pool is empty.
  /// O(log^2 n) amortized plus one step per distinct line within 8 ulps of
  /// the best score. Adds one to `accesses` per entry it reads.
  StorageId choose(const ChooseContext& ctx, std::uint64_t& accesses);

 private:
  // Storages with the same (cost, bytes, last access) have equal rounded
  // scores forever, and of those the scan takes the latest pool entry: they
  // share one tournament slot (a bucket), ordered by pool entry. Without
  // it a rematerialized chain, whose frames are all touched at one clock,
  // makes the walk visit every one of them.
  using Members = std::set<std::pair<std::uint64_t, StorageId>>;  // by seq
  using LineKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
  struct Bucket {
    StalenessLine line;
    Members members;
  };
  struct Member {
    std::uint32_t bucket = kNoId;  // kNoId: not indexed, or in zeros_
    std::uint64_t seq = 0;         // Storage::pool_seq when indexed
    bool zero = false;
  };
  static bool still_pooled(const Graph& g, StorageId s, std::uint64_t seq);
  void remove_member(StorageId s, std::int64_t now);
  /// Re-keys the bucket `s` is alone in to its new line, one tournament
  /// update instead of an erase and an insert; false (nothing done) when
  /// `s` is not alone or the new line has a bucket already.
  bool move_alone(const Storage& st, StorageId s, std::int64_t cost_ns,
                  std::int64_t now);
  StorageId first_zero(const ChooseContext& ctx, std::uint64_t& accesses);
  StorageId walk(const ChooseContext& ctx, std::uint64_t& accesses);
  /// The latest pooled member of bucket `b` (dropping stale ones), or kNoId
  /// after removing an emptied bucket.
  StorageId latest_member(const ChooseContext& ctx, std::uint32_t b);

  RoundedScore score_;
  bool timeless_;
  KineticTournament tournament_;
  std::vector<Bucket> buckets_;  // per tournament slot
  // Only looked up, never walked in order: hashed, not a std::map (whose
  // node allocations and rebalancing showed in the chain's profile).
  struct LineHash {
    std::size_t operator()(const LineKey& k) const;
  };
  std::unordered_map<LineKey, std::uint32_t, LineHash> bucket_of_;
  std::vector<std::uint32_t> free_buckets_;
  std::vector<Member> member_;         // per storage
  Members zeros_;                      // zero costs, by pool entry
  std::vector<std::uint32_t> popped_;  // scratch for walk()
};

}  // namespace dtr
