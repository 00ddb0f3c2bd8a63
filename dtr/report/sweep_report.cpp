#include "dtr/report/sweep_report.h"

#include <filesystem>
#include <fstream>

#include "dtr/core/error.h"
#include "dtr/report/plot.h"
#include "dtr/report/result_table.h"
#include "dtr/trace/output_file.h"

namespace dtr::report {

SweepFiles write_sweep(const sim::SweepOutput& out, const std::string& dir,
                       bool plots) {
  namespace fs = std::filesystem;
  SweepFiles written;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("[sweep] cannot create " + dir + ": " + ec.message());
  fs::path csv = fs::path(dir) / "results.csv";
  std::ofstream f(csv);
  f << result_csv_header() << '\n';
  for (const auto& c : out.cells) {
    f << result_to_csv_row(c.trace, c.result) << '\n';
  }
  trace::close_output(f, csv.string());
  written.files.push_back(csv.string());
  if (!plots) return written;
  for (const auto& p : out.programs) {
    PlotRequest plot;
    plot.title = p.name + " (" + std::to_string(p.trace_ops) +
                 " ops): overhead vs budget";
    std::string stem = p.name;
    for (char& ch : stem) {
      if (ch == '/' || ch == '?' || ch == '&' || ch == '=' || ch == ' ')
        ch = '_';
    }
    plot.png_path = (fs::path(dir) / (stem + ".png")).string();
    plot.thrash_limit = out.request.thrash_limit;
    for (const auto& c : out.cells) {
      if (c.trace == p.name) plot.results.push_back(c.result);
    }
    std::string error;
    if (plot_overhead_curves(plot, &error)) {
      written.files.push_back(plot.png_path);
    } else {
      written.warnings.push_back(error);
    }
  }
  return written;
}

}  // namespace dtr::report
