#include "dtr/core/heuristic_registry.h"

#include <pthread.h>

#include <algorithm>
#include <mutex>

#include "dtr/core/error.h"
#include "dtr/core/heuristics/dtr.h"
#include "dtr/core/heuristics/dtr_eq.h"
#include "dtr/core/heuristics/dtr_local.h"
#include "dtr/core/heuristics/lru.h"
#include "dtr/core/heuristics/msps.h"
#include "dtr/core/heuristics/random.h"
#include "dtr/core/heuristics/size.h"

namespace dtr {

namespace {

template <typename H>
HeuristicEntry entry(const char* name, const char* summary) {
  return {name, summary, true,
          [](std::uint64_t) { return std::make_unique<H>(); }};
}

// The paper's heuristics, in its order.
std::vector<HeuristicEntry> built_in() {
  std::vector<HeuristicEntry> out = {
      entry<DtrExactHeuristic>(
          "dtr",
          "the paper's h_DTR: cost of the evicted neighbourhood / (bytes x "
          "staleness)"),
      entry<DtrEqHeuristic>(
          "dtr-eq",
          "h_DTR with the evicted neighbourhood approximated by union-find"),
      entry<DtrLocalHeuristic>("dtr-local",
                               "cost / (bytes x staleness), no neighbourhood"),
      entry<MspsHeuristic>(
          "msps", "Capuchin's: compute of the evicted ancestors per byte"),
      entry<LruHeuristic>("lru", "least recently used first"),
      entry<SizeHeuristic>("size", "largest storage first"),
  };
  out.push_back({"random", "a uniformly random evictable storage (seeded)",
                 false, [](std::uint64_t seed) {
                   return std::make_unique<RandomHeuristic>(seed);
                 }});
  return out;
}

struct Registry {
  std::mutex mutex;
  std::vector<HeuristicEntry> entries = built_in();
};

Registry& registry();

// A child of fork() makes heuristics (a new context picks one): the lock
// must not be held by a thread the child does not have. Prepare handlers
// run in reverse order of registration, and the registry's is registered
// first (the LibTorch context makes a heuristic before it registers its
// own), so this lock is taken after the context's, never before it.
void lock_for_fork() {
  registry().mutex.lock();
}
void unlock_after_fork() {
  registry().mutex.unlock();
}

Registry& registry() {
  static auto* r = [] {
    auto* made = new Registry();  // never destroyed: used at exit too
    pthread_atfork(&lock_for_fork, &unlock_after_fork, &unlock_after_fork);
    return made;
  }();
  return *r;
}

}  // namespace

std::vector<HeuristicEntry> registered_heuristics() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.entries;
}

void register_heuristic(HeuristicEntry entry) {
  const std::string& n = entry.name;
  const bool bad_char = std::any_of(n.begin(), n.end(), [](char c) {
    return c == ',' || c == ' ' || c == '\t' || c == '\n';
  });
  if (n.empty() || bad_char || n == "auto" || n == "all") {
    throw InvalidArgument("[heuristic] cannot register '" + n +
                          "': a name is not empty, has no comma or space, "
                          "and is not 'auto' or 'all'");
  }
  if (!entry.make) {
    throw InvalidArgument("[heuristic] '" + n + "' has no factory");
  }
  // auto switches by comparing names, and a forked child rebuilds the
  // heuristic from its name().
  const std::unique_ptr<Heuristic> sample = entry.make(0);
  if (sample == nullptr || sample->name() != n) {
    throw InvalidArgument(
        "[heuristic] '" + n + "' makes a heuristic named '" +
        std::string(sample == nullptr ? "(none)" : sample->name()) +
        "': name() must return the registered name");
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const HeuristicEntry& e : r.entries) {
    if (e.name == n) {
      throw InvalidArgument("[heuristic] '" + n + "' is already registered");
    }
  }
  r.entries.push_back(std::move(entry));
}

std::string heuristic_list(bool auto_only) {
  std::string out;
  for (const std::string& name : heuristic_names(auto_only)) {
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

}  // namespace dtr
