#include "dtr/report/sweep_report.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include "dtr/core/error.h"
#include "dtr/report/plot.h"
#include "dtr/report/result_table.h"
#include "dtr/trace/output_file.h"

namespace dtr::report {

namespace {

// A file name for a program's plot: its name with anything but letters,
// digits, '.', '-' and '_' replaced by '_' (a name may hold a path, a
// model's query or a line break), made unique among `taken`.
std::string file_stem(const std::string& name, std::set<std::string>& taken) {
  std::string stem = name;
  for (char& ch : stem) {
    bool keep = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' ||
                ch == '-' || ch == '_';
    if (!keep) ch = '_';
  }
  std::string unique = stem;
  for (int n = 2; !taken.insert(unique).second; ++n) {
    unique = stem + "-" + std::to_string(n);
  }
  return unique;
}

}  // namespace

SweepFiles write_sweep(const sim::SweepOutput& out, const std::string& dir,
                       bool plots) {
  namespace fs = std::filesystem;
  SweepFiles written;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("[sweep] cannot create " + dir + ": " + ec.message());
  fs::path csv = fs::path(dir) / "results.csv";
  trace::refuse_overwriting_inputs(csv.string(), out.request.specs, "--out");
  trace::AtomicOutput f(csv.string());
  f.stream() << result_csv_header() << '\n';
  for (const auto& c : out.cells) {
    f.stream() << result_to_csv_row(c.trace, c.result) << '\n';
  }
  f.commit();
  written.files.push_back(csv.string());
  if (!plots) return written;
  std::set<std::string> stems;
  for (const auto& p : out.programs) {
    PlotRequest plot;
    plot.title = p.name + " (" + std::to_string(p.trace_ops) +
                 " ops): overhead vs budget";
    std::string stem = file_stem(p.name, stems);
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
