#include "dtr/torch/checkpoint_context.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <unordered_set>

#include "dtr/core/error.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/torch/call_guard.h"
#include "dtr/torch/counting_allocator.h"

namespace dtr::pt {

namespace {

// DTR_HEURISTIC names the eviction heuristic; `auto` by default (see
// docs/torch.md, "Choice of heuristic", and Note [Auto protocol]). The
// context is made wherever dtr is first used, a noexcept path among them:
// an unknown name is reported on stderr and `auto` runs, rather than a
// throw that would end the process.
std::string heuristic_from_env() {
  const char* name = std::getenv("DTR_HEURISTIC");
  if (name == nullptr) return "auto";
  try {
    sim::check_heuristic_name(name);
  } catch (const InvalidArgument& e) {
    std::cerr << "[dtr] DTR_HEURISTIC is ignored, `auto` runs: " << e.what()
              << "\n";
    return "auto";
  }
  return name;
}

}  // namespace

// auto starts with exact `dtr`, the first fixed heuristic, until its first
// decision.
Context::Context()
    : accounting_(cpu_accounting()),
      runtime_(RuntimeOptions{.budget_bytes = kUnlimited},
               make_heuristic("dtr"), &replayer_),
      listeners_(auto_),
      releases_(runtime_, listeners_),
      parameters_(&make_parameter_gradient_hook) {
  set_heuristic(heuristic_from_env());
  set_outside_hook(&outside_allocation_hook);
  if (std::getenv("DTR_CHECK_REPLAYS") != nullptr) replayer_.check_replays();
}

void Context::on_last_handle(Cell& cell) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (cell.held || !cell.core_ref) return;
  cell.core_ref = false;
  releases_.release(cell.id);
}

// Note [Dying cells]
// A cell dies once no handle and no live lineage can read it; the
// release queue forgets its value, which frees the storage for good once every
// value in it is forgotten (Runtime::forget). A storage that an alias still
// keeps (a transposed view of a gate gradient dies while the gradient itself is
// still read by a lineage) stays resident and evictable: the heuristic decides
// when it goes, as in the simulator (dtr/sim/dead_values.h), which replays the
// recorded trace to predict this run. Evicting such a storage at once
// instead would be outside the heuristic's choice, unknown to the trace, and
// costly: nn.GRU at 0.6 of its peak (bench/torch/rnn_vs_sim.py gru 0.6
// --cost-model bytes) replays 10,746 times per step, as the simulator
// predicts; evicting at once made it 16,170.
void Context::on_cell_dead(Cell& cell) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  cells_.erase(cell.id);
  unmark_visible(cell);
  releases_.died(cell.id, cell.held, cell.core_ref);
}

void Context::on_remat_dead(Remat& remat) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  remats_.erase(remat.op_id, &remat);
  for (const c10::StorageImpl* s : remat.captured) shared_.release_capture(s);
}

std::int64_t Context::cost_of(std::int64_t elapsed_ns,
                              std::int64_t bytes) const {
  if (cost_model_ == CostModel::kBytes) return bytes + 1;
  return std::max<std::int64_t>(elapsed_ns, 1);
}

// Note [Op costs exclude making room]
// An operator's measured cost is its wall time, and the allocations it
// makes run this hook inside that time: choosing victims and freeing
// them. Under a tight budget that was most of a small op's time (nn.GRU
// at 0.75: 213 ms of measured op costs in a step that takes 43 ms
// plain), so the costs the heuristic weighs grew with the memory
// pressure at the moment the op ran, and the trace overstated the work.
// The time spent here is counted (room_ns_) and run_op subtracts what
// its call spent. (An intra-op worker's hook time may overlap the
// caller's; the cost is at least 1 ns either way.)
void Context::make_room_hook(std::int64_t pending, std::int64_t bytes) {
  Context& c = get();
  std::lock_guard<std::recursive_mutex> lock(c.mutex_);
  struct Count {  // adds this call's time to room_ns_, also on a throw
    Context& c;
    std::chrono::steady_clock::time_point start =
        std::chrono::steady_clock::now();
    ~Count() {
      c.room_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    }
  } count{c};
  c.sync_process_budget(pending);
  const std::int64_t needed = c.moved_bytes_ + pending + bytes;
  c.explained([&] { c.runtime_.make_room(needed); });
  c.budget_.note_peak(c.runtime_.stats().memory_bytes + needed);
}

// Plain allocations evict only under a process budget, and never from
// inside a runtime call (whose own window hook makes room).
void Context::outside_allocation_hook(std::int64_t, std::int64_t bytes) {
  Context& c = get();
  if (!c.budget_.bounds_process()) return;
  // Another thread inside the kernel (an intra-op worker, or a thread
  // that waits for this one) must not be waited for: skip, not deadlock.
  std::unique_lock<std::recursive_mutex> lock(c.mutex_, std::try_to_lock);
  if (!lock.owns_lock() || c.releases_.busy()) return;
  CoreScope scope(c.releases_);
  make_room_hook(0, bytes);
}

// Note [The floor] (budget_state.cpp)
std::string Context::explain_out_of_memory(const OutOfMemory& e) const {
  const Graph& g = runtime_.graph();
  std::int64_t held = 0;
  std::unordered_set<StorageId> seen;
  cells_.for_each([&](const Cell& c) {
    if (!c.held) return;
    const StorageId s = g.tensor(c.id).storage;
    if (seen.insert(s).second && g.storage(s).resident) {
      held += g.storage(s).bytes;
    }
  });
  return budget_.explain(e, held, current_op_);
}

void Context::note_peak() {
  budget_.note_peak(runtime_.stats().memory_bytes);
}

at::Tensor Context::wrap_constant(const at::Tensor& t) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (!t.defined() || as_checkpoint(t) != nullptr) return t;
  DTR_CHECK(accounting_for(t.device().type()) == &accounting_ &&
                t.layout() == at::kStrided,
            "[dtr] checkpoint: only dense CPU tensors are supported (dtr "
            "accounts for the CPU's memory only; docs/cuda.md), got ",
            t.toString(), " on ", t.device());
  CoreScope scope(releases_);
  auto cell = cells_.make(checkpoint_id(t), t.detach());  // t's version counter
  cell->external_grad_leaf = t.requires_grad() && t.is_leaf();
  cell->program_input = true;
  mark_visible(*cell, cell->value);
  holds_.hold(cell);
  at::Tensor wrapper = make_wrapper(cell);
  // A write into t outside DTR (under no_grad, between forward and
  // backward) must reach what autograd saved: the wrapper shares t's
  // version counter, so backward refuses what PyTorch refuses. Tensors
  // made under torch.inference_mode() have no version counter.
  if (!t.is_inference() && !wrapper.is_inference()) {
    wrapper.unsafeGetTensorImpl()->set_version_counter(
        t.unsafeGetTensorImpl()->version_counter());
  }
  return wrapper;
}

// Note [Inputs are outside the budget]
// The program made this tensor and (in the usual `data[i]` loop) still
// holds it; DTR can never evict or recompute it. Like a parameter it is
// memory outside DTR's control: it is charged 0 bytes to the budget
// (and to the trace) and shows up in outside_bytes. Counting it made a
// budget of 50% infeasible for torchvision's resnet18, whose tightest
// operator (the first native_batch_norm_backward) alone needs ~48% of
// the peak (see docs/torch.md).
// A second tensor in a buffer already given to checkpoint() (m(x, x),
// x[0] and x[1]) is an alias in the same storage, so a write through one
// sees every lineage that reads the other.
TensorId Context::checkpoint_id(const at::Tensor& t) {
  const std::optional<StorageId> shared =
      shared_.storage_of_input(t.storage().unsafeGetStorageImpl());
  if (!shared) {
    runtime_.begin_call({});
    OutputSpec spec{0, -1};
    const TensorId id = runtime_.end_call("checkpoint", {}, {&spec, 1}, 0)[0];
    listeners_.notify([&](RunListener& l) { l.constant(id, 0); });
    return id;
  }
  TensorId member = kNoId;
  for (TensorId m : runtime_.graph().storage(*shared).tensors) {
    if (cells_.live(m)) member = m;
  }
  DTR_ASSERT(member != kNoId, "checkpointed buffer without a live cell");
  CallGuard guard(runtime_, {&member, 1});
  OutputSpec spec{0, 0};
  const TensorId id = guard.end("checkpoint", {&spec, 1}, 0)[0];
  listeners_.notify([&](RunListener& l) {
    l.call(runtime_.graph(), "checkpoint", {&member, 1}, {&id, 1}, {&spec, 1},
           0, 0);
  });
  return id;
}

// Note [Program-visible buffers]
// Some buffers the program reaches without going through DTR: a tensor it
// gave to checkpoint() (a module's input, a state it passes in), views of
// it, and values it took an alias of (numpy(), storage(): hold_value()).
// Their storage is resident for good, and a write into any value of it --
// through any view -- must land in that buffer, where the program looks,
// never in a copy (plan_external_write).
void Context::mark_visible(Cell& cell, at::Tensor buffer) {
  cell.external = std::move(buffer);
  shared_.add_visible(runtime_.graph().tensor(cell.id).storage,
                      cell.program_input
                          ? cell.external.storage().unsafeGetStorageImpl()
                          : nullptr);
}

void Context::unmark_visible(const Cell& cell) {
  if (!cell.external.defined()) return;
  shared_.remove_visible(runtime_.graph().tensor(cell.id).storage,
                         cell.external.storage().unsafeGetStorageImpl());
}

at::Tensor Context::decheckpoint(const at::Tensor& t) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  auto* w = as_checkpoint(t);
  if (w == nullptr) return t;
  check_current(*w);
  std::shared_ptr<Cell> cell = w->handle()->cell;
  if (!cell->value.defined()) {
    CoreScope scope(releases_);
    explained([&] { runtime_.materialize(cell->id); });
  }
  return cell->value;
}

at::Tensor Context::hold_value(const at::Tensor& t) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  auto* w = as_checkpoint(t);
  if (w == nullptr) return t;
  check_current(*w);
  std::shared_ptr<Cell> cell = w->handle()->cell;
  explained([&] { holds_.hold(cell); });
  if (!cell->external.defined()) mark_visible(*cell, cell->value);
  return cell->value;
}

void Context::set_recorder(TraceRecorder* recorder) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  listeners_.set_recorder(recorder);
  if (recorder != nullptr) record_values_made_before(*recorder);
}

// Note [Values made before recording]
// A recording usually begins mid-program: at a step boundary, the
// previous step's output and loss are still held (Note [Lineage cut])
// until the program rebinds their names, halfway through the recorded
// step. A trace that did not know them would let the simulator spend
// memory the runtime cannot, and predict far fewer evictions (nn.GRU at
// 0.75 of its peak: 213 KB held, 8 % of the budget; docs/torch.md). So
// every live value is defined when recording begins, in id order: the
// first value of each storage as a call of no arguments of the storage's
// size, the others as its aliases. A held value costs 0 (it is never
// recomputed) and is pinned; an evictable one costs what its op cost, so
// the simulator may evict it (and replays it as from nothing: an
// approximation). A value the program no longer references, kept only as
// lineage, is released at once, as the runtime already did; the
// simulator then forgets it (Note [Forgetting dead values]), since the
// trace has no lineage that reads it, where the runtime could still
// evict it: an under-estimate, only when recording begins mid-step, as
// is an evicted value, written resident (the trace cannot say otherwise).
void Context::record_values_made_before(TraceRecorder& recorder) {
  const Graph& g = runtime_.graph();
  std::unordered_map<StorageId, TensorId> first_of;
  for (TensorId id = 0; id < cells_.end_id(); ++id) {
    std::shared_ptr<Cell> cell = cells_.live(id);
    if (cell == nullptr) continue;
    const auto& t = g.tensor(id);
    auto [root, added] = first_of.try_emplace(t.storage, id);
    const std::int64_t cost = cell->held ? 0 : g.op(t.op).cost_ns;
    recorder.made_before(id, g.storage(t.storage).bytes,
                         added ? kNoId : root->second, cost);
    if (cell->held) recorder.pin(id);
    if (!cell->core_ref) recorder.release(id);
  }
}

void Context::set_heuristic(const std::string& name) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (name == sim::kAutoHeuristic) {
    if (!auto_.enabled()) auto_.set_enabled(true);
    return;
  }
  runtime_.set_heuristic(make_heuristic(name));  // throws if unknown
  auto_.set_enabled(false);
}

std::string Context::heuristic_name() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return auto_.enabled() ? std::string(sim::kAutoHeuristic)
                         : std::string(runtime_.heuristic().name());
}

Stats Context::stats() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const RuntimeStats& rs = runtime_.stats();
  const AllocatorCounters ac = accounting_.counters();
  Stats s;
  s.budget_bytes = budget_.limit();
  s.dtr_bytes = rs.memory_bytes;
  s.dtr_peak_bytes = std::max(budget_.peak(), rs.memory_bytes);
  s.allocator_bytes = ac.bytes;
  s.allocator_peak_bytes = ac.peak_bytes;
  s.outside_bytes = ac.bytes - rs.memory_bytes;
  const Graph& g = runtime_.graph();
  s.held_bytes = held_bytes();
  s.ops = ops_;
  s.remat_ops = rs.remat_ops;
  s.evictions = rs.evictions;
  s.eager_evictions = rs.eager_evictions;
  s.lineage_cuts = holds_.lineage_cuts();
  s.escapes = escapes_.count();
  s.remat_compute_ns = rs.remat_compute_ns;
  s.choose_wall_ns = rs.choose_wall_ns;
  s.replay_wall_ns = rs.replay_wall_ns;
  s.heuristic = std::string(runtime_.heuristic().name());
  s.auto_heuristic = auto_.enabled();
  s.steps = steps_;
  s.auto_decisions = auto_.decisions();
  s.auto_decision_ns = auto_.decision_ns();
  s.graph_ops = static_cast<std::int64_t>(g.live_op_count());
  s.graph_tensors = static_cast<std::int64_t>(g.live_tensor_count());
  s.graph_storages = static_cast<std::int64_t>(g.live_storage_count());
  StagingStats staged = staging_totals_;
  if (const Staging* st = runtime_.staging()) {
    staged.staged_steps += st->stats().staged_steps;
    staged.diverged_steps += st->stats().diverged_steps;
  }
  s.staged_steps = staged.staged_steps;
  s.diverged_steps = staged.diverged_steps;
  s.eviction_searches = rs.eviction_searches;
  return s;
}

std::int64_t Context::held_bytes() const {
  const Graph& g = runtime_.graph();
  std::unordered_set<StorageId> held;
  cells_.for_each([&](const Cell& c) {
    if (c.held) held.insert(g.tensor(c.id).storage);
  });
  std::int64_t bytes = 0;
  for (StorageId h : held) bytes += g.storage(h).bytes;
  return bytes;
}

void Context::evict_all() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  CoreScope scope(releases_);
  runtime_.evict_all();
}

void Context::reset_peak() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  budget_.reset_peak(runtime_.stats().memory_bytes);
  accounting_.reset_peak();
}

}  // namespace dtr::pt
