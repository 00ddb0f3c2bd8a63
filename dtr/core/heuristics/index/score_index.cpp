#include "dtr/core/heuristics/index/score_index.h"

#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "dtr/core/error.h"

namespace dtr {

std::size_t ScoreIndex::LineHash::operator()(const LineKey& k) const {
  // Each field times a distinct odd constant, then mixed (splitmix64's
  // finalizer): equal lines differing in one field spread apart.
  auto [cost, bytes, last] = k;
  std::uint64_t h = static_cast<std::uint64_t>(cost) * 0x9E3779B97F4A7C15u;
  h ^= static_cast<std::uint64_t>(bytes) * 0xC2B2AE3D27D4EB4Fu;
  h ^= static_cast<std::uint64_t>(last) * 0x165667B19E3779F9u;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9u;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBu;
  return static_cast<std::size_t>(h ^ (h >> 31));
}

void ScoreIndex::clear() {
  tournament_.clear();
  buckets_.clear();
  bucket_of_.clear();
  free_buckets_.clear();
  member_.clear();
  zeros_.clear();
}

void ScoreIndex::set(const Graph& g, StorageId s, std::int64_t cost_ns,
                     std::int64_t now) {
  const Storage& st = g.storage(s);
  if (st.bytes > 0 && cost_ns > 0 && move_alone(st, s, cost_ns, now)) return;
  erase(s, now);
  if (st.bytes <= 0) return;  // +inf at every clock: never chosen but last
  if (member_.size() <= s) member_.resize(s + 1);
  Member& m = member_[s];
  m.seq = st.pool_seq;
  m.zero = cost_ns == 0;
  if (m.zero) {
    zeros_.emplace(m.seq, s);
    return;
  }
  const std::int64_t last = timeless_ ? kTimelessAccess : st.last_access;
  auto [it, fresh] = bucket_of_.try_emplace(LineKey{cost_ns, st.bytes, last},
                                            std::uint32_t{0});
  if (fresh) {
    if (!free_buckets_.empty()) {
      it->second = free_buckets_.back();
      free_buckets_.pop_back();
    } else {
      it->second = static_cast<std::uint32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    Bucket& b = buckets_[it->second];
    b.line = {cost_ns, st.bytes, last};
    tournament_.set(it->second, b.line, now);
  }
  m.bucket = it->second;
  buckets_[m.bucket].members.emplace(m.seq, s);
}

bool ScoreIndex::move_alone(const Storage& st, StorageId s,
                            std::int64_t cost_ns, std::int64_t now) {
  if (s >= member_.size() || member_[s].bucket == kNoId) return false;
  Member& m = member_[s];
  Bucket& b = buckets_[m.bucket];
  if (b.members.size() != 1) return false;
  const std::int64_t last = timeless_ ? kTimelessAccess : st.last_access;
  const LineKey key{cost_ns, st.bytes, last};
  const LineKey old_key{b.line.cost_ns, b.line.bytes, b.line.last_access};
  const bool same_line = key == old_key;
  if (!same_line && bucket_of_.count(key) != 0) return false;  // joins it
  // Re-keying is the index's most frequent update (dtr-local re-keys at
  // every access): move the set's and the map's nodes instead of freeing
  // and allocating them.
  auto member = b.members.extract(b.members.begin());
  m.seq = st.pool_seq;
  member.value() = {m.seq, s};
  b.members.insert(std::move(member));
  if (same_line) return true;
  auto entry = bucket_of_.extract(old_key);
  // A bucket with members is always in the map under its line.
  DTR_ASSERT(!entry.empty(), "[index] bucket ", m.bucket,
             " is missing from the line map");
  entry.key() = key;
  bucket_of_.insert(std::move(entry));
  b.line = {cost_ns, st.bytes, last};
  tournament_.set(m.bucket, b.line, now);
  return true;
}

void ScoreIndex::erase(StorageId s, std::int64_t now) {
  if (s >= member_.size()) return;
  Member& m = member_[s];
  if (m.zero) {
    zeros_.erase({m.seq, s});
    m.zero = false;
    return;
  }
  if (m.bucket != kNoId) remove_member(s, now);
}

void ScoreIndex::remove_member(StorageId s, std::int64_t now) {
  Member& m = member_[s];
  std::uint32_t id = m.bucket;
  Bucket& b = buckets_[id];
  b.members.erase({m.seq, s});
  m.bucket = kNoId;
  if (!b.members.empty()) return;
  tournament_.erase(id, now);
  bucket_of_.erase(LineKey{b.line.cost_ns, b.line.bytes, b.line.last_access});
  free_buckets_.push_back(id);
}

bool ScoreIndex::still_pooled(const Graph& g, StorageId s, std::uint64_t seq) {
  const Storage& st = g.storage(s);
  return st.pool_slot != kNoId && st.pool_seq == seq;
}

StorageId ScoreIndex::choose(const ChooseContext& ctx,
                             std::uint64_t& accesses) {
  StorageId victim = first_zero(ctx, accesses);
  if (victim == kNoId) victim = walk(ctx, accesses);
  if (victim != kNoId) return victim;
  // Every score is +inf: the scan ends on the last pool entry.
  const auto& slots = ctx.pool.slots();
  for (auto it = slots.rbegin(); it != slots.rend(); ++it) {
    if (*it != kNoId) return *it;
  }
  return kNoId;
}

StorageId ScoreIndex::first_zero(const ChooseContext& ctx,
                                 std::uint64_t& accesses) {
  for (auto it = zeros_.begin(); it != zeros_.end();) {
    ++accesses;
    auto [seq, s] = *it;
    if (!still_pooled(ctx.graph, s, seq)) {
      it = zeros_.erase(it);
      member_[s].zero = false;
      continue;
    }
    ++it;
    // Zero staleness is +inf, not 0: touched at this very clock.
    if (timeless_ || ctx.graph.storage(s).last_access < ctx.now) return s;
  }
  return kNoId;
}

StorageId ScoreIndex::latest_member(const ChooseContext& ctx,
                                    std::uint32_t id) {
  Members& members = buckets_[id].members;
  while (!members.empty()) {
    auto [seq, s] = *members.rbegin();
    if (still_pooled(ctx.graph, s, seq)) return s;
    remove_member(s, ctx.now);  // may free the bucket when it empties
    if (members.empty()) return kNoId;
  }
  return kNoId;
}

namespace {
double ulps_above(double x, int n) {
  // Adjacent non-negative finite doubles have adjacent bit patterns (from
  // 0 through the subnormals up to the largest finite value, then +inf).
  if (!std::signbit(x) && std::isfinite(x)) {
    const auto bits = std::bit_cast<std::uint64_t>(x) + n;
    const double up = std::bit_cast<double>(bits);
    return std::isnan(up) ? std::numeric_limits<double>::infinity() : up;
  }
  for (int i = 0; i < n; ++i) {
    x = std::nextafter(x, std::numeric_limits<double>::infinity());
  }
  return x;
}
}  // namespace

StorageId ScoreIndex::walk(const ChooseContext& ctx, std::uint64_t& accesses) {
  // Note [Exact victim from an index]: pop in exact order while a rounded
  // score could still tie or beat the best one.
  StorageId best = kNoId;
  double best_score = std::numeric_limits<double>::infinity();
  double stop_above = best_score;
  std::uint64_t best_seq = 0;
  popped_.clear();
  for (;;) {
    std::int32_t top = tournament_.winner(ctx.now);
    if (top == KineticTournament::kNone) break;
    ++accesses;
    std::uint32_t id = static_cast<std::uint32_t>(top);
    StorageId s = latest_member(ctx, id);
    if (s == kNoId) continue;  // the bucket held only stale entries
    double sc = score_(buckets_[id].line, ctx.now);
    // The largest key is 0 (staleness 0): every other one is too.
    if (std::isinf(sc) || sc > stop_above) break;
    std::uint64_t seq = member_[s].seq;
    if (best == kNoId || sc < best_score ||
        (sc == best_score && seq > best_seq)) {
      best = s;
      best_score = sc;
      best_seq = seq;
      stop_above = ulps_above(best_score, 8);
    }
    // The entry next in exact order decides whether to go on: when it is
    // too far above, stop without popping (no path updates to undo).
    std::int32_t next = tournament_.runner_up(ctx.now);
    if (next == KineticTournament::kNone) break;
    double next_sc = score_(tournament_.line(next), ctx.now);
    if (std::isinf(next_sc) || next_sc > stop_above) break;
    tournament_.erase(id, ctx.now);
    popped_.push_back(id);
  }
  for (std::uint32_t id : popped_) {
    tournament_.set(id, buckets_[id].line, ctx.now);
  }
  return best;
}

}  // namespace dtr
