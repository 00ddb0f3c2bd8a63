#include "dtr/trace/trace_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "dtr/core/limits.h"
#include "dtr/trace/json_fields_impl.h"

namespace dtr::trace {

namespace {

using detail::fail_at;
using detail::json;
using detail::json_int;
using detail::json_names;
using detail::json_parse_line;
using detail::json_peek_string;
using detail::json_string;
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50;
constexpr std::uint32_t kMaxIds = std::numeric_limits<std::uint32_t>::max();

// The input failed (a read error, a line over the limit): unlike a bad
// line, this ends the read even while looking for a START.
struct ReadFailure : TraceError {
  using TraceError::TraceError;
};

// Thrown by next_line() when it meets the first ANNOTATE START while the
// reader is still looking for one (Note [Streaming the start]).
struct StartFound {};

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

  // Note [Streaming the start]
  // The text is read one line at a time and never kept, so memory follows
  // the program, not the file. Everything before the first ANNOTATE START
  // is skipped, which a single pass cannot know in advance: until a START
  // is seen the lines are read speculatively. next_line() checks each line
  // that mentions START and throws StartFound at a real one; read() then
  // forgets what it had read and goes on from there. An error in the
  // speculative part is held back and reported only if no START follows
  // (then that part was the trace).
  Program read(std::istream& in) {
    in_ = &in;
    looking_for_start_ = options_.skip_to_start;
    std::optional<TraceError> held;
    bool started = false;
    for (;;) {
      try {
        if (held) {
          while (next_line()) {
          }  // only looking for START now
        } else {
          while (next_line()) step();
        }
        break;
      } catch (const StartFound&) {
        restart();
        held.reset();
        started = true;
      } catch (const ReadFailure&) {
        throw;  // the input itself failed: nothing more can be read
      } catch (const TraceError& e) {
        if (!looking_for_start_) throw;
        held = e;
      }
    }
    if (held) throw *held;
    if (program_.ops.empty()) {
      throw TraceError("[" + source_ + "] the trace holds no operations" +
                       (started ? " after ANNOTATE START" : ""));
    }
    finish();
    return std::move(program_);
  }

 private:
  // Reads the next line into line_; false at the end of the input.
  bool next_line() {
    if (!read_line()) return false;
    ++line_number_;
    if (looking_for_start_ && line_.find("START") != std::string::npos) {
      json j = parse(line_number_);
      if (peek_string(j, "INSTRUCTION") == "ANNOTATE" &&
          peek_string(j, "ANNOTATION") == "START") {
        looking_for_start_ = false;
        throw StartFound{};
      }
    }
    return true;
  }

  // Reads up to the next newline into line_, at most kMaxTraceLineBytes;
  // false at the end of the input. A read error or an over-long line
  // throws ReadFailure naming the line being read.
  bool read_line() {
    line_.clear();
    std::streambuf* buf = in_->rdbuf();
    const std::size_t line = line_number_ + 1;
    try {
      for (;;) {
        int c = buf ? buf->sbumpc() : std::char_traits<char>::eof();
        if (c == std::char_traits<char>::eof()) return !line_.empty();
        if (c == '\n') return true;
        if (line_.size() == kMaxTraceLineBytes) {
          throw ReadFailure("[" + source_ + ":" + std::to_string(line) +
                            "] the line is longer than " +
                            std::to_string(kMaxTraceLineBytes >> 20) +
                            " MiB, the limit on one trace line (is this a "
                            "trace?)");
        }
        line_.push_back(static_cast<char>(c));
      }
    } catch (const std::ios_base::failure& e) {
      throw ReadFailure("[" + source_ + ":" + std::to_string(line) +
                        "] read error: " + e.code().message());
    } catch (const std::bad_alloc&) {
      throw ReadFailure("[" + source_ + ":" + std::to_string(line) +
                        "] out of memory reading the line");
    }
  }

  // Forgets everything read before the START line (not the line count).
  void restart() {
    program_ = Program{};
    program_.source = source_;
    in_backward_ = false;
    slot_of_.clear();
    slot_value_.clear();
    slot_released_.clear();
    refs_.clear();
    storage_bytes_.clear();
    total_bytes_ = 0;
  }

  bool is_blank() const {
    return line_.find_first_not_of(" \t\r") == std::string::npos;
  }

  // `line` is 1-based.
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    fail_at({source_, line}, what);
  }

  static std::string peek_string(const json& j, const char* key) {
    return json_peek_string(j, key);
  }
  json parse(std::size_t line) const {
    return json_parse_line(line_, {source_, line});
  }
  std::string get_string(std::size_t index, const json& j,
                         const char* key) const {
    return json_string(j, key, {source_, index});
  }
  std::int64_t get_int(std::size_t index, const json& j,
                       const char* key) const {
    return json_int(j, key, {source_, index});
  }
  std::vector<std::string> get_names(std::size_t index, const json& j,
                                     const char* key) const {
    return json_names(j, key, {source_, index});
  }

  ValueId value_of(std::size_t index, const std::string& name,
                   const char* role) const {
    auto it = slot_of_.find(name);
    if (it == slot_of_.end()) {
      fail(index, std::string(role) + " '" + name + "' is not defined");
    }
    if (std::size_t released = slot_released_[it->second]) {
      fail(index, std::string(role) + " '" + name + "' was released at line " +
                      std::to_string(released));
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

  // Every storage's bytes count once (aliases add none): bounding the sum
  // keeps every sum the runtime makes of them in range (limits.h).
  void count_storage(std::size_t index, std::int64_t bytes,
                     const std::string& name) {
    if (bytes > kMaxTotalBytes - total_bytes_) {
      fail(index, "the size of '" + name + "' (" + std::to_string(bytes) +
                      " bytes) brings the trace's storages past 2^61 bytes (" +
                      std::to_string(total_bytes_) + " before it)");
    }
    total_bytes_ += bytes;
  }

  ValueId new_value(std::size_t index, std::int64_t storage_bytes) {
    if (program_.value_count == kMaxIds) {
      fail(index, "too many values: ids run out at 2^32 - 1");
    }
    refs_.push_back(1);
    storage_bytes_.push_back(storage_bytes);
    return program_.value_count++;
  }

  // ANNOTATE STEP: a training step begins here, with its forward pass. A
  // mark with no schedule entry since the last one is the same boundary.
  void mark_step() {
    in_backward_ = false;
    auto& starts = program_.step_starts;
    if (starts.empty() || starts.back() != program_.steps.size()) {
      starts.push_back(program_.steps.size());
    }
  }

  void mark_cut() {
    auto& cuts = program_.lineage_cuts;
    if (cuts.empty() || cuts.back() != program_.steps.size()) {
      cuts.push_back(program_.steps.size());
    }
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
  bool next_nonblank_line() {
    while (next_line()) {
      if (!is_blank()) return true;
    }
    return false;
  }

  std::int64_t expect_memory(const std::string& name) {
    if (!next_nonblank_line()) {
      fail(line_number_, "trace ends before the MEMORY line of '" + name + "'");
    }
    const std::size_t index = line_number_;
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
    // A petabyte per tensor: beyond it a size is surely garbage.
    if (bytes > kMaxBytes) {
      fail(index, "MEMORY " + std::to_string(bytes) + " exceeds 2^50 bytes");
    }
    return bytes;
  }

  int expect_alias(const std::string& name, std::size_t arg_count) {
    if (!next_nonblank_line()) {
      fail(line_number_, "trace ends before the ALIAS line of '" + name + "'");
    }
    const std::size_t index = line_number_;
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

  // Optional (Note [Workspace], dtr/core/runtime.cpp): 0 when absent.
  std::int64_t get_workspace(std::size_t index, const json& j) const {
    if (!j.contains("WORKSPACE")) return 0;
    const std::int64_t bytes = get_int(index, j, "WORKSPACE");
    if (bytes < 0 || bytes > kMaxBytes) {
      fail(index, "WORKSPACE " + std::to_string(bytes) +
                      " is negative or exceeds 2^50 bytes");
    }
    return bytes;
  }

  void add_op(std::size_t index, ProgramOp op) {
    if (op.cost_ns > kMaxTotalCostNs - program_.total_cost_ns) {
      fail(index, "TIME " + std::to_string(op.cost_ns) +
                      " brings the trace's total cost past 2^61 ns (" +
                      std::to_string(program_.total_cost_ns) +
                      " ns before it)");
    }
    if (program_.ops.size() >= kMaxIds) {
      fail(index, "too many operations: ids run out at 2^32 - 1");
    }
    op.first_output = program_.value_count;
    op.backward = in_backward_;
    program_.total_cost_ns += op.cost_ns;
    program_.steps.push_back(
        {StepKind::kCompute, static_cast<std::uint32_t>(program_.ops.size())});
    program_.ops.push_back(std::move(op));
  }

  void step() {
    const std::size_t index = line_number_;
    if (is_blank()) return;
    json j = parse(index);
    std::string instr = get_string(index, j, "INSTRUCTION");
    if (instr == "CALL") {
      call(index, j);
    } else if (instr == "CONSTANT") {
      std::string name = get_string(index, j, "NAME");
      if (slot_of_.count(name))
        fail(index, "name '" + name + "' is already defined");
      ProgramOp op;
      op.name = "constant";
      op.constant = true;
      const std::int64_t bytes = expect_memory(name);
      count_storage(line_number_, bytes, name);
      op.outputs.push_back({bytes, -1});
      add_op(index, std::move(op));
      ++program_.constant_count;
      bind(index, name, new_value(index, bytes), true);
    } else if (instr == "MUTATE") {
      mutate(index, j);
    } else if (instr == "COPY") {
      std::string dst = get_string(index, j, "DST");
      ValueId v = value_of(index, get_string(index, j, "SRC"), "COPY source");
      bind(index, dst, v, /*must_be_new=*/true);
      add_ref(v);
    } else if (instr == "COPY_FROM") {
      copy_from(index, j);
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
      slot_released_[it->second] = index;
    } else if (instr == "ANNOTATE") {
      const std::string what = get_string(index, j, "ANNOTATION");
      if (what == "BACKWARD") in_backward_ = true;
      if (what == "STEP") mark_step();
      if (what == "FORGETS_DEAD") program_.forgets_dead = true;
      if (what == "LINEAGE_CUT") mark_cut();
    } else if (instr == "PIN") {
      ValueId v = value_of(index, get_string(index, j, "NAME"), "PIN target");
      program_.steps.push_back({StepKind::kPin, v});
    } else if (instr == "UNPIN") {
      ValueId v = value_of(index, get_string(index, j, "NAME"), "UNPIN target");
      program_.steps.push_back({StepKind::kUnpin, v});
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
    op.workspace_bytes = get_workspace(index, j);
    std::vector<std::string> args = get_names(index, j, "ARGS");
    std::vector<std::string> results = get_names(index, j, "RESULT");
    if (results.empty()) fail(index, "CALL '" + op.name + "' has no RESULT");
    for (const auto& a : args)
      op.inputs.push_back(value_of(index, a, "argument"));
    if (op.name.find("backward") != std::string::npos) in_backward_ = true;
    std::vector<std::int64_t> storage_bytes;
    for (const auto& r : results) {
      std::int64_t bytes = expect_memory(r);
      const std::size_t memory_line = line_number_;
      int alias = expect_alias(r, args.size());
      if (alias < 0) count_storage(memory_line, bytes, r);
      // An alias logs its base storage's size; it owns no bytes itself.
      op.outputs.push_back({alias >= 0 ? 0 : bytes, alias});
      storage_bytes.push_back(alias >= 0 ? storage_bytes_[op.inputs[alias]]
                                         : bytes);
    }
    add_op(index, std::move(op));
    for (std::size_t i = 0; i < results.size(); ++i) {
      bind(index, results[i], new_value(index, storage_bytes[i]), true);
    }
  }

  void mutate(std::size_t index, const json& j) {
    ProgramOp op;
    op.name = get_string(index, j, "NAME");
    op.cost_ns = get_time(index, j);
    std::vector<std::string> args = get_names(index, j, "ARGS");
    for (const auto& a : args)
      op.inputs.push_back(value_of(index, a, "argument"));
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
      const std::int64_t bytes = storage_bytes_[op.inputs[m]];
      count_storage(index, bytes, args[m] + "$");  // the copy
      op.outputs.push_back({bytes, -1});
    }
    std::vector<ValueId> old_values;
    for (std::size_t m : mutated) old_values.push_back(op.inputs[m]);
    add_op(index, std::move(op));
    for (std::size_t k = 0; k < mutated.size(); ++k) {
      const std::string& name = args[mutated[k]];
      ValueId fresh = new_value(index, program_.ops.back().outputs[k].bytes);
      bind(index, name, fresh, false);
      drop_ref(index, old_values[k], name);
    }
  }

  // DST now names SRC's value: the old value loses a reference, SRC's gains
  // one (in the reference's order). When both are the same value (`x.data =
  // x`, or DST a COPY of SRC) that is a no-op, as in PyTorch; dropping
  // first would free a value held by one handle and then revive it.
  void copy_from(std::size_t index, const json& j) {
    std::string dst = get_string(index, j, "DST");
    ValueId old = value_of(index, dst, "COPY_FROM destination");
    ValueId v =
        value_of(index, get_string(index, j, "SRC"), "COPY_FROM source");
    if (v == old) return;
    drop_ref(index, old, dst);
    add_ref(v);
    bind(index, dst, v, false);
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
  std::istream* in_ = nullptr;
  std::string line_;             // the current line
  std::size_t line_number_ = 0;  // 1-based; 0 before the first
  bool looking_for_start_ = false;
  bool in_backward_ = false;
  Program program_;
  std::unordered_map<std::string, std::uint32_t> slot_of_;
  std::vector<ValueId> slot_value_;         // per name slot, in first-use order
  std::vector<std::size_t> slot_released_;  // line of its RELEASE, or 0
  std::vector<std::int64_t> refs_;          // per value
  std::vector<std::int64_t> storage_bytes_;  // per value
  std::int64_t total_bytes_ = 0;             // all storages, see count_storage
};

}  // namespace

Program read_trace(std::istream& in, const std::string& source,
                   const TraceReadOptions& options) {
  return Reader(source, options).read(in);
}

Program read_trace_file(const std::string& path,
                        const TraceReadOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw TraceError("[" + path + "] is a directory, not a trace file");
  }
  errno = 0;
  std::ifstream in(path);
  if (!in) {
    throw TraceError("[" + path + "] cannot open the trace file" +
                     (errno ? std::string(": ") + std::strerror(errno) : ""));
  }
  return read_trace(in, path, options);
}

}  // namespace dtr::trace
