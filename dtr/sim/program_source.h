#pragma once
/// Where a program comes from: a trace file, or a built-in model written on
/// the fly ("model:resnet", "model:treelstm?seed=3&depth=5").
#include <string>
#include <vector>

#include "dtr/trace/program.h"

namespace dtr::sim {

struct NamedProgram {
  std::string name;  ///< short name for tables and plots (file stem / model)
  trace::Program program;
};

/// Loads one program. `spec` is a path, or "model:NAME[?key=value&...]"
/// with keys batch, depth, width, seed. Throws dtr::Error on bad input.
NamedProgram load_program(const std::string& spec);

/// Expands command-line trace arguments: each is a trace file, a built-in
/// model spec, or a manifest JSON ({"models": [{"name", "log"}]}, logs
/// relative to the manifest). No argument at all means every built-in model.
std::vector<std::string> expand_program_specs(
    const std::vector<std::string>& args);

/// Gives programs that share a name (a/net.log and b/net.log) their paths
/// without the extension as names ("a/net", "b/net"), so that tables and
/// plots never merge two traces. Throws dtr::InvalidArgument if names still
/// clash (one trace given twice). `specs[i]` is what `programs[i]` was
/// loaded from.
void make_names_unique(std::vector<NamedProgram>& programs,
                       const std::vector<std::string>& specs);

}  // namespace dtr::sim
