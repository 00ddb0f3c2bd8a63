#include "dtr/core/heuristics/index/kinetic_tournament.h"

#include <cmath>
#include <limits>
#include <tuple>

namespace dtr {
namespace {

// GCC and Clang extension; -Wpedantic wants it marked.
__extension__ typedef unsigned __int128 u128;
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

// x * y * z for x, y, z in [0, 2^63): at most 189 bits, as three words
// (most significant first) so that tuples compare like the numbers.
std::tuple<std::uint64_t, std::uint64_t, std::uint64_t> product3(
    std::uint64_t x, std::uint64_t y, std::uint64_t z) {
  u128 xy = u128{x} * y;
  u128 lo = static_cast<std::uint64_t>(xy) * u128{z};
  u128 hi = static_cast<std::uint64_t>(xy >> 64) * u128{z};
  u128 mid = (lo >> 64) + static_cast<std::uint64_t>(hi);
  return {static_cast<std::uint64_t>(hi >> 64) +
              static_cast<std::uint64_t>(mid >> 64),
          static_cast<std::uint64_t>(mid), static_cast<std::uint64_t>(lo)};
}

std::uint64_t staleness(const StalenessLine& l, std::int64_t now) {
  return static_cast<std::uint64_t>(now - l.last_access);
}

// x with at most two roundings (of each half, then of their sum).
double to_double(u128 x) {
  return static_cast<double>(static_cast<std::uint64_t>(x >> 64)) * 0x1p64 +
         static_cast<double>(static_cast<std::uint64_t>(x));
}

// bytes_a / cost_a < bytes_b / cost_b, exactly.
bool slope_less(const StalenessLine& a, const StalenessLine& b) {
  return u128(a.bytes) * u128(b.cost_ns) < u128(b.bytes) * u128(a.cost_ns);
}

}  // namespace

int KineticTournament::key_compare(const StalenessLine& a,
                                   const StalenessLine& b, std::int64_t now) {
  // a.m (T - a.a) / a.c against b.m (T - b.a) / b.c, cross-multiplied. In
  // doubles first: each product is within 2^-50 of the exact one (five
  // roundings of 2^-53), so products more than 2^-40 apart compare right
  // and only near-ties pay for the exact 192-bit products.
  const std::uint64_t sa = staleness(a, now), sb = staleness(b, now);
  const double pa = static_cast<double>(a.bytes) * static_cast<double>(sa) *
                    static_cast<double>(b.cost_ns);
  const double pb = static_cast<double>(b.bytes) * static_cast<double>(sb) *
                    static_cast<double>(a.cost_ns);
  constexpr double kApart = 1.0 + 0x1p-40;
  if (pa > pb * kApart) return 1;
  if (pb > pa * kApart) return -1;
  const auto ea = product3(a.bytes, sa, b.cost_ns);
  const auto eb = product3(b.bytes, sb, a.cost_ns);
  return ea < eb ? -1 : (eb < ea ? 1 : 0);
}

bool KineticTournament::key_less(const StalenessLine& a, const StalenessLine& b,
                                 std::int64_t now) {
  return key_compare(a, b, now) < 0;
}

void KineticTournament::clear() {
  capacity_ = 0;
  lines_.clear();
  win_.clear();
  expire_.clear();
}

void KineticTournament::grow(std::uint32_t slot, std::int64_t now) {
  std::uint32_t cap = capacity_ == 0 ? 64 : capacity_;
  while (cap <= slot) cap *= 2;
  std::vector<std::int32_t> leaves(cap, kNone);
  for (std::uint32_t i = 0; i < capacity_; ++i) leaves[i] = win_[capacity_ + i];
  capacity_ = cap;
  lines_.resize(cap);
  win_.assign(2 * cap, kNone);
  expire_.assign(2 * cap, kNever);
  for (std::uint32_t i = 0; i < cap; ++i) win_[cap + i] = leaves[i];
  for (std::uint32_t node = cap - 1; node >= 1; --node) pull(node, now);
}

void KineticTournament::set(std::uint32_t slot, const StalenessLine& line,
                            std::int64_t now) {
  if (slot >= capacity_) grow(slot, now);
  lines_[slot] = line;
  win_[capacity_ + slot] = static_cast<std::int32_t>(slot);
  update_path(capacity_ + slot, now);
}

void KineticTournament::erase(std::uint32_t slot, std::int64_t now) {
  if (slot >= capacity_ || win_[capacity_ + slot] == kNone) return;
  win_[capacity_ + slot] = kNone;
  update_path(capacity_ + slot, now);
}

std::int32_t KineticTournament::winner(std::int64_t now) {
  if (capacity_ == 0) return kNone;
  advance(1, now);
  return win_[1];
}

std::int32_t KineticTournament::runner_up(std::int64_t now) const {
  // winner(now) left every node on the winner's path valid at `now`, and a
  // valid node's children are valid too (its certificate is at most
  // theirs), so the siblings' winners are their subtrees' best at `now`.
  if (capacity_ == 0 || win_[1] == kNone) return kNone;
  const std::int32_t top = win_[1];
  std::int32_t best = kNone;
  for (std::uint32_t node = 1; node < capacity_;) {
    const std::uint32_t left = 2 * node;
    const bool top_left = win_[left] == top;
    const std::int32_t other = win_[top_left ? left + 1 : left];
    if (other != kNone &&
        (best == kNone || key_less(lines_[best], lines_[other], now))) {
      best = other;
    }
    node = top_left ? left : left + 1;
  }
  return best;
}

void KineticTournament::update_path(std::uint32_t leaf, std::int64_t now) {
  const std::int32_t slot = static_cast<std::int32_t>(leaf - capacity_);
  for (std::uint32_t node = leaf / 2; node >= 1; node /= 2) {
    const std::int32_t old_win = win_[node];
    const std::int64_t old_expire = expire_[node];
    // The sibling subtree may hold a winner for an earlier clock.
    advance(2 * node, now);
    advance(2 * node + 1, now);
    pull(node, now);
    // The ancestors saw only this node's winner and certificate: if neither
    // changed and the winner is not the slot whose line changed, they are
    // still right (an expired one is refreshed by the next query).
    if (win_[node] == old_win && expire_[node] == old_expire &&
        old_win != slot) {
      return;
    }
  }
}

void KineticTournament::advance(std::uint32_t node, std::int64_t now) {
  if (expire_[node] > now) return;
  // Leaves never expire, so node is internal.
  advance(2 * node, now);
  advance(2 * node + 1, now);
  pull(node, now);
}

void KineticTournament::pull(std::uint32_t node, std::int64_t now) {
  std::int32_t a = win_[2 * node], b = win_[2 * node + 1];
  std::int64_t expire = std::min(expire_[2 * node], expire_[2 * node + 1]);
  if (a == kNone || b == kNone) {
    win_[node] = a == kNone ? b : a;
    expire_[node] = expire;
    return;
  }
  // Of equal keys the steeper line wins: it stays ahead afterwards.
  const StalenessLine& la = lines_[a];
  const StalenessLine& lb = lines_[b];
  const int order = key_compare(la, lb, now);
  bool b_wins = order < 0 || (order == 0 && slope_less(la, lb));
  std::int32_t w = b_wins ? b : a, l = b_wins ? a : b;
  win_[node] = w;
  expire_[node] = std::min(expire, crossing(w, l, now));
}

// The first clock after `now` at which `loser` may overtake `winner`,
// rounded down (never later than the truth), or kNever.
std::int64_t KineticTournament::crossing(std::int32_t winner,
                                         std::int32_t loser,
                                         std::int64_t now) const {
  const StalenessLine& w = lines_[winner];
  const StalenessLine& l = lines_[loser];
  // With A = m_l c_w > B = m_w c_l (the loser is steeper), the keys are
  // equal at T* = a_w + A (a_l - a_w) / (A - B); the loser leads after T*.
  const u128 A = u128(l.bytes) * u128(w.cost_ns);
  const u128 B = u128(w.bytes) * u128(l.cost_ns);
  if (A <= B) return kNever;                           // the loser never gains
  if (l.last_access <= w.last_access) return now + 1;  // cannot lose; recheck
  // A, A - B (exact) and a_l - a_w each reach a double with at most two
  // roundings, the quotient and product add two: the estimate is within
  // 2^-49 of the truth, so a 2^-45 margin and one nanosecond keep it below.
  double ratio = to_double(A) / to_double(A - B) *
                 static_cast<double>(l.last_access - w.last_access);
  ratio = ratio * (1.0 - 0x1p-45) - 1.0;
  if (!(ratio < 0x1p62)) return kNever;  // beyond every clock (limits.h)
  std::int64_t t = w.last_access + static_cast<std::int64_t>(ratio);
  return std::max(t, now + 1);
}

}  // namespace dtr
