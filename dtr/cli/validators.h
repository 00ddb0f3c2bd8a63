#pragma once
/// CLI11 validators for numeric options. CLI11's own conversion clamps an
/// out-of-range integer (9223372036854775808 becomes INT64_MAX), reads
/// "010" as octal, and its Range/PositiveNumber let NaN through; these
/// parse the text strictly, so a value is either exactly what was typed or
/// an error naming the option:
///
///   sub->add_option("--threads", o->threads)
///       ->transform(integer_in(1, 1024));
///   // dtr --threads 0  ->  "--threads: '0' is not an integer in [1, 1024]"
///
/// Header-only.
#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

namespace dtr::cli {

/// Largest --threads: more would only fail to start threads.
inline constexpr int kMaxThreads = 1024;

/// A decimal integer in [min, max]: no sign on unsigned types, no hex or
/// octal, no overflow. Rewrites the text canonically (so CLI11's base-0
/// conversion reads the same value, "010" as 10), so add it with
/// ->transform(), not ->check() (a check sees a copy of the text).
template <typename T>
CLI::Validator integer_in(T min, T max) {
  std::ostringstream range;
  range << "[" << +min << ", " << +max << "]";
  std::string bounds = range.str();
  return CLI::Validator(
      [min, max, bounds](std::string& text) -> std::string {
        T value{};
        const char* first = text.data();
        const char* last = text.data() + text.size();
        auto [end, ec] = std::from_chars(first, last, value);
        if (text.empty() || ec != std::errc() || end != last || value < min ||
            value > max) {
          return "'" + text + "' is not an integer in " + bounds;
        }
        text = std::to_string(value);
        return {};
      },
      "INT in " + bounds);
}

/// A finite number in [min, max], or in (min, max] when `min_exclusive`;
/// NaN, infinities and values that overflow a double are rejected.
inline CLI::Validator real_in(double min, double max,
                              bool min_exclusive = false) {
  std::ostringstream range;
  range << (min_exclusive ? "(" : "[") << min << ", ";
  if (max == std::numeric_limits<double>::max()) {
    range << "inf)";
  } else {
    range << max << "]";
  }
  std::string bounds = range.str();
  return CLI::Validator(
      [min, max, min_exclusive, bounds](std::string& text) -> std::string {
        double value = 0;
        const char* first = text.data();
        const char* last = text.data() + text.size();
        auto [end, ec] = std::from_chars(first, last, value);
        bool ok = !text.empty() && ec == std::errc() && end == last &&
                  std::isfinite(value) && value <= max &&
                  (min_exclusive ? value > min : value >= min);
        if (!ok) return "'" + text + "' is not a finite number in " + bounds;
        return {};
      },
      "FLOAT in " + bounds);
}

/// The budget options `dtr sim` and `dtr plan` share: --budget-ratio (a
/// fraction of the baseline peak, `ratio_help`) or --budget-bytes, not both.
inline void add_budget_options(CLI::App* sub, std::optional<double>& ratio,
                               std::optional<std::int64_t>& bytes,
                               const std::string& ratio_help) {
  auto* r = sub->add_option("--budget-ratio", ratio, ratio_help);
  r->check(real_in(0, std::numeric_limits<double>::max(),
                   /*min_exclusive=*/true));
  auto* b =
      sub->add_option("--budget-bytes", bytes, "budget in bytes, 0 to 2^63-1");
  b->transform(
      integer_in<std::int64_t>(0, std::numeric_limits<std::int64_t>::max()));
  r->excludes(b);
}

}  // namespace dtr::cli
