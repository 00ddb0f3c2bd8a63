#include "dtr/report/plot.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "dtr/core/error.h"
#include "dtr/report/gnuplot.h"
#include "dtr/trace/output_file.h"

namespace dtr::report {

namespace {

namespace fs = std::filesystem;

// The script holds no name or title: they arrive as ARG1 (the PNG), ARG2
// (the data) and ARG3 (the title), and each heuristic's name is the header
// line of its data block, so whatever they contain is only ever text.
constexpr const char* kScriptHead =
    "# Overhead against budget, one curve per heuristic (written by dtr).\n"
    "# Run: gnuplot -c THIS.gp OUTPUT.png DATA.dat 'TITLE'\n"
    "set terminal pngcairo size 900,600 font 'DejaVu Sans,11' noenhanced\n"
    "set output ARG1\n"
    "set title ARG3\n"
    "set xlabel 'budget / baseline peak memory'\n"
    "set ylabel 'compute overhead (x)'\n"
    "set xrange [1.02:0]\n"
    "set grid\n"
    "set key top left autotitle columnheader\n";

struct Shares {
  double constants = 0;   ///< of the baseline peak
  double bottleneck = 0;  ///< the largest single op's working set
};

Shares baseline_shares(const std::vector<sim::SimResult>& results) {
  Shares s;
  for (const auto& r : results) {
    if (r.baseline.peak_bytes > 0) {
      s.constants =
          double(r.baseline.constant_bytes) / double(r.baseline.peak_bytes);
      s.bottleneck =
          double(r.baseline.bottleneck_bytes) / double(r.baseline.peak_bytes);
    }
  }
  return s;
}

// A block's header line is a quoted name; a quote or line break in it
// would end the string early, so they are dropped.
std::string header_name(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c != '"' && c != '\n' && c != '\r') out += c;
  }
  return out + "\"";
}

// One block per heuristic: its name, then (ratio, overhead) of the runs
// that trained, by ratio. Returns the number of blocks.
std::size_t write_data(const std::vector<sim::SimResult>& results,
                       const std::string& path) {
  std::map<std::string, std::vector<const sim::SimResult*>> by_heuristic;
  for (const auto& r : results) by_heuristic[r.heuristic].push_back(&r);
  trace::AtomicOutput out(path);
  std::ostream& d = out.stream();
  for (auto& [name, rows] : by_heuristic) {
    std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) {
      return a->budget_ratio < b->budget_ratio;
    });
    d << header_name(name) << "\n";
    for (const sim::SimResult* r : rows) {
      if (r->status == sim::SimStatus::kOk) {
        d << r->budget_ratio << ' ' << r->overhead << '\n';
      }
    }
    d << "\n\n";
  }
  out.commit();
  return by_heuristic.size();
}

std::string script(const PlotRequest& request, const Shares& s,
                   std::size_t blocks) {
  std::ostringstream g;
  g << kScriptHead;
  // An unbounded thrash limit leaves the top of the axis to the data.
  if (std::isfinite(request.thrash_limit)) {
    g << "set yrange [0.98:" << request.thrash_limit + 0.02 << "]\n";
  } else {
    g << "set yrange [0.98:*]\n";
  }
  // The paper's shading: constants, then beside them the largest single
  // op's working set; no budget below both can work.
  g << "set object 1 rect from " << s.constants
    << ", graph 0 to 0, graph 1 fc rgb '#000000' fs transparent solid 0.25 "
       "noborder\n"
    << "set label 1 'constants' at " << s.constants / 2
    << ", graph 0.95 center font ',9'\n"
    << "set object 2 rect from " << s.constants + s.bottleneck
    << ", graph 0 to " << s.constants
    << ", graph 1 fc rgb '#808080' fs transparent solid 0.15 noborder\n"
    << "set label 2 'largest op' at " << s.constants + s.bottleneck / 2
    << ", graph 0.90 center font ',9'\n";
  if (blocks == 0) {
    g << "plot 1/0 notitle\n";
  } else {
    g << "plot for [i=0:" << blocks - 1
      << "] ARG2 index i using 1:2 with linespoints lw 2 pt (i % 12) + 1\n";
  }
  return g.str();
}

bool drawn(const fs::path& png) {
  std::error_code ec;
  return fs::is_regular_file(png, ec) && fs::file_size(png, ec) > 0 && !ec;
}

}  // namespace

bool plot_overhead_curves(const PlotRequest& request, std::string* error) {
  const fs::path png(request.png_path);
  const fs::path dat = fs::path(png).replace_extension(".dat");
  const fs::path gp = fs::path(png).replace_extension(".gp");
  const std::size_t blocks = write_data(request.results, dat.string());
  trace::write_output(
      gp.string(), script(request, baseline_shares(request.results), blocks));

  // gnuplot draws under a temporary name, renamed onto the PNG once whole.
  const fs::path part =
      png.parent_path() /
      ("." + png.filename().string() + ".part-" + std::to_string(::getpid()));
  GnuplotOutcome outcome;
  try {
    outcome =
        run_gnuplot(gp.string(), {part.string(), dat.string(), request.title});
  } catch (const Error& e) {
    std::remove(part.c_str());
    throw Error(std::string(e.what()) + ": " + png.string() + " not drawn");
  }
  if (outcome == GnuplotOutcome::kNotInstalled) {
    if (error) {
      *error = "gnuplot not found, " + png.string() +
               " not drawn (its data: " + dat.string() +
               "); install it with `apt-get install -y gnuplot-nox`";
    }
    return false;
  }
  if (!drawn(part)) {
    std::remove(part.c_str());
    throw Error("[plot] gnuplot did not write " + png.string());
  }
  std::error_code ec;
  fs::rename(part, png, ec);
  if (ec) {
    std::remove(part.c_str());
    throw Error("[plot] cannot write " + png.string() + ": " + ec.message());
  }
  return true;
}

}  // namespace dtr::report
