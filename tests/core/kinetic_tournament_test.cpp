// The kinetic tournament against a brute-force maximum of the keys, on
// sparse slots (half-empty subtrees keep a winner whose certificate never
// expires) and with the current winner re-keyed, which is where a shortcut
// in the update path could leave an ancestor comparing a stale line; the
// runner-up against the maximum of the other slots.
#include "dtr/core/heuristics/index/kinetic_tournament.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <vector>

namespace dtr {
namespace {

// The largest key among `lines` at `now` (nullopt: all empty).
std::optional<StalenessLine> best_line(
    const std::vector<std::optional<StalenessLine>>& lines, std::int64_t now) {
  std::optional<StalenessLine> best;
  for (const auto& l : lines) {
    if (l && (!best || KineticTournament::key_less(*best, *l, now))) best = l;
  }
  return best;
}

// `got` (a slot the tournament returned as `what`) holds a maximum of
// `lines` at `now`, or is kNone when every slot is empty.
void expect_a_maximum(const char* what, std::int32_t got,
                      const std::vector<std::optional<StalenessLine>>& lines,
                      std::int64_t now) {
  std::optional<StalenessLine> best = best_line(lines, now);
  if (!best) {
    EXPECT_EQ(got, KineticTournament::kNone) << what;
    return;
  }
  ASSERT_NE(got, KineticTournament::kNone) << what;
  ASSERT_TRUE(lines[got].has_value()) << what << " " << got << " is empty";
  EXPECT_FALSE(KineticTournament::key_less(*lines[got], *best, now))
      << what << " " << got << " is not a maximum at " << now;
}

// The winner's key equals the maximum (ties may go to any tied slot), the
// runner-up's the maximum of the other slots.
void expect_winner_is_a_maximum(
    KineticTournament& t,
    const std::vector<std::optional<StalenessLine>>& lines, std::int64_t now) {
  std::int32_t w = t.winner(now);
  expect_a_maximum("winner", w, lines, now);
  if (w == KineticTournament::kNone || ::testing::Test::HasFailure()) return;
  std::vector<std::optional<StalenessLine>> others = lines;
  others[w].reset();
  expect_a_maximum("runner-up", t.runner_up(now), others, now);
}

TEST(KineticTournamentTest, ReKeyingTheWinnerOfAHalfEmptySubtree) {
  // Slot 0 alone in its pair wins it with a certificate that never expires;
  // lowering its line must still reach the root.
  KineticTournament t;
  t.set(0, {1, 100, 0}, 10);
  t.set(2, {1, 10, 0}, 10);
  EXPECT_EQ(t.winner(10), 0);
  t.set(0, {1, 100, 10}, 10);  // accessed now: key 0
  EXPECT_EQ(t.winner(10), 2);
}

TEST(KineticTournamentTest, RandomOperationsMatchTheMaximum) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    auto pick = [&](std::int64_t lo, std::int64_t hi) {
      return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
    };
    const std::uint32_t slots = seed % 3 == 0 ? 200 : 40;
    KineticTournament t;
    std::vector<std::optional<StalenessLine>> lines(slots);
    std::int64_t now = 1;
    for (int step = 0; step < 4000; ++step) {
      now += pick(0, 5);
      int action = static_cast<int>(pick(0, 9));
      std::uint32_t slot = static_cast<std::uint32_t>(pick(0, slots - 1));
      if (action < 3) {
        StalenessLine l{pick(1, 50), pick(1, 50), now - pick(0, 20)};
        if (l.last_access < 0) l.last_access = 0;
        t.set(slot, l, now);
        lines[slot] = l;
      } else if (action < 5) {  // the current winner accessed now
        std::int32_t w = t.winner(now);
        if (w == KineticTournament::kNone) continue;
        StalenessLine l = *lines[w];
        l.last_access = now;
        if (action == 4) l.cost_ns = pick(1, 50);
        t.set(static_cast<std::uint32_t>(w), l, now);
        lines[w] = l;
      } else if (action < 7) {
        t.erase(slot, now);
        lines[slot].reset();
      } else {
        expect_winner_is_a_maximum(t, lines, now);
        if (HasFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace dtr
