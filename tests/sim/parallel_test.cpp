// Tests of parallel_for (dtr/sim/parallel.h): every index runs once, the
// first error comes back, and a worker thread that cannot be started is an
// error instead of std::terminate on a joinable thread.
#include "dtr/sim/parallel.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "dtr/core/error.h"

namespace dtr::sim {
namespace {

TEST(ParallelForTest, RunsEveryIndexOnce) {
  std::vector<std::atomic<int>> seen(1000);
  parallel_for(seen.size(), 4, [&](std::size_t i) { ++seen[i]; });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
}

TEST(ParallelForTest, RethrowsTheWorkersError) {
  EXPECT_THROW(parallel_for(100, 3,
                            [](std::size_t i) {
                              if (i == 42) throw std::runtime_error("42");
                            }),
               std::runtime_error);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DTR_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define DTR_UNDER_ASAN 1
#endif

TEST(ParallelForTest, AThreadThatCannotStartIsAnError) {
#ifdef DTR_UNDER_ASAN
  GTEST_SKIP() << "ASan's own mappings do not fit under an address limit";
#endif
  // In a child: an address-space limit leaves no room for 500 thread
  // stacks. Exit 0: dtr::Error; 1: no error at all; a signal: terminate.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit limit {};
    ::getrlimit(RLIMIT_AS, &limit);
    limit.rlim_cur = std::size_t{1} << 30;  // 1 GiB: ~120 stacks of 8 MiB
    ::setrlimit(RLIMIT_AS, &limit);
    try {
      parallel_for(500, 500, [](std::size_t) {});
    } catch (const Error& e) {
      bool names_it =
          std::string(e.what()).find("--threads") != std::string::npos;
      ::_exit(names_it ? 0 : 2);
    }
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status))
      << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace dtr::sim
