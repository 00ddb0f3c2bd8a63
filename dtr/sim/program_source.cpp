#include "dtr/sim/program_source.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dtr/core/error.h"
#include "dtr/models/model_registry.h"
#include "dtr/trace/trace_reader.h"
#include "dtr/trace/trace_writer.h"

namespace dtr::sim {

namespace {

constexpr std::string_view kModelPrefix = "model:";

int parse_option(const std::string& spec, const std::string& key,
                 const std::string& value) {
  try {
    std::size_t used = 0;
    long v = std::stol(value, &used);
    if (used == value.size() && v >= 0 && v <= (1L << 30)) {
      return static_cast<int>(v);
    }
  } catch (const std::exception&) {
  }
  throw InvalidArgument("[" + spec + "] option " + key +
                        " must be a non-negative integer, got '" + value + "'");
}

NamedProgram load_model(const std::string& spec) {
  std::string rest = spec.substr(kModelPrefix.size());
  std::string name = rest.substr(0, rest.find('?'));
  models::ModelOptions options;
  if (rest.find('?') != std::string::npos) {
    std::istringstream query(rest.substr(rest.find('?') + 1));
    std::string pair;
    while (std::getline(query, pair, '&')) {
      auto eq = pair.find('=');
      if (eq == std::string::npos) {
        throw InvalidArgument("[" + spec + "] expected key=value, got '" +
                              pair + "'");
      }
      std::string key = pair.substr(0, eq), value = pair.substr(eq + 1);
      int v = parse_option(spec, key, value);
      if (key == "batch") {
        options.batch = v;
      } else if (key == "depth") {
        options.depth = v;
      } else if (key == "width") {
        options.width = v;
      } else if (key == "seed") {
        options.seed = static_cast<std::uint64_t>(v);
      } else {
        throw InvalidArgument("[" + spec + "] unknown option '" + key +
                              "' (known: batch, depth, width, seed)");
      }
    }
  }
  std::stringstream text;
  trace::TraceWriter writer(text);
  models::build_model(name, options, writer);
  return {rest, trace::read_trace(text, spec)};
}

}  // namespace

NamedProgram load_program(const std::string& spec) {
  if (spec.rfind(kModelPrefix, 0) == 0) return load_model(spec);
  return {std::filesystem::path(spec).stem().string(),
          trace::read_trace_file(spec)};
}

std::vector<std::string> expand_program_specs(
    const std::vector<std::string>& args) {
  std::vector<std::string> specs;
  if (args.empty()) {
    for (const auto& m : models::model_names()) specs.push_back("model:" + m);
    return specs;
  }
  for (const auto& a : args) {
    if (std::filesystem::path(a).extension() != ".json") {
      specs.push_back(a);
      continue;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(a, ec)) {
      throw InvalidArgument("[" + a + "] is a directory, not a manifest");
    }
    std::ifstream in(a);
    if (!in) throw InvalidArgument("[" + a + "] cannot open the manifest");
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (in.bad()) throw InvalidArgument("[" + a + "] read error");
    if (j.is_discarded() || !j.is_object() || !j.contains("models") ||
        !j["models"].is_array()) {
      throw InvalidArgument("[" + a +
                            "] a manifest is a JSON object with a list "
                            "\"models\" of {\"log\": FILE}");
    }
    if (j["models"].empty()) {
      throw InvalidArgument("[" + a + "] the manifest lists no models");
    }
    auto dir = std::filesystem::path(a).parent_path();
    for (const auto& m : j["models"]) {
      if (!m.is_object() || !m.contains("log") || !m["log"].is_string()) {
        throw InvalidArgument("[" + a + "] every model needs a \"log\" file");
      }
      std::string log = m["log"].get<std::string>();
      if (log.empty()) {
        throw InvalidArgument("[" + a + "] a model's \"log\" is empty");
      }
      if (log.rfind(kModelPrefix, 0) == 0) {
        specs.push_back(log);
        continue;
      }
      std::string path = (dir / log).string();
      if (std::filesystem::is_directory(path, ec)) {
        throw InvalidArgument("[" + a + "] the log \"" + log + "\" (" + path +
                              ") is a directory, not a trace file");
      }
      specs.push_back(path);
    }
  }
  return specs;
}

void make_names_unique(std::vector<NamedProgram>& programs,
                       const std::vector<std::string>& specs) {
  std::map<std::string, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    by_name[programs[i].name].push_back(i);
  }
  for (const auto& [name, group] : by_name) {
    if (group.size() < 2) continue;
    for (std::size_t i : group) {
      std::filesystem::path p(specs[i]);
      programs[i].name = (p.parent_path() / p.stem()).generic_string();
    }
  }
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    auto [it, fresh] = seen.emplace(programs[i].name, i);
    if (!fresh) {
      throw InvalidArgument("[sweep] " + specs[it->second] + " and " +
                            specs[i] + " are the same program name (" +
                            programs[i].name + "): give each trace once");
    }
  }
}

}  // namespace dtr::sim
