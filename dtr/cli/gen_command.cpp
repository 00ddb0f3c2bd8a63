// `dtr gen MODEL -o FILE`: write a built-in model's training trace.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include "dtr/cli/commands.h"
#include "dtr/cli/validators.h"
#include "dtr/core/error.h"
#include "dtr/models/model_registry.h"
#include "dtr/trace/output_file.h"
#include "dtr/trace/trace_writer.h"

namespace dtr::cli {

namespace {
struct GenOptions {
  std::string model;
  models::ModelOptions options;
  std::string out = "-";
};

void run(const GenOptions& o) {
  if (o.out == "-") {
    trace::TraceWriter w(std::cout);
    models::build_model(o.model, o.options, w);
    return;
  }
  trace::AtomicOutput f(o.out);
  if (!f.stream()) throw InvalidArgument("[gen] cannot write " + o.out);
  trace::TraceWriter w(f.stream());
  models::build_model(o.model, o.options, w);
  f.commit();  // a trace that was not written is an error
  std::fprintf(stderr, "wrote %zu lines to %s\n", w.lines(), o.out.c_str());
}
}  // namespace

void add_gen_command(CLI::App& app) {
  auto o = std::make_shared<GenOptions>();
  std::string list;
  for (const auto& m : models::model_names()) {
    list += "\n  " + models::describe_model(m);
  }
  CLI::App* sub = app.add_subcommand(
      "gen", "Write a built-in model's training trace (paper's log format)");
  sub->footer("models (resnet32 is accepted for resnet):" + list);
  sub->add_option("model", o->model, "model name")->required();
  // The models check their own upper limits and name them.
  const auto size = integer_in(0, std::numeric_limits<int>::max());
  sub->add_option("--batch", o->options.batch, "batch size (0: default)")
      ->transform(size);
  sub->add_option("--depth", o->options.depth,
                  "layers / sequence length / tree depth (0: default)")
      ->transform(size);
  sub->add_option("--width", o->options.width, "channels or hidden size")
      ->transform(size);
  sub->add_option("--seed", o->options.seed, "seed (tree shapes, jitter)")
      ->transform(integer_in<std::uint64_t>(
          0, std::numeric_limits<std::uint64_t>::max()));
  sub->add_option("-o,--out", o->out, "output file (default: stdout)");
  sub->callback([o] { run(*o); });
}

}  // namespace dtr::cli
