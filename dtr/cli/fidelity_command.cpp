// `dtr fidelity`: our simulator against the authors' on the shared traces;
// writes the fidelity and speed tables published in docs/.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "dtr/cli/commands.h"
#include "dtr/cli/validators.h"
#include "dtr/core/error.h"
#include "dtr/report/fidelity.h"
#include "dtr/report/fidelity_markdown.h"
#include "dtr/sim/parallel.h"
#include "dtr/trace/output_file.h"

namespace dtr::cli {

namespace {
struct FidelityOptions {
  std::string reference = "../shared/reference/simrd-sweep.csv";
  std::string traces = "../shared/traces";
  double tolerance = 0.02;
  std::optional<int> threads;  ///< unset: every core
  int repeats = 1;
  std::string markdown;
  std::string speed_markdown;
};

void run(const FidelityOptions& o) {
  const std::pair<const std::string&, const char*> outputs[] = {
      {o.markdown, "--markdown"}, {o.speed_markdown, "--speed-markdown"}};
  for (const auto& [out, option] : outputs) {
    if (!out.empty())
      trace::refuse_overwriting_inputs(out, {o.reference}, option);
  }
  int threads = o.threads.value_or(sim::default_threads());
  auto rows = report::read_reference_csv(o.reference);
  auto cells =
      report::run_fidelity(rows, o.traces, o.tolerance, threads, o.repeats);
  const report::FidelitySource source{o.reference, o.traces, o.tolerance,
                                      o.repeats};
  std::string fid = report::fidelity_markdown(cells, source);
  std::string speed = report::speed_markdown(cells, source, threads);
  if (!o.markdown.empty()) trace::write_output(o.markdown, fid);
  if (!o.speed_markdown.empty()) trace::write_output(o.speed_markdown, speed);
  std::size_t agree = 0;
  for (const auto& c : cells) agree += c.agrees;
  std::printf("%zu of %zu cells agree (%.1f%%)\n", agree, cells.size(),
              100.0 * agree / std::max<std::size_t>(1, cells.size()));
  std::printf("%s", speed.substr(speed.find("| heuristic | median")).c_str());
}
}  // namespace

void add_fidelity_command(CLI::App& app) {
  auto o = std::make_shared<FidelityOptions>();
  CLI::App* sub = app.add_subcommand(
      "fidelity",
      "Compare with the authors' simulator (reference CSV) on the shared "
      "traces; print agreement and speed, optionally as markdown");
  sub->add_option("--reference", o->reference, "reference CSV");
  sub->add_option("--traces", o->traces, "directory holding the traces");
  sub->add_option("--tolerance", o->tolerance,
                  "relative overhead tolerance (default 0.02)")
      ->check(real_in(0, std::numeric_limits<double>::max()));
  sub->add_option("--threads", o->threads, "worker threads (default: cores)")
      ->transform(integer_in(1, kMaxThreads));
  sub->add_option("--repeats", o->repeats,
                  "simulate each cell N times and keep the fastest run for "
                  "the speed figures (default 1)")
      ->transform(integer_in(1, 1000));
  sub->add_option("--markdown", o->markdown, "write the fidelity table here");
  sub->add_option("--speed-markdown", o->speed_markdown,
                  "write the speed table here");
  sub->callback([o] { run(*o); });
}

}  // namespace dtr::cli
