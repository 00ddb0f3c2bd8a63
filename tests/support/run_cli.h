#pragma once
// Runs the built `dtr` binary as a user would (path from the DTR_CLI_PATH
// compile definition), with stdout and stderr captured separately, for the
// tests of the command line.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#ifndef DTR_CLI_PATH
#error "DTR_CLI_PATH must name the built dtr binary"
#endif

namespace dtr::testing {

struct CliRun {
  int exit_code = -1;  ///< -1 when dtr did not exit normally
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// `s` as one word of shell text.
inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Runs `dtr ARGS` (shell text) in `dir`, which must exist; stdout and
/// stderr go to files there. With `stdout_to` (e.g. /dev/full) stdout goes
/// there instead and `out` stays empty; `env` (e.g. "PATH=/nonexistent")
/// is put in dtr's environment.
inline CliRun run_cli(const std::filesystem::path& dir, const std::string& args,
                      const std::string& stdout_to = "",
                      const std::string& env = "") {
  const std::filesystem::path out = dir / "stdout.txt";
  const std::filesystem::path err = dir / "stderr.txt";
  std::filesystem::remove(out);
  const std::string cmd = "cd " + quote(dir.string()) + " && " + env + " " +
                          quote(DTR_CLI_PATH) + " " + args + " >" +
                          quote(stdout_to.empty() ? out.string() : stdout_to) +
                          " 2>" + quote(err.string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace dtr::testing
