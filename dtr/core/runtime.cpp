#include "dtr/core/runtime.h"

#include <algorithm>
#include <chrono>

#include "dtr/core/error.h"

namespace dtr {

// Note [Materialization frames]
// Materializing a tensor t follows the reference simulator step by step:
// touch every parent (last access := now), lock the parents that are
// defined, then for each parent that was undefined, materialize it and lock
// it, in argument order; make room for t's op outputs; compute the op; unlock
// the parents in argument order. The recursion lives in `frames_`: a frame's
// parents sit in `arena_[begin, end)`, and `arena_[begin, cursor)` are the
// ones this frame has locked, so an exception can unlock exactly those.
struct Runtime::Frame {
  TensorId tensor;
  bool remat;
  bool waiting;  // arena_[cursor] is being materialized by the frame above
  std::uint32_t begin, cursor, end;
};

namespace {
using WallClock = std::chrono::steady_clock;

std::int64_t wall_ns_since(WallClock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(WallClock::now() -
                                                              start)
      .count();
}

// Rematerializing is never re-entrant; this resets the flag on every exit.
struct BusyGuard {
  explicit BusyGuard(bool& flag) : flag_(flag) {
    DTR_CHECK(!flag_, "[runtime] re-entrant call while an op is replayed");
    flag_ = true;
  }
  ~BusyGuard() { flag_ = false; }
  bool& flag_;
};
}  // namespace

Runtime::Runtime(RuntimeOptions options, std::unique_ptr<Heuristic> heuristic,
                 Executor* executor)
    : options_(options),
      heuristic_(std::move(heuristic)),
      executor_(executor),
      rng_(options.seed) {
  DTR_CHECK(heuristic_ != nullptr, "[runtime] a heuristic is required");
  DTR_CHECK(options_.budget_bytes >= 0, "[runtime] negative budget ",
            options_.budget_bytes);
}

Runtime::~Runtime() = default;

void Runtime::check_tensor(TensorId t, const char* what) const {
  DTR_CHECK(t < graph_.tensor_count(), "[runtime] ", what,
            ": unknown tensor id ", t, " (", graph_.tensor_count(),
            " tensors)");
  DTR_CHECK(!graph_.tensor(t).forgotten && !graph_.tensor(t).dead, "[runtime] ",
            what, ": tensor ", t, " was forgotten");
}

bool Runtime::is_defined(TensorId t) const {
  check_tensor(t, "is_defined");
  return graph_.tensor(t).defined;
}

double Runtime::score(StorageId s) {
  DTR_CHECK(s < graph_.storage_count(), "[runtime] score: unknown storage ", s);
  DTR_CHECK(graph_.storage(s).resident, "[runtime] score: storage ", s,
            " is not resident");
  return heuristic_->score(graph_, s, stats_.clock_ns);
}

std::int64_t Runtime::evictable_bytes() const {
  return pool_.bytes();
}

// ---------------------------------------------------------------------------
// Locks and eviction

void Runtime::pool_insert(StorageId s) {
  if (pool_.insert(graph_, s)) heuristic_->on_pool_insert(graph_, s);
}

void Runtime::touch(StorageId s) {
  graph_.storage(s).last_access = stats_.clock_ns;
  if (pool_.contains(graph_, s)) heuristic_->on_access_changed(graph_, s);
}

void Runtime::lock(StorageId s) {
  Storage& st = graph_.storage(s);
  DTR_ASSERT(st.resident, "lock of evicted storage ", s);
  if (st.locks++ == 0) pool_.erase(graph_, s);
}

void Runtime::unlock(StorageId s) {
  Storage& st = graph_.storage(s);
  DTR_ASSERT(st.locks > 0, "unlock of unlocked storage ", s);
  if (--st.locks != 0) return;
  if (st.constant && options_.free_dead_constants && st.ext_refs == 0) {
    try_banish(s);
    return;
  }
  if (st.banish_pending) {  // deferred while locked, see try_banish
    try_banish(s);
    if (st.banished) return;
  }
  // Eager: released while locked means evicted at the last unlock, this
  // one, if still unreferenced and evictable. The flag ends here either
  // way: left set on a pinned storage, it evicted a later materialization
  // of a view of it as the view's input (the same storage) was unlocked.
  const bool evict_now = st.evict_on_unlock;
  st.evict_on_unlock = false;
  if (st.pinned || !st.resident) return;
  if (evict_now && st.ext_refs == 0 && !st.constant) {
    evict(s, /*eager=*/true);
    return;
  }
  pool_insert(s);
}

void Runtime::evict(StorageId s, bool eager, double score) {
  Storage& st = graph_.storage(s);
  DTR_ASSERT(st.resident && st.locks == 0 && !st.pinned && !st.constant,
             "evict of a storage that is not evictable: ", s);
  st.resident = false;
  stats_.memory_bytes -= st.bytes;
  pool_.erase(graph_, s);
  for (TensorId t : st.tensors) graph_.tensor(t).defined = false;
  if (executor_) executor_->release_storage(graph_, s);
  if (placement_) placement_->on_storage_freed(graph_, s);
  heuristic_->on_evicted(graph_, s);
  ++(eager ? stats_.eager_evictions : stats_.evictions);
  if (observer_) {
    observer_->on_evicted(graph_, {s, st.bytes, score, eager, stats_.clock_ns});
    observer_->on_storage_freed(graph_, s, stats_.clock_ns);
    note_memory();
  }
}

// Both sides are in [0, 2^63): `budget - memory` cannot overflow, while
// `memory + bytes` could for a frontend's make_room.
bool Runtime::fits(std::int64_t bytes) const {
  return bytes <= options_.budget_bytes - stats_.memory_bytes;
}

// Within the budget and, in an arena, with a hole for it.
bool Runtime::room_for(std::int64_t bytes) const {
  return fits(bytes) && (placement_ == nullptr || placement_->fits(bytes));
}

void Runtime::make_room(std::int64_t bytes) {
  DTR_CHECK(bytes >= 0, "[runtime] make_room: negative size ", bytes);
  if (room_for(bytes)) return;
  // Reported if we run out: what could be evicted when the request began.
  const std::int64_t evictable_at_start = pool_.bytes();
  std::int64_t min_bytes = 0;
  if (options_.ignore_small && graph_.live_storage_count() > 0) {
    min_bytes = total_storage_bytes_ /
                static_cast<std::int64_t>(graph_.live_storage_count()) / 100;
  }
  if (staging_) evict_planned(bytes);  // runtime_staging.cpp
  const auto run_out = [&] {
    if (staging_) staging_->on_room_ran_out();
    throw OutOfMemory(bytes, evictable_at_start, options_.budget_bytes,
                      stats_.memory_bytes);
  };
  while (!room_for(bytes)) {
    if (placement_ != nullptr) {
      // An arena no larger than the budget: a hole of `bytes` in it is also
      // room within the budget, so one window is enough.
      if (!evict_window(bytes)) run_out();
      continue;
    }
    if (pool_.empty()) run_out();
    const StorageId victim = choose_victim(min_bytes);
    // Scored again only for a profile (the heuristic returns no score);
    // scores are pure functions of the state, so this changes no choice.
    const double score =
        observer_ && observer_->wants_scores()
            ? heuristic_->score(graph_, victim, stats_.clock_ns)
            : std::numeric_limits<double>::quiet_NaN();
    evict(victim, /*eager=*/false, score);
    if (staging_) staging_->on_victim(victim, /*planned=*/false);
  }
}

// Evicts the window of adjacent blocks the placement finds cheapest, each
// storage costing its score times its size (for the cost-density
// heuristics, its recomputation cost over its staleness); false if none,
// or if it holds nothing to evict (a hole the budget cannot afford: an
// arena larger than the budget).
bool Runtime::evict_window(std::int64_t bytes) {
  ++stats_.eviction_searches;
  const std::int64_t now = stats_.clock_ns;
  const auto cost = [this, now](StorageId s) {
    if (!pool_.contains(graph_, s)) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    return heuristic_->score(graph_, s, now) *
           static_cast<double>(graph_.storage(s).bytes);
  };
  window_.clear();
  const WallClock::time_point start = WallClock::now();
  const bool found = placement_->choose_window(graph_, bytes, cost, window_);
  stats_.choose_wall_ns += wall_ns_since(start);
  if (!found || window_.empty()) return false;
  for (StorageId s : window_) {
    evict(s, /*eager=*/false);
    if (staging_) staging_->on_victim(s, /*planned=*/false);
  }
  return true;
}

// Timed: the wall time spent choosing is one of the two costs the paper
// reports (two steady_clock reads per eviction, see docs/profiling.md).
StorageId Runtime::choose_victim(std::int64_t min_bytes) {
  ++stats_.eviction_searches;
  ChooseContext ctx{graph_,    pool_, stats_.clock_ns, options_.sample_sqrt,
                    min_bytes, rng_};
  const WallClock::time_point start = WallClock::now();
  const StorageId victim = heuristic_->choose(ctx);
  stats_.choose_wall_ns += wall_ns_since(start);
  DTR_ASSERT(victim != kNoId && pool_.contains(graph_, victim), "heuristic ",
             heuristic_->name(), " chose no pool member");
  return victim;
}

// ---------------------------------------------------------------------------
// Computing and rematerializing

void Runtime::touch_inputs(const Op& op) {
  for (TensorId p : op.inputs) touch(graph_.tensor(p).storage);
}

void Runtime::push_frame(TensorId t, bool remat) {
  const Tensor& tensor = graph_.tensor(t);
  const Storage& st = graph_.storage(tensor.storage);
  const Op& op = graph_.op(tensor.op);
  if (st.banished || (remat && op.constant)) {
    throw InvalidArgument(detail::concat(
        "[runtime] tensor ", t, " (op '", op.name,
        "') is needed but was freed for good and cannot be recomputed"));
  }
  touch_inputs(op);
  Frame f{t, remat, false, static_cast<std::uint32_t>(arena_.size()), 0, 0};
  for (TensorId p : op.inputs) {
    if (graph_.tensor(p).defined) {
      lock(graph_.tensor(p).storage);
      arena_.push_back(p);
    }
  }
  f.cursor = static_cast<std::uint32_t>(arena_.size());
  for (TensorId p : op.inputs) {
    if (!graph_.tensor(p).defined) arena_.push_back(p);
  }
  f.end = static_cast<std::uint32_t>(arena_.size());
  frames_.push_back(f);
  if (observer_ && remat) {
    observer_->on_replay_begin(graph_, t, stats_.clock_ns);
  }
}

// Note [Workspace]
// Many kernels allocate scratch beside their outputs (a convolution's
// reordered weights, a reduction's partial sums) and free it before they
// return. A framework makes room for each allocation as it happens, so
// its runs evict for the scratch too; an op that records its peak scratch
// (Op::workspace_bytes, a trace's WORKSPACE) gets the same room here,
// before it runs or is replayed, and the peak counts it while it runs. So
// a simulation of a recorded trace evicts and replays what the framework
// did (tests/torch/trace_prediction_test.cpp); unmodelled, the scratch of
// a U-Net's convolutions made the framework evict twice what the
// simulator predicted, and auto's simulated choice (dtr/torch/
// auto_heuristic.h) a toss-up between heuristics that differ by half.
void Runtime::finish_frame() {
  Frame f = frames_.back();
  if (frames_.size() == 1) inputs_ready_ = true;  // see call()
  const Tensor& tensor = graph_.tensor(f.tensor);
  const Op& op = graph_.op(tensor.op);
  make_room(saturating_add(op.total_bytes, op.workspace_bytes));
  compute(f.tensor, f.remat);
  stats_.peak_bytes =
      std::max(stats_.peak_bytes,
               saturating_add(stats_.memory_bytes, op.workspace_bytes));
  // Unlock the inputs while the frame is still on the stack, so that a
  // pending banish an unlock retries spares the frame's own tensor (an
  // input's storage may also hold it, as a view): materialize() must leave
  // it defined. Its range is emptied first: the locks are no longer its.
  frames_.back().cursor = frames_.back().end = f.begin;
  for (TensorId p : op.inputs) unlock(graph_.tensor(p).storage);
  frames_.pop_back();
  arena_.resize(f.begin);
  if (observer_ && f.remat) {
    observer_->on_replay_end(graph_, f.tensor, true, stats_.clock_ns);
  }
  if (!op.constant) {
    std::int64_t needed = saturating_add(op.total_bytes, op.workspace_bytes);
    for (TensorId p : op.inputs) {  // an input may repeat: saturate
      if (!graph_.op(graph_.tensor(p).op).constant) {
        needed = saturating_add(needed, graph_.tensor(p).bytes);
      }
    }
    stats_.bottleneck_bytes = std::max(stats_.bottleneck_bytes, needed);
  }
  // Only a recomputation can pass the limit: a call's own (first) compute
  // must not throw once it has run, or every call after the limit was
  // reached would compute and then be discarded.
  if (f.remat && options_.remat_limit_ns >= 0 &&
      stats_.remat_compute_ns > options_.remat_limit_ns) {
    throw RematLimitExceeded(stats_.remat_compute_ns, options_.remat_limit_ns);
  }
}

void Runtime::unwind_frames(std::size_t depth) {
  while (frames_.size() > depth) {
    const Frame& f = frames_.back();
    for (std::uint32_t i = f.begin; i < f.cursor; ++i) {
      unlock(graph_.tensor(arena_[i]).storage);
    }
    arena_.resize(f.begin);
    if (observer_ && f.remat) {
      observer_->on_replay_end(graph_, f.tensor, false, stats_.clock_ns);
    }
    frames_.pop_back();
  }
}

void Runtime::run_frames(TensorId t, bool remat) {
  const std::size_t depth = frames_.size();
  try {
    push_frame(t, remat);
    while (frames_.size() > depth) {
      Frame& f = frames_.back();
      if (f.cursor < f.end) {
        TensorId p = arena_[f.cursor];
        if (f.waiting || graph_.tensor(p).defined) {
          f.waiting = false;
          lock(graph_.tensor(p).storage);
          ++f.cursor;
        } else {
          f.waiting = true;
          push_frame(p, /*remat=*/true);  // invalidates f
        }
        continue;
      }
      finish_frame();
    }
  } catch (...) {
    std::exception_ptr error = with_context(std::current_exception(), depth);
    unwind_frames(depth);
    std::rethrow_exception(error);
  }
}

// "tensor 7 (op 'relu', op 3), needed for tensor 12": the innermost frame
// and the tensor the request was for.
std::string Runtime::remat_context(std::size_t depth) const {
  const TensorId t = frames_.back().tensor;
  const OpId op = graph_.tensor(t).op;
  std::string where = detail::concat("tensor ", t, " (op '", graph_.op(op).name,
                                     "', op ", op, ")");
  const TensorId wanted = frames_[depth].tensor;
  if (wanted != t) {
    where += detail::concat(", needed for tensor ", wanted, " (op '",
                            graph_.op(graph_.tensor(wanted).op).name, "', ",
                            frames_.size() - depth - 1, " levels up)");
  }
  return where;
}

// An out-of-memory met while rematerializing says which tensor was being
// recomputed (replay errors say so already, see replay()); the type stays,
// since callers tell OOM from other failures by it.
std::exception_ptr Runtime::with_context(std::exception_ptr error,
                                         std::size_t depth) const {
  if (frames_.size() <= depth || !frames_.back().remat) return error;
  try {
    std::rethrow_exception(error);
  } catch (const OutOfMemory& e) {
    return std::make_exception_ptr(
        OutOfMemory::while_rematerializing(e, remat_context(depth)));
  } catch (...) {
    return error;
  }
}

// Runs the Executor's replay; a failure becomes a RematerializationError
// naming the op and the tensors (the frame is still on the stack), unless
// it is an out-of-memory from a nested make_room, which keeps its type.
void Runtime::replay(OpId op_id) {
  try {
    executor_->replay(graph_, op_id);
  } catch (const OutOfMemory&) {
    throw;
  } catch (const std::exception& e) {
    throw RematerializationError(
        detail::concat("[runtime] replay failed while rematerializing ",
                       remat_context(0), ": ", e.what()),
        std::current_exception());
  } catch (...) {
    throw RematerializationError(
        detail::concat("[runtime] replay failed while rematerializing ",
                       remat_context(0), ": unknown exception"),
        std::current_exception());
  }
}

void Runtime::compute(TensorId t, bool remat) {
  const OpId op_id = graph_.tensor(t).op;
  const Op& op = graph_.op(op_id);
  // Checked before anything changes. Only recomputation can get here: first
  // computations are bounded by kMaxTotalCostNs.
  std::int64_t clock;
  if (__builtin_add_overflow(stats_.clock_ns, op.cost_ns, &clock)) {
    throw OverflowError(detail::concat(
        "[runtime] op '", op.name, "' (op ", op_id, "): the clock, ",
        stats_.clock_ns, " ns of compute charged, would pass 2^63 ns"));
  }
  if (remat && executor_) {
    const WallClock::time_point start = WallClock::now();
    replay(op_id);
    stats_.replay_wall_ns += wall_ns_since(start);
  }

  // Outputs recomputed alongside t that were already defined are freed again
  // at once (doubly computed); the undefined ones come back for free.
  scratch_.clear();
  std::int64_t duplicate_bytes = 0;
  auto note_storage = [&](TensorId u) {
    StorageId s = graph_.tensor(u).storage;
    if (!graph_.storage(s).resident && !graph_.storage(s).banished &&
        std::find(scratch_.begin(), scratch_.end(), s) == scratch_.end()) {
      scratch_.push_back(s);
    }
  };
  for (TensorId u : op.outputs) {
    if (u == t) continue;
    if (graph_.tensor(u).defined) duplicate_bytes += graph_.tensor(u).bytes;
    note_storage(u);
  }
  note_storage(t);
  if (observer_ || placement_) note_fresh_outputs(op);

  stats_.clock_ns = clock;
  stats_.memory_bytes += op.total_bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.memory_bytes);
  if (remat) {
    stats_.remat_compute_ns += op.cost_ns;
    ++stats_.remat_ops;
  } else {
    stats_.model_compute_ns += op.cost_ns;
  }
  for (TensorId u : op.outputs) {
    Tensor& ut = graph_.tensor(u);
    ut.defined = true;
    graph_.storage(ut.storage).resident = true;
    graph_.storage(ut.storage).computed = true;
  }
  if (placement_) {
    placement_->on_outputs_written(graph_, fresh_, duplicate_bytes);
  }
  if (observer_) {
    observer_->on_outputs_written(graph_, fresh_, duplicate_bytes,
                                  stats_.clock_ns);
  }
  stats_.memory_bytes -= duplicate_bytes;
  drop_banished_outputs(op);
  note_memory();

  for (StorageId s : scratch_) {
    if (graph_.storage(s).locks == 0 && !graph_.storage(s).pinned) {
      pool_insert(s);
    }
  }
  heuristic_->on_materialized(graph_, scratch_);
  if (options_.policy == DeallocPolicy::kBanish ||
      options_.free_dead_constants) {
    // A parent waiting to be banished may now have no evicted dependents.
    for (StorageId s : scratch_) {
      graph_.for_each_parent_storage(s, [&](StorageId p) {
        if (p != s && graph_.storage(p).banish_pending) try_banish(p);
      });
    }
  }
}

// The storages an allocator places for `op`: its own (non-alias) outputs
// that are not resident yet, banished ones included (freed right after).
void Runtime::note_fresh_outputs(const Op& op) {
  fresh_.clear();
  for (TensorId u : op.outputs) {
    const Tensor& ut = graph_.tensor(u);
    if (!ut.is_alias && !graph_.storage(ut.storage).resident) {
      fresh_.push_back(ut.storage);
    }
  }
}

// A replay writes every output of its op, also those whose storage was
// freed for good (banished, or all its tensors forgotten): nothing may read
// them and nothing would free them again, so they go at once, before they
// are pooled or shown to the heuristic (which saw them banished).
void Runtime::drop_banished_outputs(const Op& op) {
  for (TensorId u : op.outputs) {
    const StorageId s = graph_.tensor(u).storage;
    if (graph_.storage(s).banished) free_buffer(s);
  }
}

// ---------------------------------------------------------------------------
// Recording calls

// The bytes of a call's new storages, once its arguments are checked:
// inputs live and not freed for good, outputs well formed, and every total
// the runtime keeps within the bounds of limits.h.
std::int64_t Runtime::check_call(std::string_view name,
                                 std::span<const TensorId> inputs,
                                 std::span<const OutputSpec> outputs,
                                 std::int64_t cost_ns,
                                 std::int64_t workspace_bytes) {
  DTR_CHECK(cost_ns >= 0, "[runtime] op '", name, "': negative cost ", cost_ns);
  DTR_CHECK(workspace_bytes >= 0, "[runtime] op '", name,
            "': negative workspace ", workspace_bytes);
  DTR_CHECK(!outputs.empty(), "[runtime] op '", name, "' has no outputs");
  for (TensorId in : inputs) {
    check_tensor(in, "call");
    DTR_CHECK(!graph_.storage(graph_.tensor(in).storage).banished,
              "[runtime] op '", name, "': input tensor ", in,
              " was freed for good");
  }
  std::int64_t total_bytes = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputSpec& o = outputs[i];
    DTR_CHECK(o.alias_of >= -1 && o.alias_of < static_cast<int>(inputs.size()),
              "[runtime] op '", name, "': output ", i, " aliases input ",
              o.alias_of, " but the op has ", inputs.size(), " inputs");
    DTR_CHECK(o.alias_of >= 0 || o.bytes >= 0, "[runtime] op '", name,
              "': output ", i, " has negative size ", o.bytes);
    if (o.alias_of < 0 &&
        __builtin_add_overflow(total_bytes, o.bytes, &total_bytes)) {
      total_bytes = kMaxTotalBytes + 1;  // reported just below
    }
  }
  // Every sum the runtime keeps is bounded by these two totals (limits.h).
  if (total_bytes > kMaxTotalBytes - total_storage_bytes_) {
    throw OverflowError(detail::concat(
        "[runtime] op '", name, "': its outputs (", total_bytes,
        " bytes) would bring the live storages past 2^61 bytes (",
        total_storage_bytes_, " already)"));
  }
  // Room for the workspace is made like room for outputs (Note
  // [Workspace]): the same bound keeps an unlimited budget unlimited.
  if (workspace_bytes > kMaxTotalBytes - total_storage_bytes_ - total_bytes) {
    throw OverflowError(detail::concat(
        "[runtime] op '", name, "': its outputs and workspace (", total_bytes,
        " + ", workspace_bytes,
        " bytes) would bring the live storages past 2^61 bytes (",
        total_storage_bytes_, " already)"));
  }
  if (cost_ns > kMaxTotalCostNs - total_cost_ns_) {
    throw OverflowError(
        detail::concat("[runtime] op '", name, "': its cost (", cost_ns,
                       " ns) would bring the recorded ops past 2^61 ns (",
                       total_cost_ns_, " already)"));
  }
  return total_bytes;
}

OpId Runtime::record_call(std::string_view name,
                          std::span<const TensorId> inputs,
                          std::span<const OutputSpec> outputs,
                          std::int64_t cost_ns, bool constant,
                          std::int64_t workspace_bytes) {
  const std::int64_t total_bytes =
      check_call(name, inputs, outputs, cost_ns, workspace_bytes);
  total_cost_ns_ += cost_ns;
  const OpId op_id = graph_.add_op();
  {
    Op& op = graph_.op(op_id);
    op.name = name;
    op.cost_ns = cost_ns;
    op.total_bytes = total_bytes;
    op.workspace_bytes = workspace_bytes;
    op.inputs.assign(inputs.begin(), inputs.end());
    op.constant = constant;
    op.outputs.reserve(outputs.size());
  }
  const TensorId first =
      graph_.add_tensors(static_cast<std::uint32_t>(outputs.size()));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputSpec& o = outputs[i];
    StorageId s;
    if (o.alias_of >= 0) {
      s = graph_.tensor(inputs[o.alias_of]).storage;
    } else {
      s = graph_.add_storage();
      Storage& st = graph_.storage(s);
      st.bytes = o.bytes;
      st.constant = constant;
      total_storage_bytes_ += o.bytes;
    }
    const auto id = static_cast<TensorId>(first + i);
    Tensor& t = graph_.tensor(id);
    t.op = op_id;
    t.index = static_cast<std::uint32_t>(i);
    t.ext_refs = 1;
    t.storage = s;
    t.is_alias = o.alias_of >= 0;
    t.bytes = t.is_alias ? 0 : o.bytes;
    Storage& st = graph_.storage(s);
    // cost(S) sums the distinct ops of S's tensors (aliasing ops included).
    bool op_seen =
        !st.tensors.empty() && graph_.tensor(st.tensors.back()).op == op_id;
    st.tensors.push_back(id);
    st.ext_refs += 1;
    if (!op_seen) st.compute_ns += cost_ns;
    if (o.alias_of < 0) heuristic_->on_storage_created(graph_, s);
    graph_.op(op_id).outputs.push_back(id);
  }
  for (TensorId in : inputs) graph_.tensor(in).consumers.push_back(op_id);
  heuristic_->on_op_recorded(graph_, op_id);
  ++stats_.ops;
  if (staging_) staging_->on_call(graph_, op_id);
  return op_id;
}

// A call that failed leaves no trace the program could see: its outputs
// lose their references and their new storages are marked freed for good,
// and the edges from its inputs are removed so no neighbourhood includes it.
void Runtime::discard_call(OpId op_id) {
  Op& op = graph_.op(op_id);
  for (TensorId in : op.inputs) {
    auto& consumers = graph_.tensor(in).consumers;
    auto it = std::find(consumers.rbegin(), consumers.rend(), op_id);
    if (it != consumers.rend()) consumers.erase(std::next(it).base());
  }
  for (TensorId out : op.outputs) {
    Tensor& t = graph_.tensor(out);
    Storage& st = graph_.storage(t.storage);
    st.ext_refs -= t.ext_refs;
    t.ext_refs = 0;
    // The program never got these ids (and a failed call may have taken
    // recycled ones): as forgotten, every method rejects them. They are
    // never recycled (collect() is not run), so never reused either.
    t.forgotten = true;
    if (t.is_alias) {
      auto& ts = st.tensors;
      ts.erase(std::remove(ts.begin(), ts.end(), out), ts.end());
    } else {
      // Its own new storage: free it if the op ran, so it leaves neither
      // memory nor the eviction pool (a constant there would be evicted).
      free_buffer(t.storage);
      st.forgotten = 1;
      st.banished = true;
      heuristic_->on_banished(graph_, t.storage);
    }
  }
  heuristic_->on_op_recorded(graph_, op_id);
  // Never replayed (its outputs are gone): naming no inputs keeps it from
  // referring to records that forget() may recycle.
  op.inputs.clear();
  --stats_.ops;
  if (staging_) staging_->diverge();  // the step no longer matches its record
}

std::span<const TensorId> Runtime::call(std::string_view name,
                                        std::span<const TensorId> inputs,
                                        std::span<const OutputSpec> outputs,
                                        std::int64_t cost_ns,
                                        std::int64_t workspace_bytes) {
  BusyGuard guard(busy_);
  const OpId op =
      record_call(name, inputs, outputs, cost_ns, false, workspace_bytes);
  const auto& result = graph_.op(op).outputs;
  if (observer_) observer_->on_op_begin(stats_.clock_ns);
  try {
    inputs_ready_ = false;
    try {
      run_frames(result.front(), /*remat=*/false);
    } catch (const OutOfMemory&) {
      if (!options_.retry_inputs_in_order || inputs_ready_) throw;
      run_in_argument_order(op);
    }
  } catch (...) {
    if (observer_) observer_->on_op_end(graph_, op, false, stats_.clock_ns);
    discard_call(op);
    throw;
  }
  if (observer_) observer_->on_op_end(graph_, op, true, stats_.clock_ns);
  for (TensorId t : result) touch(graph_.tensor(t).storage);
  return {result.data(), result.size()};
}

// Note [Inputs in argument order]
// begin_call (the LibTorch layer's protocol) falls back to materializing
// and locking the inputs one by one in argument order where a frame's
// order (defined inputs locked first) runs out of memory: that order needs
// less memory. A recorded trace replayed without the same fallback ran
// out of memory where the runtime had trained (the MLP at 0.4 of its peak:
// a backward call whose inputs all had to be replayed through one 2 MB
// layer after another). The frames have been unwound (nothing of this
// call is locked); the op's own frame then finds every input defined.
void Runtime::run_in_argument_order(OpId op) {
  const Op& o = graph_.op(op);  // replays add no ops: o stays valid
  const std::span<const TensorId> inputs(o.inputs.data(), o.inputs.size());
  lock_in_argument_order(inputs);
  try {
    run_frames(o.outputs.front(), /*remat=*/false);
  } catch (...) {
    unlock_inputs(inputs);
    throw;
  }
  unlock_inputs(inputs);
}

TensorId Runtime::add_constant(std::int64_t bytes, std::string_view name) {
  BusyGuard guard(busy_);
  DTR_CHECK(bytes >= 0, "[runtime] constant '", name, "': negative size ",
            bytes);
  OutputSpec out{bytes, -1};
  const OpId op = record_call(name, {}, {&out, 1}, 0, true);
  const TensorId t = graph_.op(op).outputs.front();
  try {
    run_frames(t, /*remat=*/false);
  } catch (...) {
    discard_call(op);
    throw;
  }
  Storage& st = graph_.storage(graph_.tensor(t).storage);
  st.last_access = stats_.clock_ns;
  st.pinned = true;
  pool_.erase(graph_, graph_.tensor(t).storage);
  stats_.constant_bytes += bytes;
  return t;
}

void Runtime::begin_call(std::span<const TensorId> inputs) {
  BusyGuard guard(busy_);
  for (TensorId in : inputs) check_tensor(in, "begin_call");
  for (TensorId p : inputs) touch(graph_.tensor(p).storage);
  // As a frame does (Note [Materialization frames]): lock the defined
  // inputs first, then materialize the others in argument order. Locking
  // each input only when its turn came let rematerializing an earlier one
  // evict a later, defined one, which the simulator never does (the MLP
  // replayed 28% more than predicted on its own trace). That order needs
  // less memory, though: where the frame's order runs out of it, the call
  // falls back to it rather than fail a budget it used to meet.
  SmallVector<TensorId, 8> locked;  // Note [Inline lists]
  locked.reserve(inputs.size());
  auto unlock_all = [&] {
    for (TensorId p : locked) unlock(graph_.tensor(p).storage);
    locked.clear();
  };
  auto lock_input = [&](TensorId p) {
    if (!graph_.tensor(p).defined) run_frames(p, /*remat=*/true);
    lock(graph_.tensor(p).storage);
    locked.push_back(p);
  };
  try {
    SmallVector<bool, 8> was_defined;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      was_defined.push_back(graph_.tensor(inputs[i]).defined);
      if (was_defined[i]) lock_input(inputs[i]);
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!was_defined[i]) lock_input(inputs[i]);
    }
    return;
  } catch (const OutOfMemory&) {
    unlock_all();
  } catch (...) {
    unlock_all();
    throw;
  }
  lock_in_argument_order(inputs);
}

// Materializes and locks `inputs` one by one in argument order; after a
// throw, nothing it locked stays locked.
void Runtime::lock_in_argument_order(std::span<const TensorId> inputs) {
  std::size_t k = 0;
  try {
    for (; k < inputs.size(); ++k) {
      if (!graph_.tensor(inputs[k]).defined)
        run_frames(inputs[k], /*remat=*/true);
      lock(graph_.tensor(inputs[k]).storage);
    }
  } catch (...) {
    unlock_inputs(inputs.first(k));
    throw;
  }
}

void Runtime::unlock_inputs(std::span<const TensorId> inputs) {
  for (TensorId p : inputs) unlock(graph_.tensor(p).storage);
}

void Runtime::abort_call(std::span<const TensorId> inputs) {
  unlock_inputs(inputs);
}

std::span<const TensorId> Runtime::end_call(std::string_view name,
                                            std::span<const TensorId> inputs,
                                            std::span<const OutputSpec> outputs,
                                            std::int64_t cost_ns,
                                            std::int64_t workspace_bytes) {
  BusyGuard guard(busy_);
  OpId op = kNoId;
  try {
    op = record_call(name, inputs, outputs, cost_ns, false, workspace_bytes);
  } catch (...) {
    abort_call(inputs);
    throw;
  }
  const auto& result = graph_.op(op).outputs;  // no op is added below
  compute(result.front(), /*remat=*/false);
  for (TensorId t : result) touch(graph_.tensor(t).storage);
  abort_call(inputs);  // releases the locks begin_call took
  return {result.data(), result.size()};
}

void Runtime::materialize(TensorId t) {
  check_tensor(t, "materialize");
  if (graph_.tensor(t).defined) return;
  BusyGuard guard(busy_);
  run_frames(t, /*remat=*/true);
}

void Runtime::pin(TensorId t) {
  materialize(t);
  StorageId s = graph_.tensor(t).storage;
  Storage& st = graph_.storage(s);
  if (st.pinned) return;
  st.pinned = true;
  pool_.erase(graph_, s);
}

void Runtime::retain(TensorId t) {
  check_tensor(t, "retain");
  Tensor& tensor = graph_.tensor(t);
  DTR_CHECK(!graph_.storage(tensor.storage).banished,
            "[runtime] retain: tensor ", t, " was freed for good");
  tensor.ext_refs += 1;
  graph_.storage(tensor.storage).ext_refs += 1;
  graph_.storage(tensor.storage).evict_on_unlock = false;
}

void Runtime::unpin(TensorId t) {
  check_tensor(t, "unpin");
  StorageId s = graph_.tensor(t).storage;
  Storage& st = graph_.storage(s);
  DTR_CHECK(!st.constant, "[runtime] unpin: tensor ", t,
            " is a constant and cannot be recomputed");
  if (!st.pinned) return;
  // pin_children pinned it for good when a parent was freed for good:
  // evicting it would lose a value nothing can recompute.
  bool parent_freed = false;
  graph_.for_each_parent_storage(s, [&](StorageId p) {
    if (p != s && graph_.storage(p).banished) parent_freed = true;
  });
  DTR_CHECK(!parent_freed, "[runtime] unpin: tensor ", t,
            " cannot be recomputed (an input of its op was freed for good)");
  st.pinned = false;
  if (!st.resident || st.locks != 0) return;
  if (options_.policy == DeallocPolicy::kEager && st.ext_refs == 0) {
    evict(s, /*eager=*/true);
  } else {
    pool_insert(s);
  }
}

void Runtime::evict_all() {
  DTR_CHECK(!busy_, "[runtime] evict_all during an op");
  while (!pool_.empty()) {
    for (StorageId s : pool_.slots()) {
      if (s != kNoId) {
        evict(s, /*eager=*/false);
        break;
      }
    }
  }
}

void Runtime::release(TensorId t) {
  check_tensor(t, "release");
  Tensor& tensor = graph_.tensor(t);
  DTR_CHECK(tensor.ext_refs > 0, "[runtime] release: tensor ", t,
            " has no external reference left");
  tensor.ext_refs -= 1;
  StorageId s = tensor.storage;
  Storage& st = graph_.storage(s);
  st.ext_refs -= 1;
  if (st.ext_refs != 0) return;
  if (st.constant && options_.free_dead_constants) {
    try_banish(s);
    return;
  }
  switch (options_.policy) {
    case DeallocPolicy::kIgnore:
      break;
    case DeallocPolicy::kEager:
      if (st.resident && !st.pinned && !st.constant) {
        if (st.locks == 0) {
          evict(s, /*eager=*/true);
        } else {
          st.evict_on_unlock = true;
        }
      }
      break;
    case DeallocPolicy::kBanish:
      try_banish(s);
      break;
  }
}

// Note [Banishing needs defined children]
// Banishing s is legal only if nothing can ever need s again: every child
// tensor (an output of an op that reads s) must be defined, and it stays so
// because pin_children pins its storage. The test is per tensor, not per
// storage: rebuilding a storage from its root op leaves its views undefined,
// so a resident storage can hold a view whose op still reads s. (Testing
// the child storages' residency banished s under such a view, and the held
// view could never be rebuilt: trace_fuzz, banish-needs-freed-value-*.)
// Outputs in s itself go with it; those in a storage freed for good are
// never needed. The banish is retried when the inputs of a replay are
// unlocked (see unlock), which is when an undefined child becomes defined.
void Runtime::try_banish(StorageId s) {
  Storage& st = graph_.storage(s);
  if (st.banished || st.ext_refs != 0 || st.locks != 0) return;
  bool undefined_dependent = false;
  for (TensorId t : st.tensors) {
    for (OpId c : graph_.tensor(t).consumers) {
      for (TensorId out : graph_.op(c).outputs) {
        const Tensor& child = graph_.tensor(out);
        if (child.storage != s && !child.defined &&
            !graph_.storage(child.storage).banished) {
          undefined_dependent = true;
        }
      }
    }
  }
  if (undefined_dependent || needed_by_frames(s)) {
    st.banish_pending = true;
    return;
  }
  st.banish_pending = false;
  free_buffer(s);
  st.banished = true;
  heuristic_->on_banished(graph_, s);
  ++stats_.banishments;
  pin_children(s);
}

// Whether a materialization in progress still needs `s`: a frame's own
// tensor, or a parent it has not locked yet (being rematerialized). Banishing
// it then would make the frame lock an evicted storage, or materialize()
// return with its tensor undefined; the banish waits for the last unlock
// (see unlock) or the next replay of a child. Scanned only when everything
// else allows the banish. (The locked parents are excluded by locks != 0.)
bool Runtime::needed_by_frames(StorageId s) const {
  for (const Frame& f : frames_) {
    if (graph_.tensor(f.tensor).storage == s) return true;
    for (std::uint32_t i = f.cursor; i < f.end; ++i) {
      if (graph_.tensor(arena_[i]).storage == s) return true;
    }
  }
  return false;
}

// Releases a resident buffer that nothing will read: not an eviction.
void Runtime::free_buffer(StorageId s) {
  Storage& st = graph_.storage(s);
  if (st.resident) {
    st.resident = false;
    stats_.memory_bytes -= st.bytes;
    pool_.erase(graph_, s);
    if (executor_) executor_->release_storage(graph_, s);
    if (placement_) placement_->on_storage_freed(graph_, s);
    if (observer_) observer_->on_storage_freed(graph_, s, stats_.clock_ns);
    note_memory();
  }
  for (TensorId t : st.tensors) graph_.tensor(t).defined = false;
}

// Nothing can recompute the children of a storage freed for good: pin them.
void Runtime::pin_children(StorageId s) {
  graph_.for_each_child_storage(s, [&](StorageId c) {
    Storage& cs = graph_.storage(c);
    if (c != s && cs.resident && !cs.pinned) {
      cs.pinned = true;
      pool_.erase(graph_, c);
    }
  });
}

// ---------------------------------------------------------------------------
// Forgetting

// Note [Forgetting]
// forget(t) is the frontend's promise that t is garbage. The graph keeps
// what a live record can still reach and recycles the rest:
//  - storage S: freed for good (banished) when every tensor in it is
//    forgotten; a replay of a multi-output op that brings S back frees it
//    again at once (see compute). Its record lives while a tensor record
//    in it does.
//  - op O with its outputs: recycled together once every output is
//    forgotten and no live op reads any of them. Until then the outputs
//    keep their ids, since a replay of O writes all of them. Recycling O
//    removes it from its inputs' consumers, which may make the inputs' ops
//    collectable in turn (a work list, no recursion).
// Heuristics drop per-id state in on_storage_recycled; the caches of other
// storages saw the banishment event, which invalidates them.

void Runtime::forget(TensorId t) {
  DTR_CHECK(!busy_, "[runtime] forget: tensor ", t,
            " forgotten while an op is replayed");
  check_tensor(t, "forget");
  Tensor& tensor = graph_.tensor(t);
  DTR_CHECK(tensor.ext_refs == 0, "[runtime] forget: tensor ", t, " still has ",
            tensor.ext_refs, " external reference(s); release() them first");
  const StorageId s = tensor.storage;
  Storage& st = graph_.storage(s);
  DTR_CHECK(st.locks == 0, "[runtime] forget: tensor ", t,
            " is locked by a pending call (storage ", s,
            "); forget it after end_call or abort_call");
  tensor.forgotten = true;
  if (++st.forgotten == st.tensors.size()) drop_forgotten(s);
  collect(tensor.op);
}

void Runtime::drop_forgotten(StorageId s) {
  Storage& st = graph_.storage(s);
  st.pinned = false;
  st.evict_on_unlock = false;
  st.banish_pending = false;
  if (st.banished) return;  // already freed (banish policy)
  free_buffer(s);
  st.banished = true;
  heuristic_->on_banished(graph_, s);
  ++stats_.forgotten_storages;
  pin_children(s);
}

bool Runtime::collectable(OpId op) const {
  const Op& o = graph_.op(op);
  if (o.dead) return false;
  for (TensorId out : o.outputs) {
    const Tensor& t = graph_.tensor(out);
    if (!t.forgotten || !t.consumers.empty()) return false;
  }
  return true;
}

void Runtime::collect(OpId op) {
  dead_ops_.assign(1, op);
  while (!dead_ops_.empty()) {
    const OpId next = dead_ops_.back();
    dead_ops_.pop_back();
    if (collectable(next)) recycle(next);
  }
}

void Runtime::recycle(OpId op_id) {
  const Op& op = graph_.op(op_id);
  for (TensorId in : op.inputs) {  // one consumer entry per input entry
    Tensor& t = graph_.tensor(in);
    auto it = std::find(t.consumers.begin(), t.consumers.end(), op_id);
    DTR_ASSERT(it != t.consumers.end(), "op ", op_id,
               " missing from the consumers of tensor ", in);
    t.consumers.erase(it);
    if (t.forgotten && t.consumers.empty()) dead_ops_.push_back(t.op);
  }
  for (TensorId out : op.outputs) {
    const StorageId s = graph_.tensor(out).storage;
    Storage& st = graph_.storage(s);
    st.tensors.erase(std::find(st.tensors.begin(), st.tensors.end(), out));
    --st.forgotten;
    if (!st.tensors.empty()) continue;  // an older alias still lives
    heuristic_->on_storage_recycled(graph_, s);
    total_storage_bytes_ -= st.bytes;
    graph_.recycle_storage(s);
  }
  total_cost_ns_ -= op.cost_ns;
  graph_.recycle_tensors(op.outputs.front(),
                         static_cast<std::uint32_t>(op.outputs.size()));
  graph_.recycle_op(op_id);
}

// ---------------------------------------------------------------------------

void Runtime::check_invariants() const {
  std::int64_t resident = 0;
  std::size_t in_pool = 0;
  std::size_t dead_storages = 0;
  for (StorageId s = 0; s < graph_.storage_count(); ++s) {
    const Storage& st = graph_.storage(s);
    if (st.dead) {
      ++dead_storages;
      DTR_ASSERT(st.tensors.empty() && !st.resident && st.pool_slot == kNoId,
                 "recycled storage ", s, " is still in use");
      continue;
    }
    std::uint32_t refs = 0, forgotten = 0;
    for (TensorId t : st.tensors) {
      const Tensor& tensor = graph_.tensor(t);
      refs += tensor.ext_refs;
      forgotten += tensor.forgotten;
      DTR_ASSERT(!tensor.dead && !graph_.op(tensor.op).dead, "storage ", s,
                 " refers to recycled tensor ", t, " or its op");
      DTR_ASSERT(tensor.storage == s, "tensor ", t, " not in its storage");
      DTR_ASSERT(!tensor.defined || st.resident, "tensor ", t,
                 " defined on evicted storage ", s);
    }
    DTR_ASSERT(refs == st.ext_refs, "storage ", s, " ref count mismatch");
    DTR_ASSERT(forgotten == st.forgotten, "storage ", s,
               " forgotten count mismatch");
    DTR_ASSERT(forgotten == 0 || forgotten < st.tensors.size() ||
                   (st.banished && !st.resident),
               "forgotten storage ", s, " is not freed");
    if (st.resident) resident += st.bytes;
    bool should_pool = st.resident && st.locks == 0 && !st.pinned;
    DTR_ASSERT(should_pool == pool_.contains(graph_, s), "storage ", s,
               " pool membership is wrong");
    if (pool_.contains(graph_, s)) ++in_pool;
    DTR_ASSERT(!st.constant || st.resident || st.banished, "constant ", s,
               " was evicted");
  }
  DTR_ASSERT(in_pool == pool_.size(), "pool size mismatch");
  std::int64_t pooled = 0;
  for (StorageId s : pool_.slots()) {
    if (s != kNoId) pooled += graph_.storage(s).bytes;
  }
  DTR_ASSERT(pooled == pool_.bytes(), "pool bytes mismatch");
  DTR_ASSERT(resident == stats_.memory_bytes, "memory accounting: resident ",
             resident, " != counted ", stats_.memory_bytes);
  DTR_ASSERT(frames_.empty() && arena_.empty(), "frames left behind");
  DTR_ASSERT(
      graph_.live_storage_count() == graph_.storage_count() - dead_storages,
      "live storage count mismatch");
  check_edges();
}

// No live op or tensor refers to a recycled record.
void Runtime::check_edges() const {
  std::size_t dead_ops = 0, dead_tensors = 0;
  for (OpId o = 0; o < graph_.op_count(); ++o) {
    const Op& op = graph_.op(o);
    if (op.dead) {
      ++dead_ops;
      continue;
    }
    for (TensorId t : op.inputs) {
      DTR_ASSERT(!graph_.tensor(t).dead, "op ", o, " reads recycled ", t);
    }
    for (TensorId t : op.outputs) {
      DTR_ASSERT(!graph_.tensor(t).dead && graph_.tensor(t).op == o, "op ", o,
                 " writes recycled or foreign tensor ", t);
    }
  }
  for (TensorId t = 0; t < graph_.tensor_count(); ++t) {
    const Tensor& tensor = graph_.tensor(t);
    if (tensor.dead) {
      ++dead_tensors;
      continue;
    }
    // (Its storage was checked from the storage's side: the alias outputs
    // of a failed call are in no storage.)
    DTR_ASSERT(!graph_.op(tensor.op).dead, "tensor ", t,
               " refers to a recycled op");
    for (OpId c : tensor.consumers) {
      DTR_ASSERT(!graph_.op(c).dead, "tensor ", t, " read by recycled op ", c);
    }
  }
  DTR_ASSERT(
      graph_.live_op_count() == graph_.op_count() - dead_ops &&
          graph_.live_tensor_count() == graph_.tensor_count() - dead_tensors,
      "live record counts mismatch");
}

}  // namespace dtr
