#pragma once
/// Reads the paper's trace format (docs/trace-format.md) into a Program,
/// with the reference simulator's conventions: everything before the first
/// `ANNOTATE START` is skipped (when there is one), MUTATE becomes a
/// copy-on-write op, and every value still referenced at the end is pinned.
/// The text is read line by line and never held: memory follows the
/// program, not the file. Malformed input throws TraceError naming the file,
/// line and problem, and so do absurd numbers: a size over 2^50 bytes,
/// storages adding up past 2^61 bytes, times adding up past 2^61 ns (the
/// runtime's limits, dtr/core/limits.h), or more than 2^32 - 1 values. A
/// line longer than kMaxTraceLineBytes (64 MiB; a trace's longest lines
/// are a few kB) and a read error end the read with an error naming the
/// line, so input without newlines (/dev/zero) fails fast in bounded
/// memory.
#include <cstddef>
#include <istream>
#include <string>

#include "dtr/core/error.h"
#include "dtr/trace/program.h"

namespace dtr::trace {

/// A trace that cannot be read: "[file:line] problem".
class TraceError : public Error {
 public:
  using Error::Error;
};

inline constexpr std::size_t kMaxTraceLineBytes = std::size_t{64} << 20;

struct TraceReadOptions {
  /// Skip everything before the first ANNOTATE START, if the trace has one.
  bool skip_to_start = true;
  /// RELEASE of a name never defined is ignored (the reference does so);
  /// when false it is an error.
  bool ignore_undefined_release = true;
};

Program read_trace(std::istream& in, const std::string& source,
                   const TraceReadOptions& options = {});
/// Opens and reads `path`; throws TraceError if it cannot be opened.
Program read_trace_file(const std::string& path,
                        const TraceReadOptions& options = {});

}  // namespace dtr::trace
