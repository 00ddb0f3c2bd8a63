#pragma once
/// Runs fn(i) for i in [0, n) on `threads` worker threads, handing out
/// indices in order; the first exception is rethrown after all workers end.
/// A worker thread that cannot be started throws dtr::Error.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dtr/core/error.h"

namespace dtr::sim {

template <typename F>
void parallel_for(std::size_t n, int threads, F&& fn) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = n;  // stop handing out work
      }
    }
  };
  // No more threads than work: an idle thread still costs a start and join.
  int count = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(std::max(1, threads)),
                            std::max<std::size_t>(1, n)));
  std::vector<std::thread> pool;
  try {
    for (int t = 1; t < count; ++t) pool.emplace_back(worker);
  } catch (const std::exception& e) {
    // A process or memory limit: the started workers finish what they took
    // and the caller learns why, instead of std::terminate on a joinable
    // thread.
    next = n;
    for (auto& t : pool) t.join();
    throw Error("cannot start worker thread " +
                std::to_string(pool.size() + 2) + " of " +
                std::to_string(count) + " (" + e.what() +
                "); ask for fewer with --threads");
  }
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

/// The number of worker threads to use by default (all cores).
inline int default_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace dtr::sim
