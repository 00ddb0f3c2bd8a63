#include "dtr/sim/trace_reader.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace dtr::sim {

namespace {

using json = nlohmann::json;
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50;

// Note [Trace semantics]
// The reader mirrors the reference simulator's parser: CALL results get one
// reference each; COPY adds a reference to the source's value (a new name for
// it); RELEASE drops one; MUTATE is rewritten as copy-on-write, a pure op
// from all its arguments to a fresh value per mutated argument (the size of
// that argument's storage), after which the mutated names point at the new
// values and the old ones lose a reference; COPY_FROM repoints DST at SRC's
// value. At the end every name whose value is still referenced is pinned, in
// the order names first appeared.
class Reader {
 public:
  Reader(std::string source, const TraceReadOptions& options)
      : source_(std::move(source)), options_(options) {
    program_.source = source_;
  }

  Program read(std::istream& in) {
    std::string line;
    while (std::getline(in, line)) lines_.push_back(std::move(line));
    if (in.bad()) fail(lines_.size(), "read error");
    std::size_t begin = 0;
    if (options_.skip_to_start) {
      for (std::size_t i = 0; i < lines_.size(); ++i) {
        if (lines_[i].find("START") == std::string::npos) continue;
        json j = parse(i);
        if (peek_string(j, "INSTRUCTION") == "ANNOTATE" &&
            peek_string(j, "ANNOTATION") == "START") {
          begin = i + 1;
          break;
        }
      }
    }
    for (pos_ = begin; pos_ < lines_.size();) step();
    if (program_.ops.empty()) {
      throw TraceError("[" + source_ + "] the trace holds no operations" +
                       (begin > 0 ? " after ANNOTATE START" : ""));
    }
    finish();
    return std::move(program_);
  }

 private:
  [[noreturn]] void fail(std::size_t index, const std::string& what) const {
    throw TraceError("[" + source_ + ":" + std::to_string(index + 1) + "] " +
                     what);
  }

  // A string field, or "" when it is missing or not a string (for peeking;
  // get_string reports those as errors).
  static std::string peek_string(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
  }

  json parse(std::size_t index) const {
    json j = json::parse(lines_[index], nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) fail(index, "not valid JSON: " + excerpt(index));
    if (!j.is_object()) fail(index, "expected a JSON object");
    return j;
  }

  // The start of a line, printable characters only (it may be binary).
  std::string excerpt(std::size_t index) const {
    const std::string& l = lines_[index];
    std::string out;
    for (std::size_t i = 0; i < l.size() && i < 60; ++i) {
      unsigned char c = static_cast<unsigned char>(l[i]);
      out += (c >= 32 && c < 127) ? static_cast<char>(c) : '?';
    }
    return "'" + out + (l.size() > 60 ? "...'" : "'");
  }

  std::string get_string(std::size_t index, const json& j,
                         const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) fail(index, std::string("missing field ") + key);
    if (!it->is_string()) fail(index, std::string("field ") + key +
                                          " must be a string");
    return it->get<std::string>();
  }

  // Numbers are strings in the paper's logs; plain JSON integers are
  // accepted too.
  std::int64_t get_int(std::size_t index, const json& j,
                       const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) fail(index, std::string("missing field ") + key);
    if (it->is_number_integer()) return it->get<std::int64_t>();
    if (it->is_string()) {
      const std::string& s = it->get_ref<const std::string&>();
      std::int64_t v = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) {
        return v;
      }
    }
    fail(index, std::string("field ") + key + " must be an integer, got " +
                    it->dump());
  }

  std::vector<std::string> get_names(std::size_t index, const json& j,
                                     const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) fail(index, std::string("missing field ") + key);
    if (!it->is_array()) fail(index, std::string("field ") + key +
                                         " must be a list of names");
    std::vector<std::string> out;
    for (const auto& x : *it) {
      if (!x.is_string()) fail(index, std::string("field ") + key +
                                          " must hold only strings");
      out.push_back(x.get<std::string>());
    }
    return out;
  }

  ValueId value_of(std::size_t index, const std::string& name,
                   const char* role) const {
    auto it = slot_of_.find(name);
    if (it == slot_of_.end()) {
      fail(index, std::string(role) + " '" + name + "' is not defined");
    }
    if (std::size_t released = slot_released_[it->second]) {
      fail(index, std::string(role) + " '" + name +
                      "' was released at line " + std::to_string(released));
    }
    return slot_value_[it->second];
  }

  void bind(std::size_t index, const std::string& name, ValueId v,
            bool must_be_new) {
    auto [it, inserted] =
        slot_of_.emplace(name, static_cast<std::uint32_t>(slot_value_.size()));
    if (inserted) {
      slot_value_.push_back(v);
      slot_released_.push_back(0);
    } else {
      if (must_be_new) fail(index, "name '" + name + "' is already defined");
      slot_value_[it->second] = v;
    }
  }

  ValueId new_value(std::int64_t storage_bytes) {
    refs_.push_back(1);
    storage_bytes_.push_back(storage_bytes);
    return program_.value_count++;
  }

  void add_ref(ValueId v) {
    ++refs_[v];
    program_.steps.push_back({StepKind::kRetain, v});
  }

  void drop_ref(std::size_t index, ValueId v, const std::string& name) {
    if (refs_[v] <= 0) {
      fail(index, "'" + name + "' released more often than referenced");
    }
    --refs_[v];
    program_.steps.push_back({StepKind::kRelease, v});
  }

  // Reads the MEMORY (and, for CALL, ALIAS) line that must follow.
  void skip_blank_lines() {
    while (pos_ < lines_.size() &&
           lines_[pos_].find_first_not_of(" \t\r") == std::string::npos) {
      ++pos_;
    }
  }

  std::int64_t expect_memory(const std::string& name) {
    skip_blank_lines();
    if (pos_ >= lines_.size()) {
      fail(lines_.size() - 1, "trace ends before the MEMORY line of '" +
                                  name + "'");
    }
    std::size_t index = pos_++;
    json j = parse(index);
    if (peek_string(j, "INSTRUCTION") != "MEMORY") {
      fail(index, "expected MEMORY for '" + name + "'");
    }
    if (get_string(index, j, "NAME") != name) {
      fail(index, "MEMORY names '" + get_string(index, j, "NAME") +
                      "', expected '" + name + "'");
    }
    std::int64_t bytes = get_int(index, j, "MEMORY");
    if (bytes < 0) fail(index, "negative MEMORY " + std::to_string(bytes));
    // Keeps every sum of sizes far from overflow (a petabyte per tensor).
    if (bytes > kMaxBytes) {
      fail(index, "MEMORY " + std::to_string(bytes) + " exceeds 2^50 bytes");
    }
    return bytes;
  }

  int expect_alias(const std::string& name, std::size_t arg_count) {
    skip_blank_lines();
    if (pos_ >= lines_.size()) {
      fail(lines_.size() - 1, "trace ends before the ALIAS line of '" +
                                  name + "'");
    }
    std::size_t index = pos_++;
    json j = parse(index);
    if (peek_string(j, "INSTRUCTION") != "ALIAS") {
      fail(index, "expected ALIAS for '" + name + "'");
    }
    if (get_string(index, j, "NAME") != name) {
      fail(index, "ALIAS names '" + get_string(index, j, "NAME") +
                      "', expected '" + name + "'");
    }
    std::int64_t alias = get_int(index, j, "ALIAS");
    if (alias < -1 || alias >= static_cast<std::int64_t>(arg_count)) {
      fail(index, "ALIAS " + std::to_string(alias) + " of '" + name +
                      "' is not an argument index (the call has " +
                      std::to_string(arg_count) + " arguments)");
    }
    return static_cast<int>(alias);
  }

  std::int64_t get_time(std::size_t index, const json& j) const {
    std::int64_t t = get_int(index, j, "TIME");
    if (t < 0) fail(index, "negative TIME " + std::to_string(t));
    return t;
  }

  void add_op(ProgramOp op) {
    op.first_output = program_.value_count;
    op.backward = in_backward_;
    program_.total_cost_ns += op.cost_ns;
    program_.steps.push_back(
        {StepKind::kCompute, static_cast<std::uint32_t>(program_.ops.size())});
    program_.ops.push_back(std::move(op));
  }

  void step() {
    std::size_t index = pos_++;
    if (lines_[index].find_first_not_of(" \t\r") == std::string::npos) return;
    json j = parse(index);
    std::string instr = get_string(index, j, "INSTRUCTION");
    if (instr == "CALL") {
      call(index, j);
    } else if (instr == "CONSTANT") {
      std::string name = get_string(index, j, "NAME");
      if (slot_of_.count(name)) fail(index, "name '" + name + "' is already defined");
      ProgramOp op;
      op.name = "constant";
      op.constant = true;
      op.outputs.push_back({expect_memory(name), -1});
      add_op(std::move(op));
      ++program_.constant_count;
      bind(index, name, new_value(program_.ops.back().outputs[0].bytes), true);
    } else if (instr == "MUTATE") {
      mutate(index, j);
    } else if (instr == "COPY") {
      std::string dst = get_string(index, j, "DST");
      ValueId v = value_of(index, get_string(index, j, "SRC"), "COPY source");
      bind(index, dst, v, /*must_be_new=*/true);
      add_ref(v);
    } else if (instr == "COPY_FROM") {
      std::string dst = get_string(index, j, "DST");
      ValueId old = value_of(index, dst, "COPY_FROM destination");
      ValueId v = value_of(index, get_string(index, j, "SRC"),
                           "COPY_FROM source");
      drop_ref(index, old, dst);
      add_ref(v);
      bind(index, dst, v, false);
    } else if (instr == "RELEASE") {
      std::string name = get_string(index, j, "NAME");
      auto it = slot_of_.find(name);
      if (it == slot_of_.end()) {
        if (!options_.ignore_undefined_release) {
          fail(index, "RELEASE of undefined name '" + name + "'");
        }
        return;
      }
      if (std::size_t released = slot_released_[it->second]) {
        fail(index, "'" + name + "' is released twice (first at line " +
                        std::to_string(released) + ")");
      }
      drop_ref(index, slot_value_[it->second], name);
      slot_released_[it->second] = index + 1;
    } else if (instr == "ANNOTATE") {
      if (get_string(index, j, "ANNOTATION") == "BACKWARD") in_backward_ = true;
    } else if (instr == "PIN") {
      ValueId v = value_of(index, get_string(index, j, "NAME"), "PIN target");
      program_.steps.push_back({StepKind::kPin, v});
    } else if (instr == "MEMORY" || instr == "ALIAS") {
      fail(index, instr + " without a preceding CALL or CONSTANT");
    } else {
      fail(index, "unknown instruction '" + instr + "'");
    }
  }

  void call(std::size_t index, const json& j) {
    ProgramOp op;
    op.name = get_string(index, j, "NAME");
    op.cost_ns = get_time(index, j);
    std::vector<std::string> args = get_names(index, j, "ARGS");
    std::vector<std::string> results = get_names(index, j, "RESULT");
    if (results.empty()) fail(index, "CALL '" + op.name + "' has no RESULT");
    for (const auto& a : args) op.inputs.push_back(value_of(index, a, "argument"));
    if (op.name.find("backward") != std::string::npos) in_backward_ = true;
    std::vector<std::int64_t> storage_bytes;
    for (const auto& r : results) {
      std::int64_t bytes = expect_memory(r);
      int alias = expect_alias(r, args.size());
      // An alias logs its base storage's size; it owns no bytes itself.
      op.outputs.push_back({alias >= 0 ? 0 : bytes, alias});
      storage_bytes.push_back(
          alias >= 0 ? storage_bytes_[op.inputs[alias]] : bytes);
    }
    add_op(std::move(op));
    for (std::size_t i = 0; i < results.size(); ++i) {
      bind(index, results[i], new_value(storage_bytes[i]), true);
    }
  }

  void mutate(std::size_t index, const json& j) {
    ProgramOp op;
    op.name = get_string(index, j, "NAME");
    op.cost_ns = get_time(index, j);
    std::vector<std::string> args = get_names(index, j, "ARGS");
    for (const auto& a : args) op.inputs.push_back(value_of(index, a, "argument"));
    auto it = j.find("MUTATE");
    if (it == j.end() || !it->is_array() || it->empty()) {
      fail(index, "MUTATE needs a non-empty list of argument indices");
    }
    std::vector<std::size_t> mutated;
    for (const auto& m : *it) {
      if (!m.is_number_integer() || m.get<std::int64_t>() < 0 ||
          m.get<std::int64_t>() >= static_cast<std::int64_t>(args.size())) {
        fail(index, "MUTATE index " + m.dump() + " is not an argument index");
      }
      std::size_t k = m.get<std::size_t>();
      if (std::find(mutated.begin(), mutated.end(), k) != mutated.end()) {
        fail(index, "MUTATE index " + std::to_string(k) + " is repeated");
      }
      mutated.push_back(k);
    }
    if (op.name.find("backward") != std::string::npos) in_backward_ = true;
    for (std::size_t m : mutated) {
      op.outputs.push_back({storage_bytes_[op.inputs[m]], -1});
    }
    std::vector<ValueId> old_values;
    for (std::size_t m : mutated) old_values.push_back(op.inputs[m]);
    add_op(std::move(op));
    for (std::size_t k = 0; k < mutated.size(); ++k) {
      const std::string& name = args[mutated[k]];
      ValueId fresh = new_value(program_.ops.back().outputs[k].bytes);
      bind(index, name, fresh, false);
      drop_ref(index, old_values[k], name);
    }
  }

  void finish() {
    // The output condition: every value still referenced must be resident
    // at the end (the reference pins them in name order).
    std::vector<bool> pinned(program_.value_count, false);
    for (std::uint32_t slot = 0; slot < slot_value_.size(); ++slot) {
      ValueId v = slot_value_[slot];
      if (refs_[v] > 0 && !pinned[v]) {
        pinned[v] = true;
        program_.steps.push_back({StepKind::kPin, v});
      }
    }
  }

  std::string source_;
  TraceReadOptions options_;
  std::vector<std::string> lines_;
  std::size_t pos_ = 0;
  bool in_backward_ = false;
  Program program_;
  std::unordered_map<std::string, std::uint32_t> slot_of_;
  std::vector<ValueId> slot_value_;   // per name slot, in first-use order
  std::vector<std::size_t> slot_released_;  // line of its RELEASE, or 0
  std::vector<std::int64_t> refs_;    // per value
  std::vector<std::int64_t> storage_bytes_;  // per value
};

}  // namespace

Program read_trace(std::istream& in, const std::string& source,
                   const TraceReadOptions& options) {
  return Reader(source, options).read(in);
}

Program read_trace_file(const std::string& path,
                        const TraceReadOptions& options) {
  std::ifstream in(path);
  if (!in) throw TraceError("[" + path + "] cannot open the trace file");
  return read_trace(in, path, options);
}

}  // namespace dtr::sim
