#include "dtr/report/gnuplot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "dtr/core/error.h"

extern char** environ;

namespace dtr::report {

namespace {

// posix_spawn's file actions, released on every path.
class SpawnActions {
 public:
  SpawnActions() { posix_spawn_file_actions_init(&actions_); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

GnuplotOutcome run_gnuplot(const std::string& script,
                           const std::vector<std::string>& args) {
  std::vector<std::string> words = {"gnuplot", "-c", script};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  SpawnActions actions;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    posix_spawn_file_actions_addopen(actions.get(), fd, "/dev/null", O_WRONLY,
                                     0);
  }
  pid_t pid = 0;
  int err = posix_spawnp(&pid, "gnuplot", actions.get(), nullptr, argv.data(),
                         environ);
  if (err == ENOENT) return GnuplotOutcome::kNotInstalled;
  if (err != 0) {
    throw Error("[plot] cannot start gnuplot for " + script + ": " +
                std::strerror(err));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw Error("[plot] lost gnuplot for " + script + ": " +
                  std::strerror(errno));
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error("[plot] gnuplot failed on " + script + " (" +
                describe_exit(status) + ")");
  }
  return GnuplotOutcome::kRan;
}

}  // namespace dtr::report
