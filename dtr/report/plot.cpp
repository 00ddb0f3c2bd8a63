#include "dtr/report/plot.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "dtr/core/error.h"
#include "dtr/trace/output_file.h"

namespace dtr::report {

namespace {

std::string quote_gnuplot(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string quote_shell(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

bool plot_overhead_curves(const PlotRequest& request, std::string* error) {
  namespace fs = std::filesystem;
  fs::path png(request.png_path);
  fs::path dat = fs::path(png).replace_extension(".dat");
  fs::path gp = fs::path(png).replace_extension(".gp");

  // One gnuplot data block per heuristic, successful runs only, by ratio.
  std::map<std::string, std::vector<const sim::SimResult*>> by_heuristic;
  double constant_share = 0, bottleneck_share = 0;
  for (const auto& r : request.results) {
    by_heuristic[r.heuristic].push_back(&r);
    if (r.baseline.peak_bytes > 0) {
      constant_share =
          double(r.baseline.constant_bytes) / double(r.baseline.peak_bytes);
      bottleneck_share =
          double(r.baseline.bottleneck_bytes) / double(r.baseline.peak_bytes);
    }
  }
  std::ofstream d(dat);
  std::vector<std::string> names;
  for (auto& [name, rows] : by_heuristic) {
    std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) {
      return a->budget_ratio < b->budget_ratio;
    });
    d << "# " << name << "\n";
    for (const sim::SimResult* r : rows) {
      if (r->status == sim::SimStatus::kOk) {
        d << r->budget_ratio << ' ' << r->overhead << '\n';
      }
    }
    d << "\n\n";
    names.push_back(name);
  }
  trace::close_output(d, dat.string());

  std::ofstream g(gp);
  g << "set terminal pngcairo size 900,600 font 'DejaVu Sans,11'\n"
    << "set output " << quote_gnuplot(png.string()) << "\n"
    << "set title " << quote_gnuplot(request.title) << "\n"
    << "set xlabel 'budget / baseline peak memory'\n"
    << "set ylabel 'compute overhead (x)'\n"
    << "set xrange [1.02:0]\n"
    << "set yrange [0.98:" << request.thrash_limit + 0.02 << "]\n"
    << "set grid\n"
    << "set key top left\n"
    << "set object 1 rect from " << constant_share
    << ", graph 0 to 0, graph 1 fc rgb '#000000' fs transparent solid 0.25 "
       "noborder\n"
    << "set label 1 'constants' at " << constant_share / 2
    << ", graph 0.95 center font ',9'\n"
    // The paper's gray band: constants plus the largest single op's
    // working set, below which no heuristic can run.
    << "set object 2 rect from " << constant_share + bottleneck_share
    << ", graph 0 to " << constant_share
    << ", graph 1 fc rgb '#808080' fs transparent solid 0.15 noborder\n"
    << "set label 2 'largest op' at " << constant_share + bottleneck_share / 2
    << ", graph 0.90 center font ',9'\n";
  if (names.empty()) {
    g << "plot 1/0 notitle\n";
  } else {
    g << "plot ";
    for (std::size_t i = 0; i < names.size(); ++i) {
      g << (i ? ", " : "") << quote_gnuplot(dat.string()) << " index " << i
        << " using 1:2 with linespoints lw 2 pt " << (i % 12) + 1 << " title "
        << quote_gnuplot(names[i]);
    }
    g << "\n";
  }
  trace::close_output(g, gp.string());

  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    if (error) {
      *error = "gnuplot not found, " + png.string() +
               " not drawn (its data: " + dat.string() +
               "); install it with `apt-get install -y gnuplot-nox`";
    }
    return false;
  }
  std::string command = "gnuplot " + quote_shell(gp.string()) + " 2>/dev/null";
  int status = std::system(command.c_str());
  std::error_code ec;
  bool drawn = status == 0 && fs::is_regular_file(png, ec) &&
               fs::file_size(png, ec) > 0 && !ec;
  if (!drawn) {
    throw Error("[plot] gnuplot did not write " + png.string() + " (exit " +
                std::to_string(status) + "; run `gnuplot " + gp.string() +
                "` to see why)");
  }
  return true;
}

}  // namespace dtr::report
