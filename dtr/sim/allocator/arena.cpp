#include "dtr/sim/allocator/arena.h"

#include <algorithm>
#include <cmath>

#include "dtr/core/error.h"

namespace dtr::sim {

Arena::Arena(std::int64_t capacity, bool check)
    : heap_(capacity, /*fixed=*/true), check_(check) {
  reserved_peak_ = heap_.reserved_bytes();
}

bool Arena::fits(std::int64_t bytes) const {
  return bytes == 0 || heap_.has_hole(bytes);
}

void Arena::after_change() {
  reserved_peak_ = std::max(reserved_peak_, heap_.reserved_bytes());
  if (check_) heap_.check_invariants();
}

std::int64_t Arena::place(std::int64_t bytes) {
  if (bytes == 0) return kNowhere;
  const AllocatorModel::Spot spot = heap_.place(bytes);
  failures_ += spot.within_capacity ? 0 : 1;
  return spot.addr;
}

void Arena::on_outputs_written(const Graph& graph,
                               std::span<const StorageId> fresh,
                               std::int64_t duplicate_bytes) {
  for (StorageId s : fresh) {
    if (s >= addr_of_.size()) addr_of_.resize(s + 1, kNowhere);
    DTR_ASSERT(addr_of_[s] == kNowhere, "storage ", s, " placed twice");
    addr_of_[s] = place(graph.storage(s).bytes);
    if (addr_of_[s] != kNowhere) owner_[addr_of_[s]] = s;
  }
  // Duplicate outputs of a replay: one block, gone again at once.
  const std::int64_t dup = place(duplicate_bytes);
  after_change();
  if (dup != kNowhere) heap_.release(dup);
}

void Arena::on_storage_freed(const Graph& /*graph*/, StorageId s) {
  DTR_ASSERT(s < addr_of_.size(), "storage ", s, " freed but never placed");
  if (addr_of_[s] != kNowhere) {
    heap_.release(addr_of_[s]);
    owner_.erase(addr_of_[s]);
    addr_of_[s] = kNowhere;
  }
  if (check_) heap_.check_invariants();
}

namespace {

// A window's cost: storages that must not be evicted first (their score is
// +infinity) count apart, so that finite costs still compare among windows
// that need some.
struct WindowCost {
  int infinite = 0;
  double sum = 0;
  bool operator<(const WindowCost& o) const {
    return infinite != o.infinite ? infinite < o.infinite : sum < o.sum;
  }
};

struct Slot {
  std::int64_t size = 0;
  StorageId storage = kNoId;  // kNoId: a free block
  double cost = 0;
};

}  // namespace

// Runs of adjacent blocks, each free or evictable; in each, for every last
// block the shortest window ending there that spans `bytes`.
bool Arena::choose_window(const Graph& /*graph*/, std::int64_t bytes,
                          const EvictionCost& cost,
                          std::vector<StorageId>& victims) {
  std::vector<Slot> run;
  std::vector<StorageId> chosen;
  bool found = false;
  WindowCost best;
  auto scan_run = [&] {
    std::size_t first = 0;
    std::int64_t span = 0;
    for (std::size_t last = 0; last < run.size(); ++last) {
      span += run[last].size;
      while (span - run[first].size >= bytes) span -= run[first++].size;
      if (span < bytes) continue;
      WindowCost c;
      for (std::size_t k = first; k <= last; ++k) {
        if (std::isinf(run[k].cost)) {
          ++c.infinite;
        } else {
          c.sum += run[k].cost;
        }
      }
      if (found && !(c < best)) continue;
      found = true;
      best = c;
      chosen.clear();
      for (std::size_t k = first; k <= last; ++k) {
        if (run[k].storage != kNoId) chosen.push_back(run[k].storage);
      }
    }
    run.clear();
  };
  for (const auto& [addr, block] : heap_.space().blocks()) {
    if (block.free) {
      run.push_back({block.size, kNoId, 0});
      continue;
    }
    const StorageId s = owner_.at(addr);
    const double c = cost(s);
    if (std::isnan(c)) {
      scan_run();  // not evictable: the run ends here
    } else {
      run.push_back({block.size, s, c});
    }
  }
  scan_run();
  victims.insert(victims.end(), chosen.begin(), chosen.end());
  return found;
}

}  // namespace dtr::sim
