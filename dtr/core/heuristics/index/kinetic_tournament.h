#pragma once
/// A kinetic tournament over staleness lines: the entry with the largest
/// key(T) = bytes * (T - last_access) / cost at a clock T that never goes
/// back, with insert and erase at the current clock. The key is the inverse
/// of the DTR-style score cost / (bytes * staleness), so the winner has the
/// lowest exact score.
///
/// Note [Kinetic tournament]
/// For a fixed entry, key(T) is a line in T with slope bytes / cost. A
/// segment tree over slots keeps, in each node, the winner of its subtree at
/// the clock it was last brought up to date and the earliest clock at which
/// that may stop being true (its certificate: the crossing of the two
/// children's winners, or a child's own certificate). A query at T refreshes
/// only the nodes whose certificate has expired. Comparisons are exact
/// (192-bit products, computed only when a product in doubles cannot tell
/// the two keys apart); only the crossing times are approximate, and they are
/// rounded down, so a certificate may expire early (wasted work) but never
/// late (a wrong winner). For lines, the number of winner changes is
/// O(n log^2 n) amortized over n insertions (Agarwal et al., "Kinetic
/// tournaments"), so a query or update costs O(log^2 n) amortized.
#include <cstdint>
#include <vector>

namespace dtr {

/// One candidate: cost_ns > 0 and bytes > 0 (zero and infinite scores are
/// handled by the caller), last_access <= every clock it is queried at.
struct StalenessLine {
  std::int64_t cost_ns = 0;
  std::int64_t bytes = 0;
  std::int64_t last_access = 0;
};

class KineticTournament {
 public:
  static constexpr std::int32_t kNone = -1;

  /// Puts `line` in slot `slot` (replacing what was there) at clock `now`.
  void set(std::uint32_t slot, const StalenessLine& line, std::int64_t now);
  /// Empties slot `slot` at clock `now`.
  void erase(std::uint32_t slot, std::int64_t now);
  /// The slot of the largest key at `now` (ties: an arbitrary one of the
  /// tied slots), or kNone when empty.
  std::int32_t winner(std::int64_t now);
  /// The slot winner(now) would return once the winner's slot were erased,
  /// without erasing it: the best of the subtrees beside the winner's path.
  /// Call right after winner(now); kNone when the winner is alone.
  std::int32_t runner_up(std::int64_t now) const;
  const StalenessLine& line(std::uint32_t slot) const { return lines_[slot]; }
  void clear();

  /// Exact comparisons of two lines at clock `now` (for the caller's walk):
  /// key_compare is -1, 0 or 1 as a's key is below, equal to or above b's.
  static int key_compare(const StalenessLine& a, const StalenessLine& b,
                         std::int64_t now);
  static bool key_less(const StalenessLine& a, const StalenessLine& b,
                       std::int64_t now);

 private:
  void grow(std::uint32_t slot, std::int64_t now);
  void update_path(std::uint32_t leaf, std::int64_t now);
  void advance(std::uint32_t node, std::int64_t now);
  void pull(std::uint32_t node, std::int64_t now);
  std::int64_t crossing(std::int32_t winner, std::int32_t loser,
                        std::int64_t now) const;

  std::uint32_t capacity_ = 0;        // leaves, a power of two
  std::vector<StalenessLine> lines_;  // per slot
  std::vector<std::int32_t> win_;     // per node: winning slot or kNone
  std::vector<std::int64_t> expire_;  // per node: recompute at this clock
};

}  // namespace dtr
