#pragma once
/// Runs gnuplot on a script with string arguments, without a shell: the
/// arguments reach the script as its variables ARG1, ARG2, ... (gnuplot's
/// `-c`), which gnuplot treats as data. A file or trace name is never
/// part of a command line or of the script's text, so no name can run a
/// command (gnuplot runs a line that starts with `!` in the shell).
#include <string>
#include <vector>

namespace dtr::report {

enum class GnuplotOutcome { kRan, kNotInstalled };

/// Runs `gnuplot -c script args...` with its output discarded and waits.
/// Returns kNotInstalled if no gnuplot is on PATH; throws dtr::Error if it
/// cannot be started for another reason (too many open files, no process
/// slots) or does not exit 0, naming the script.
GnuplotOutcome run_gnuplot(const std::string& script,
                           const std::vector<std::string>& args);

}  // namespace dtr::report
