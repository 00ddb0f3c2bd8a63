#include "dtr/core/heuristics/score_index.h"

#include <cmath>
#include <limits>

namespace dtr {

void ScoreIndex::clear() {
  tournament_.clear();
  entries_.clear();
  slot_of_.clear();
  free_slots_.clear();
  zeros_.clear();
}

void ScoreIndex::set(const Graph& g, StorageId s, std::int64_t cost_ns,
                     std::int64_t now) {
  erase(s, now);
  const Storage& st = g.storage(s);
  if (st.bytes <= 0) return;  // +inf at every clock: never chosen but last
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(entries_.size());
    entries_.emplace_back();
  }
  if (slot_of_.size() <= s) slot_of_.resize(s + 1, kNoId);
  slot_of_[s] = slot;
  Entry& e = entries_[slot];
  e.storage = s;
  e.seq = st.pool_seq;
  e.line = {cost_ns, st.bytes, st.last_access};
  e.zero = cost_ns == 0;
  if (e.zero) {
    zeros_.emplace(e.seq, slot);
  } else {
    tournament_.set(slot, e.line, now);
  }
}

void ScoreIndex::erase(StorageId s, std::int64_t now) {
  if (s < slot_of_.size() && slot_of_[s] != kNoId) drop(slot_of_[s], now);
}

void ScoreIndex::drop(std::uint32_t slot, std::int64_t now) {
  Entry& e = entries_[slot];
  if (e.zero) {
    zeros_.erase({e.seq, slot});
  } else {
    tournament_.erase(slot, now);
  }
  slot_of_[e.storage] = kNoId;
  e.storage = kNoId;
  free_slots_.push_back(slot);
}

bool ScoreIndex::still_pooled(const Graph& g, std::uint32_t slot) const {
  const Entry& e = entries_[slot];
  const Storage& st = g.storage(e.storage);
  return st.pool_slot != kNoId && st.pool_seq == e.seq;
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
    std::uint32_t slot = it->second;
    ++it;  // drop() erases only the current element
    if (!still_pooled(ctx.graph, slot)) {
      drop(slot, ctx.now);
      continue;
    }
    // Zero staleness is +inf, not 0: touched at this very clock.
    if (entries_[slot].line.last_access < ctx.now) {
      return entries_[slot].storage;
    }
  }
  return kNoId;
}

namespace {
double ulps_above(double x, int n) {
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
    std::uint32_t slot = static_cast<std::uint32_t>(top);
    if (!still_pooled(ctx.graph, slot)) {
      drop(slot, ctx.now);
      continue;
    }
    const Entry& e = entries_[slot];
    double sc = score_(e.line, ctx.now);
    // The largest key is 0 (staleness 0): every other one is too.
    if (std::isinf(sc) || sc > stop_above) break;
    if (best == kNoId || sc < best_score ||
        (sc == best_score && e.seq > best_seq)) {
      best = e.storage;
      best_score = sc;
      best_seq = e.seq;
      stop_above = ulps_above(best_score, 8);
    }
    tournament_.erase(slot, ctx.now);
    popped_.push_back(slot);
  }
  for (std::uint32_t slot : popped_) {
    tournament_.set(slot, entries_[slot].line, ctx.now);
  }
  return best;
}

}  // namespace dtr
