#include "dtr/core/heuristics/index/keyed_heuristic.h"

#include "dtr/core/error.h"

namespace dtr {

StorageId KeyedHeuristic::choose(const ChooseContext& ctx) {
  // The prototype's sampling and size filter select among a subset: scan.
  // The heap's fast scan is the scan itself.
  const ChoiceMode mode = choice_mode();
  if (ctx.sample_sqrt || ctx.min_bytes > 0 || mode == ChoiceMode::kScan ||
      mode == ChoiceMode::kFastScan || mode == ChoiceMode::kCheckFastScan) {
    return Heuristic::choose(ctx);
  }
  StorageId victim = choose_from_heap(ctx);
  if (choice_mode() == ChoiceMode::kCheck) {
    StorageId reference = Heuristic::choose(ctx);
    DTR_ASSERT(victim == reference, "[", name(), "] the heap chose storage ",
               victim, " but the scan chose ", reference, " at clock ",
               ctx.now);
  }
  return victim;
}

StorageId KeyedHeuristic::choose_from_heap(const ChooseContext& ctx) {
  const Graph& g = ctx.graph;
  if (!active_ || heap_.size() > 4 * ctx.pool.size() + 1024) {
    rebuild(g, ctx.pool);
  }
  while (!heap_.empty()) {
    ++accesses_;
    const Entry& top = heap_.top();
    const Storage& st = g.storage(top.storage);
    if (ctx.pool.contains(g, top.storage) && st.pool_seq == top.seq &&
        key(g, top.storage) == top.key) {
      return top.storage;  // evicting it makes this entry stale
    }
    heap_.pop();
  }
  return kNoId;
}

void KeyedHeuristic::rebuild(const Graph& g, const EvictionPool& pool) {
  active_ = true;
  std::vector<Entry> entries;
  entries.reserve(pool.size());
  for (StorageId s : pool.slots()) {
    if (s != kNoId) entries.push_back({key(g, s), g.storage(s).pool_seq, s});
  }
  heap_ = std::priority_queue<Entry, std::vector<Entry>, Later>(
      Later{}, std::move(entries));
}

}  // namespace dtr
