#include "dtr/torch/checkpoint_context.h"

#include <ATen/core/Generator.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <optional>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <unordered_set>

#include "dtr/core/error.h"
#include "dtr/torch/counting_allocator.h"

namespace dtr::pt {

namespace {

// Tensors inside an IValue, in a fixed traversal order: a Tensor, the
// elements of a Tensor[] or of a Tensor?[] (other lists are left alone).
template <typename F>
void for_each_tensor(const c10::IValue& v, F&& f) {
  if (v.isTensor()) {
    f(v.toTensor());
  } else if (v.isTensorList()) {
    auto list = v.toTensorList();
    for (std::size_t i = 0; i < list.size(); ++i) f(list.get(i));
  } else if (v.isList()) {
    auto list = v.toList();
    for (std::size_t i = 0; i < list.size(); ++i) {
      c10::IValue e = list.get(i);
      if (e.isTensor()) f(e.toTensor());
    }
  }
}

// A copy of `v` with every tensor replaced by f(tensor), same order.
template <typename F>
c10::IValue map_tensors(const c10::IValue& v, F&& f) {
  if (v.isTensor()) return f(v.toTensor());
  if (v.isTensorList()) {
    auto list = v.toTensorList();
    c10::List<at::Tensor> out;
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) out.push_back(f(list.get(i)));
    return out;
  }
  if (v.isList()) {
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      c10::IValue e = list.get(i);
      out.push_back(e.isTensor() ? c10::IValue(f(e.toTensor())) : e);
    }
    return out;
  }
  return v;
}

std::string op_name(const c10::OperatorHandle& op) {
  const auto& n = op.operator_name();
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

bool is_write(const c10::Argument& a) {
  return a.alias_info() != nullptr && a.alias_info()->isWrite();
}

// Note [Random operators]
// A replay must draw the same numbers as the first run: we save the state
// of the generator the op uses before it runs and, on replay, swap it in and
// restore the current state afterwards, so replays never perturb the
// program's random stream. Ops without a Generator argument that still draw
// from the default generator are listed by name.
bool is_random(const c10::FunctionSchema& schema) {
  static const std::unordered_set<std::string> kNames = {
      "aten::native_dropout", "aten::rand_like",   "aten::randn_like",
      "aten::randint_like",   "aten::bernoulli",   "aten::bernoulli_",
      "aten::normal",         "aten::normal_",     "aten::uniform_",
      "aten::multinomial",    "aten::poisson",     "aten::exponential_",
      "aten::random_",        "aten::rrelu_with_noise"};
  if (kNames.count(schema.name()) != 0) return true;
  for (const auto& a : schema.arguments()) {
    if (a.type()->str().find("Generator") != std::string::npos) return true;
  }
  return false;
}

// Operators that replace a tensor's storage or reinterpret it in place:
// copy-on-write cannot express them.
void check_supported(const c10::FunctionSchema& schema,
                     const std::string& name) {
  static const std::unordered_set<std::string> kUnsupported = {
      "aten::set_", "aten::resize_", "aten::resize_as_", "aten::as_strided_",
      "aten::record_stream", "aten::share_memory_", "aten::_coalesced_"};
  if (kUnsupported.count(schema.name()) != 0) {
    throw UnsupportedOperator(detail::concat(
        "[dtr] ", name,
        " is not supported on checkpointed tensors (it changes a tensor's "
        "storage in place); call dtr::pt::decheckpoint() first"));
  }
  for (const auto& a : schema.arguments()) {
    if (is_write(a) && a.type()->kind() == c10::TypeKind::ListType) {
      throw UnsupportedOperator(detail::concat(
          "[dtr] ", name,
          " is not supported on checkpointed tensors (it mutates a list of "
          "tensors in place)"));
    }
  }
}

at::Tensor cow_clone(const at::Tensor& v) {
  if (v.is_non_overlapping_and_dense()) {
    return at::empty_strided(v.sizes(), v.strides(), v.options()).copy_(v);
  }
  return v.clone(at::MemoryFormat::Contiguous);
}

const c10::StorageImpl* storage_of(const at::Tensor& t) {
  return t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// DTR_HEURISTIC names the eviction heuristic; exact `dtr` by default (see
// docs/torch.md, "Choice of heuristic").
const char* heuristic_from_env() {
  const char* name = std::getenv("DTR_HEURISTIC");
  return name != nullptr ? name : "dtr";
}

// Restores a generator's state when a replay ends (also on exceptions).
struct RngSwap {
  at::Generator gen;
  at::Tensor saved;
  RngSwap(at::Generator g, const at::Tensor& state) : gen(std::move(g)) {
    std::lock_guard<std::mutex> lock(gen.mutex());
    saved = gen.get_state();
    gen.set_state(state);
  }
  ~RngSwap() {
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(saved);
  }
};

}  // namespace

// Every runtime call that can recompute or evict runs inside a CoreScope:
// releases and unlocks triggered meanwhile (a Cell dying, a Handle swapped)
// are queued and applied when the outermost scope ends, after end_call or
// abort_call unlocked the inputs, so eager eviction sees them unlocked.
struct Context::CoreScope {
  Context& c;
  explicit CoreScope(Context& ctx) : c(ctx) { ++c.core_depth_; }
  ~CoreScope() {
    if (--c.core_depth_ == 0) c.flush();
  }
};

Context& Context::get() {
  static Context* context = new Context();  // never destroyed: tensors
  return *context;  // may die during static destruction
}

Context::Context()
    : runtime_(RuntimeOptions{.budget_bytes = kUnlimited},
               make_heuristic(heuristic_from_env()), this) {
  install_counting_allocator();
  debug_ = std::getenv("DTR_DEBUG") != nullptr;
}

std::shared_ptr<Cell> Context::new_cell(TensorId id, at::Tensor value) {
  auto cell = std::make_shared<Cell>();
  cell->id = id;
  cell->value = std::move(value);
  if (cells_.size() <= id) cells_.resize(id + 1, nullptr);
  cells_[id] = cell.get();
  return cell;
}

void Context::flush() {
  ++core_depth_;
  try {
    while (!pending_.empty()) {
      Pending p = pending_.back();
      pending_.pop_back();
      if (p.unlock) runtime_.abort_call({&p.id, 1});
      if (!p.release) evict_if_unreferenced(p.id);
      if (p.release) {
        runtime_.release(p.id);
        if (recorder_ != nullptr) recorder_->release(p.id);
      }
    }
  } catch (...) {
    --core_depth_;
    throw;
  }
  --core_depth_;
}

// Workaround: Runtime::release evicts eagerly only if the storage is
// unlocked at that moment; a storage whose last reference went while it
// was locked stays resident after the unlock. Retain+release re-runs the
// eager check. (Core request: evict on unlock when ext_refs == 0.)
void Context::evict_if_unreferenced(TensorId id) {
  const Graph& g = runtime_.graph();
  const Storage& st = g.storage(g.tensor(id).storage);
  if (st.material && st.ext_refs == 0 && st.locks == 0 && !st.pinned &&
      !st.constant && !st.banished) {
    runtime_.retain(id);
    runtime_.release(id);
  }
}

void Context::on_last_handle(Cell& cell) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (cell.held || !cell.core_ref) return;
  cell.core_ref = false;
  pending_.push_back({cell.id, false, true});
  if (core_depth_ == 0) flush();
}

void Context::on_cell_dead(Cell& cell) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (cell.id < cells_.size()) cells_[cell.id] = nullptr;
  // Even without a reference of its own, a value rematerialized for a
  // lineage that just died must leave the budget with its memory.
  pending_.push_back({cell.id, cell.held, cell.core_ref});
  if (core_depth_ == 0) flush();
}

void Context::on_remat_dead(Remat& remat) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  remats_.erase(remat.op_id);
  for (const c10::StorageImpl* s : remat.captured) {
    auto it = captured_.find(s);
    if (it != captured_.end() && --it->second == 0) captured_.erase(it);
  }
}

void Context::hold(const std::shared_ptr<Cell>& cell) {
  if (cell->held) return;
  CoreScope scope(*this);
  runtime_.begin_call({&cell->id, 1});  // materializes and locks
  cell->held = true;
  cell->remat.reset();
}

// Note [Lineage cut]
// A value's lineage reads its inputs as they were. When something it read
// is about to be overwritten in place -- a plain parameter updated by the
// optimizer, or a storage shared by several live views -- we make every
// value the program still holds resident and unevictable ("held", until it
// dies) and drop every rematerializer, so nothing is ever replayed against
// new contents. Values only lineage kept alive die with it. In training
// this happens once per optimizer step: an iteration boundary.
void Context::cut_lineage() {
  CoreScope scope(*this);
  ++lineage_cuts_;
  std::vector<std::shared_ptr<Cell>> live;
  for (Cell* c : cells_) {
    if (c != nullptr) live.push_back(c->shared_from_this());
  }
  for (auto& c : live) {
    if (c->handles > 0 && !c->held) {
      runtime_.begin_call({&c->id, 1});
      c->held = true;
      if (debug_) {
        const Graph& g = runtime_.graph();
        std::fprintf(stderr, "[dtr]   cut holds x%u (%s, %lld bytes)\n",
                     c->id, g.op(g.tensor(c->id).op).name.c_str(),
                     static_cast<long long>(
                         g.storage(g.tensor(c->id).storage).bytes));
      }
    }
  }
  for (auto& c : live) c->remat.reset();
  live.clear();
}

Context::Mutation Context::classify(const at::Tensor& wrapper,
                                    const Cell& cell, int extra_refs) const {
  const Graph& g = runtime_.graph();
  const dtr::Tensor& t = g.tensor(cell.id);
  bool shared = t.is_alias;
  for (TensorId other : g.storage(t.storage).tensors) {
    if (other != cell.id && other < cells_.size() && cells_[other] != nullptr) {
      shared = true;
    }
  }
  if (shared) {
    // Views re-derived from the mutated storage see the write, as views do
    // in PyTorch; only a live lineage that read the storage into another
    // storage (which could be evicted and replayed) needs a cut.
    for (TensorId member : g.storage(t.storage).tensors) {
      for (OpId consumer : g.tensor(member).consumers) {
        if (remats_.count(consumer) == 0) continue;
        for (TensorId out : g.op(consumer).outputs) {
          if (g.tensor(out).storage != t.storage) return Mutation::kShared;
        }
      }
    }
    return Mutation::kSharedViews;
  }
  // Nothing but the program's handle reads this value: no need to keep the
  // old one. A recomputable value is mutated in place and the result is a
  // new value whose replay recomputes the old one and mutates a copy; a
  // value that cannot be recomputed is mutated and stays held.
  const long refs = cell.weak_from_this().use_count() - extra_refs;
  if (refs == cell.handles && cell.handles == 1) {
    return cell.remat ? Mutation::kMove : Mutation::kDirect;
  }
  const bool in_graph = wrapper.requires_grad() || wrapper.grad_fn();
  if (!in_graph && refs == cell.handles) return Mutation::kDirect;
  return Mutation::kCopyOnWrite;
}

std::int64_t Context::cost_of(std::int64_t elapsed_ns,
                              std::int64_t bytes) const {
  if (cost_model_ == CostModel::kBytes) return bytes + 1;
  return std::max<std::int64_t>(elapsed_ns, 1);
}

void Context::make_room_hook(std::int64_t bytes) {
  Context& c = get();
  try {
    c.runtime_.make_room(bytes);
  } catch (const OutOfMemory&) {
    if (c.debug_) c.dump_summary(std::cerr);
    throw;
  }
  c.dtr_peak_bytes_ = std::max(c.dtr_peak_bytes_,
                               c.runtime_.stats().memory_bytes + bytes);
}

// Note [Escapes]
// An in-place op that writes checkpointed values into a plain tensor runs
// in place and returns that plain tensor, so what is computed from it stays
// outside DTR (docs/torch.md, "Escape hatch"). With grad mode off this is
// the optimizer or the engine updating parameters and their state, which
// is expected; with grad mode on it is model code (e.g. a plain
// torch::zeros state mutated by lstm_cell), so we count it and say so once
// per operator.
void Context::note_escape(const std::string& name) {
  ++escapes_;
  if (warned_escapes_.insert(name).second) {
    std::fprintf(stderr,
                 "[dtr] warning: %s writes checkpointed values into a plain "
                 "tensor; it and what is computed from it stay outside the "
                 "budget (create it from a checkpointed tensor, e.g. "
                 "x.new_zeros(...), or checkpoint() it)\n",
                 name.c_str());
  }
}

void Context::note_peak() {
  dtr_peak_bytes_ =
      std::max(dtr_peak_bytes_, runtime_.stats().memory_bytes);
}

// Runs `op` on the plain values of its arguments without recording it.
void Context::call_plain(const c10::OperatorHandle& op,
                         torch::jit::Stack* stack,
                         std::vector<c10::IValue> args) {
  CoreScope scope(*this);
  std::vector<std::shared_ptr<Cell>> cells;
  std::vector<TensorId> ids;
  for (const auto& a : args) {
    for_each_tensor(a, [&](const at::Tensor& t) {
      if (auto* w = as_checkpoint(t)) {
        cells.push_back(w->handle()->cell);
        ids.push_back(cells.back()->id);
      }
    });
  }
  runtime_.begin_call(ids);
  try {
    std::size_t k = 0;
    for (const auto& a : args) {
      stack->push_back(map_tensors(a, [&](const at::Tensor& t) {
        return as_checkpoint(t) != nullptr ? cells[k++]->value : t;
      }));
    }
    at::AutoDispatchBelowADInplaceOrView guard;
    op.callBoxed(stack);
  } catch (...) {
    runtime_.abort_call(ids);
    throw;
  }
  runtime_.abort_call(ids);
}

// Note [The boxed kernel]
// 1. Classify each mutated argument (schema `(a!)`, plus batch norm's
//    running statistics, whose schema hides the write):
//    - copy-on-write: a value in the autograd graph or read by lineage; the
//      op runs on a clone, the result is a new value swapped into the
//      wrapper's Handle, and the op stays replayable;
//    - direct: a value outside the autograd graph (.grad, optimizer state)
//      that nothing else reads: mutated in place, then held;
//    - shared: a storage with several live views: lineage cut, then in
//      place (every view sees the write, as in PyTorch);
//    - plain: a plain tensor (a parameter): lineage cut if some lineage
//      read it, then in place.
// 2. begin_call materializes and locks the wrapped inputs; the op runs on
//    plain tensors below autograd inside an allocation window, so every
//    allocation first makes room in the budget.
// 3. Outputs: a result sharing an input's storage is an alias of it, a
//    fresh storage is a new value; end_call records them and the Remat
//    keeps the operator, the non-tensor arguments and the input cells.
void Context::call(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const c10::FunctionSchema& schema = op.schema();
  const std::string name = op_name(op);
  check_supported(schema, name);
  const auto& formals = schema.arguments();
  const std::size_t n = formals.size();
  std::vector<c10::IValue> args(std::make_move_iterator(stack->end() - n),
                                std::make_move_iterator(stack->end()));
  stack->erase(stack->end() - n, stack->end());

  // Note [unsafe_split]
  // lstm_cell (and GRU cells) split the gates with unsafe_split and then
  // apply sigmoid_/tanh_ to each chunk in place. On aliases of one storage
  // with live siblings, an in-place write must run directly and holds the
  // whole storage (one gates buffer per time step: the LSTM could not go
  // below ~95% of its peak). PyTorch leaves the aliasing of these outputs
  // to the caller ("safe as long as only the input, or only the outputs,
  // are modified in place"), so we return independent clones: each chunk
  // is a fresh, recomputable storage, mutated by copy-on-write/move like
  // any other value, and the split input is evictable again.
  if (!in_unsafe_split_ &&
      (schema.name() == "aten::unsafe_split" ||
       schema.name() == "aten::unsafe_split_with_sizes") &&
      as_checkpoint(args[0].toTensor()) != nullptr) {
    for (auto& a : args) stack->push_back(std::move(a));
    in_unsafe_split_ = true;
    try {
      call(op, stack);
    } catch (...) {
      in_unsafe_split_ = false;
      throw;
    }
    in_unsafe_split_ = false;
    auto parts = stack->back().toTensorList();
    stack->pop_back();
    c10::List<at::Tensor> out;
    out.reserve(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      at::Tensor p = parts.get(i);
      out.push_back(as_checkpoint(p) != nullptr ? p.clone() : p);
    }
    parts = c10::List<at::Tensor>();
    stack->push_back(std::move(out));
    return;
  }

  if (schema.name() == "aten::detach_") {  // autograd metadata only
    stack->push_back(std::move(args[0]));
    return;
  }
  if (schema.name() == "aten::_to_copy") {
    auto device = schema.argumentIndexWithName("device");
    if (device && !args[*device].isNone()) {
      // An explicit device asks for a real tensor (printing does this).
      call_plain(op, stack, std::move(args));
      return;
    }
  }

  // Batch norm in training mode updates running_mean/var in place although
  // its schema says nothing: treat them as mutated, and replay with None.
  std::vector<bool> write(n);
  for (std::size_t i = 0; i < n; ++i) write[i] = is_write(formals[i]);
  std::vector<int> stripped;
  if (schema.name() == "aten::native_batch_norm" && args[5].toBool()) {
    for (int i : {3, 4}) {
      if (args[i].isTensor() && args[i].toTensor().defined()) {
        stripped.push_back(i);
        write[i] = true;
      }
    }
  }
  auto is_stripped = [&](std::size_t i) {
    return std::find(stripped.begin(), stripped.end(), static_cast<int>(i)) !=
           stripped.end();
  };

  bool direct = false;
  bool need_cut = false;
  bool any_cow = false;
  std::vector<TensorId> shared_storages;  // mutated in place, views live
  std::vector<bool> moved(n);  // Mutation::kMove arguments
  for (std::size_t i = 0; i < n; ++i) {
    if (!write[i] || args[i].isNone()) continue;
    if (!args[i].isTensor()) {
      throw UnsupportedOperator(detail::concat(
          "[dtr] ", name, ": mutated argument '", formals[i].name(),
          "' is not a tensor"));
    }
    const at::Tensor& t = args[i].toTensor();
    if (!t.defined()) continue;
    if (auto* w = as_checkpoint(t)) {
      if (is_stripped(i)) {
        throw UnsupportedOperator(detail::concat(
            "[dtr] ", name, ": running statistics ('", formals[i].name(),
            "') must be plain tensors, not checkpointed ones"));
      }
      Mutation m = classify(t, *w->handle()->cell, 0);
      if (debug_) {
        const Cell& cc = *w->handle()->cell;
        std::fprintf(stderr,
                     "[dtr]   %s arg %zu mutation %d refs %ld handles %d "
                     "remat %d\n",
                     name.c_str(), i, static_cast<int>(m),
                     cc.weak_from_this().use_count(), cc.handles,
                     static_cast<int>(cc.remat != nullptr));
      }
      if (m == Mutation::kMove) moved[i] = true;
      if (m == Mutation::kCopyOnWrite || m == Mutation::kMove) {
        any_cow = true;
      } else {
        direct = true;
      }
      if (m == Mutation::kShared) need_cut = true;
      if (m == Mutation::kSharedViews) shared_storages.push_back(w->handle()->cell->id);
    } else {
      if (!is_stripped(i)) direct = true;
      if (captured_.count(storage_of(t)) != 0) need_cut = true;
      if (!is_stripped(i) && at::GradMode::is_enabled()) note_escape(name);
    }
  }
  // A copy-on-write candidate in an op that must run in place: its old
  // value may be read by lineage, so cut first.
  if (direct && any_cow) need_cut = true;
  if (need_cut) cut_lineage();
  if (debug_) {
    std::fprintf(stderr, "[dtr] %s direct=%d cut=%d mem=%lld\n", name.c_str(),
                 int(direct), int(need_cut),
                 static_cast<long long>(runtime_.stats().memory_bytes));
  }

  // Tensor slots in traversal order (stripped arguments excluded).
  std::vector<std::shared_ptr<Cell>> slot_cells;
  std::vector<int> slot_arg;
  std::vector<int> slot_input;
  std::vector<TensorId> ids;
  for (std::size_t i = 0; i < n; ++i) {
    if (is_stripped(i)) continue;
    for_each_tensor(args[i], [&](const at::Tensor& t) {
      auto* w = as_checkpoint(t);
      slot_cells.push_back(w != nullptr ? w->handle()->cell : nullptr);
      slot_arg.push_back(static_cast<int>(i));
      if (w != nullptr) {
        slot_input.push_back(static_cast<int>(ids.size()));
        ids.push_back(slot_cells.back()->id);
      } else {
        slot_input.push_back(-1);
      }
    });
  }

  CoreScope scope(*this);
  ++ops_;
  try {
    runtime_.begin_call(ids);  // may rematerialize inputs: runs out too
  } catch (const OutOfMemory&) {
    if (debug_) dump_summary(std::cerr);
    throw;
  }

  const bool random = is_random(schema);
  at::Generator gen;
  at::Tensor rng_state;
  if (random) {
    for (const auto& a : args) {
      if (a.isGenerator()) gen = a.toGenerator();
    }
    if (!gen.defined()) gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> g(gen.mutex());
    rng_state = gen.get_state();
  }

  std::vector<at::Tensor> slot_values(slot_cells.size());
  std::vector<int> cow_slots;
  std::vector<c10::IValue> results;
  std::int64_t elapsed_ns = 0;
  const std::size_t n_returns = schema.returns().size();
  try {
    AllocationWindow window(&make_room_hook);
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (is_stripped(i)) {
        stack->push_back(args[i]);
        continue;
      }
      stack->push_back(map_tensors(args[i], [&](const at::Tensor& t) {
        const std::size_t slot = k++;
        at::Tensor v = t;
        if (slot_cells[slot]) {
          v = slot_cells[slot]->value;
          DTR_ASSERT(v.defined(), "input of ", name, " not resident");
          if (write[i] && !direct) {
            if (!moved[i]) v = cow_clone(v);
            cow_slots.push_back(static_cast<int>(slot));
          }
        }
        slot_values[slot] = v;
        return v;
      }));
    }
    const std::int64_t start = now_ns();
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      op.callBoxed(stack);
    }
    elapsed_ns = now_ns() - start;
    results.assign(std::make_move_iterator(stack->end() - n_returns),
                   std::make_move_iterator(stack->end()));
    stack->erase(stack->end() - n_returns, stack->end());
  } catch (...) {
    runtime_.abort_call(ids);
    throw;
  }

  // Classify the results.
  const auto& rets = schema.returns();
  std::vector<OutputSpec> specs;
  std::vector<at::Tensor> out_values;
  std::vector<int> out_cow_arg;  // per spec: the in-place argument, or -1
  std::vector<int> result_map;
  std::vector<int> inplace_arg(n_returns, -1);
  std::int64_t new_bytes = 0;
  for (std::size_t r = 0; r < n_returns; ++r) {
    if (is_write(rets[r])) {
      for (std::size_t j = 0; j < n; ++j) {
        if (is_write(formals[j]) && formals[j].alias_info()->beforeSets() ==
                                        rets[r].alias_info()->beforeSets()) {
          inplace_arg[r] = static_cast<int>(j);
          break;
        }
      }
      DTR_ASSERT(inplace_arg[r] >= 0, "no argument for in-place result of ",
                 name);
    }
    for_each_tensor(results[r], [&](const at::Tensor& v) {
      const int j = inplace_arg[r];
      if (j >= 0) {
        if (!direct && as_checkpoint(args[j].toTensor()) != nullptr) {
          result_map.push_back(static_cast<int>(specs.size()));
          specs.push_back({static_cast<std::int64_t>(v.storage().nbytes()),
                           -1});
          new_bytes += specs.back().bytes;
          out_values.push_back(v);
          out_cow_arg.push_back(j);
        } else {
          result_map.push_back(-1);
        }
        return;
      }
      if (!v.defined() || !v.has_storage()) {
        result_map.push_back(-1);
        return;
      }
      const c10::StorageImpl* s = storage_of(v);
      int alias_of = -1;
      bool plain_alias = false;
      for (std::size_t k = 0; k < slot_values.size(); ++k) {
        if (storage_of(slot_values[k]) != s) continue;
        const bool cow = std::find(cow_slots.begin(), cow_slots.end(),
                                   static_cast<int>(k)) != cow_slots.end();
        if (slot_cells[k] && !cow) {
          alias_of = slot_input[k];
        } else {
          plain_alias = true;
        }
        break;
      }
      if (plain_alias) {  // a view of a parameter: stays plain
        result_map.push_back(-1);
        return;
      }
      if (alias_of < 0) {
        for (const auto& o : out_values) {
          if (storage_of(o) == s) {
            runtime_.abort_call(ids);
            throw UnsupportedOperator(detail::concat(
                "[dtr] ", name,
                ": two results share one new storage, which checkpointed "
                "tensors cannot represent"));
          }
        }
      }
      result_map.push_back(static_cast<int>(specs.size()));
      specs.push_back(
          {alias_of >= 0 ? 0 : static_cast<std::int64_t>(s->nbytes()),
           alias_of});
      new_bytes += specs.back().bytes;
      out_values.push_back(v);
      out_cow_arg.push_back(-1);
    });
  }

  std::vector<std::shared_ptr<Cell>> out_cells;
  if (specs.empty()) {
    runtime_.abort_call(ids);
  } else {
    const std::int64_t cost = cost_of(elapsed_ns, new_bytes);
    // No note_peak() here: a kMove output is counted before its old value
    // is evicted (same buffer); the allocation hook tracks the real level.
    std::vector<TensorId> out_ids = runtime_.end_call(name, ids, specs, cost);
    if (recorder_ != nullptr) {
      std::vector<OutputSpec> rec(specs);
      for (auto& o : rec) {
        if (o.alias_of >= 0) {
          const Graph& g = runtime_.graph();
          o.bytes = g.storage(g.tensor(ids[o.alias_of]).storage).bytes;
        }
      }
      recorder_->call(name, ids, out_ids, rec, cost);
    }
    for (std::size_t o = 0; o < specs.size(); ++o) {
      out_cells.push_back(new_cell(out_ids[o], out_values[o]));
    }
    if (!direct) {
      auto remat = std::make_shared<Remat>(op);
      for (std::size_t i = 0; i < n; ++i) {
        if (is_stripped(i)) {
          remat->args.emplace_back();  // None
          continue;
        }
        remat->args.push_back(map_tensors(args[i], [&](const at::Tensor& t) {
          return as_checkpoint(t) != nullptr ? at::Tensor() : t;
        }));
      }
      remat->slots = slot_input;
      for (std::size_t k = 0; k < slot_cells.size(); ++k) {
        if (slot_cells[k]) {
          remat->inputs.push_back(slot_cells[k]);
        } else if (const auto* s = storage_of(slot_values[k])) {
          remat->captured.push_back(s);
          ++captured_[s];
        }
      }
      remat->stripped_args = stripped;
      remat->cow_slots = cow_slots;
      remat->result_map = result_map;
      remat->outputs = out_ids;
      remat->generator = gen;
      remat->rng_state = rng_state;
      remat->op_id = runtime_.graph().tensor(out_ids[0]).op;
      remats_[remat->op_id] = remat.get();
      for (auto& c : out_cells) c->remat = remat;
    } else {
      for (auto& c : out_cells) hold(c);
    }
  }
  if (direct) {
    // Every live cell of a storage written in place stays resident: its
    // lineage would recompute the old contents.
    for (TensorId member_of : shared_storages) {
      const Graph& g = runtime_.graph();
      std::vector<std::shared_ptr<Cell>> members;
      for (TensorId m : g.storage(g.tensor(member_of).storage).tensors) {
        if (m < cells_.size() && cells_[m] != nullptr) {
          members.push_back(cells_[m]->shared_from_this());
        }
      }
      for (auto& c : members) hold(c);
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (!write[j] || !args[j].isTensor()) continue;
      if (auto* w = as_checkpoint(args[j].toTensor())) {
        hold(w->handle()->cell);
        w->refresh_metadata(w->handle()->cell->value);
      }
    }
  }

  for (TensorId id : ids) evict_if_unreferenced(id);

  // Wrap the results.
  std::size_t f = 0;
  for (std::size_t r = 0; r < n_returns; ++r) {
    const int j = inplace_arg[r];
    if (j >= 0) {
      const int idx = result_map[f++];
      if (idx >= 0) {
        auto* w = as_checkpoint(args[j].toTensor());
        w->handle()->reset(out_cells[idx]);
        w->refresh_metadata(out_cells[idx]->value);
      }
      stack->push_back(args[j]);
      continue;
    }
    stack->push_back(map_tensors(results[r], [&](const at::Tensor& v) {
      const int idx = result_map[f++];
      return idx < 0 ? v : make_wrapper(out_cells[idx]);
    }));
  }
}

void Context::replay(const Graph& graph, OpId op_id) {
  auto it = remats_.find(op_id);
  DTR_ASSERT(it != remats_.end(), "no rematerializer for op ", op_id, " (",
             graph.op(op_id).name, ")");
  Remat& r = *it->second;
  torch::jit::Stack stack;
  {
    AllocationWindow window(&make_room_hook);
    std::size_t k = 0;
    for (const auto& a : r.args) {
      stack.push_back(map_tensors(a, [&](const at::Tensor& t) {
        const std::size_t slot = k++;
        const int in = r.slots[slot];
        if (in < 0) return t;
        at::Tensor v = r.inputs[in]->value;
        DTR_ASSERT(v.defined(), "replay of ", graph.op(op_id).name,
                   ": input not resident");
        if (std::find(r.cow_slots.begin(), r.cow_slots.end(),
                      static_cast<int>(slot)) != r.cow_slots.end()) {
          v = cow_clone(v);
        }
        return v;
      }));
    }
    std::optional<RngSwap> rng;
    if (r.rng_state.defined()) rng.emplace(r.generator, r.rng_state);
    at::AutoDispatchBelowADInplaceOrView guard;
    r.op.callBoxed(&stack);
  }
  std::size_t f = 0;
  for (const auto& result : stack) {
    for_each_tensor(result, [&](const at::Tensor& v) {
      const int idx = r.result_map[f++];
      if (idx < 0) return;
      const TensorId id = r.outputs[idx];
      Cell* c = id < cells_.size() ? cells_[id] : nullptr;
      // Keep a value that is still resident: its views share its storage.
      if (c != nullptr && !c->value.defined()) c->value = v;
    });
  }
}

void Context::release_storage(const Graph& graph, StorageId s) {
  for (TensorId t : graph.storage(s).tensors) {
    if (t < cells_.size() && cells_[t] != nullptr) {
      cells_[t]->value = at::Tensor();
    }
  }
}

at::Tensor Context::checkpoint(const at::Tensor& t) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (!t.defined() || as_checkpoint(t) != nullptr) return t;
  TORCH_CHECK(t.device().is_cpu() && t.layout() == at::kStrided,
              "[dtr] checkpoint: only dense CPU tensors are supported, got ",
              t.toString());
  // Note [Inputs are outside the budget]
  // The program made this tensor and (in the usual `data[i]` loop) still
  // holds it; DTR can never evict or recompute it. Like a parameter it is
  // memory outside DTR's control: it is charged 0 bytes to the budget
  // (and to the trace) and shows up in outside_bytes. Counting it made a
  // budget of 50% infeasible for torchvision's resnet18, whose tightest
  // operator (the first native_batch_norm_backward) alone needs ~48% of
  // the peak (see docs/torch.md).
  CoreScope scope(*this);
  runtime_.begin_call({});
  OutputSpec spec{0, -1};
  TensorId id = runtime_.end_call("checkpoint", {}, {&spec, 1}, 0)[0];
  if (recorder_ != nullptr) recorder_->constant(id, 0);
  auto cell = new_cell(id, t.detach());
  hold(cell);
  at::Tensor w = make_wrapper(cell);
  if (t.requires_grad() && t.is_leaf()) w.requires_grad_(true);
  return w;
}

at::Tensor Context::decheckpoint(const at::Tensor& t) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  auto* w = as_checkpoint(t);
  if (w == nullptr) return t;
  std::shared_ptr<Cell> cell = w->handle()->cell;
  if (!cell->value.defined()) {
    CoreScope scope(*this);
    runtime_.materialize(cell->id);
  }
  return cell->value;
}

std::int64_t Context::set_budget(std::int64_t bytes) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  DTR_CHECK(bytes >= 0, "[dtr] set_budget: negative budget ", bytes);
  std::int64_t previous = runtime_.budget_bytes();
  runtime_.set_budget(bytes);
  return previous;
}

std::int64_t Context::budget() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return runtime_.budget_bytes();
}

void Context::set_recorder(TraceRecorder* recorder) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  recorder_ = recorder;
}

Stats Context::stats() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const RuntimeStats& rs = runtime_.stats();
  const AllocatorCounters ac = allocator_counters();
  Stats s;
  s.budget_bytes = runtime_.budget_bytes();
  s.dtr_bytes = rs.memory_bytes;
  s.dtr_peak_bytes = std::max(dtr_peak_bytes_, rs.memory_bytes);
  s.allocator_bytes = ac.bytes;
  s.allocator_peak_bytes = ac.peak_bytes;
  s.outside_bytes = ac.bytes - rs.memory_bytes;
  const Graph& g = runtime_.graph();
  std::unordered_set<StorageId> held;
  for (const Cell* c : cells_) {
    if (c != nullptr && c->held) held.insert(g.tensor(c->id).storage);
  }
  for (StorageId h : held) s.held_bytes += g.storage(h).bytes;
  s.ops = ops_;
  s.remat_ops = rs.remat_ops;
  s.evictions = rs.evictions;
  s.eager_evictions = rs.eager_evictions;
  s.lineage_cuts = lineage_cuts_;
  s.escapes = escapes_;
  s.remat_compute_ns = rs.remat_compute_ns;
  return s;
}

Context::CellCounts Context::count_cells(const Storage& st) const {
  CellCounts n;
  for (TensorId t : st.tensors) {
    if (t < cells_.size() && cells_[t] != nullptr) {
      ++n.live;
      n.held += cells_[t]->held;
      n.handles += cells_[t]->handles;
    }
  }
  return n;
}

void Context::dump(std::ostream& out) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const Graph& g = runtime_.graph();
  for (StorageId s = 0; s < g.storage_count(); ++s) {
    const Storage& st = g.storage(s);
    if (!st.material) continue;
    const CellCounts n = count_cells(st);
    out << "storage " << s << " bytes=" << st.bytes << " locks=" << st.locks
        << " ext_refs=" << st.ext_refs << " live_cells=" << n.live
        << " held=" << n.held << " handles=" << n.handles << " op="
        << g.op(g.tensor(st.tensors[0]).op).name << "\n";
  }
}

void Context::dump_summary(std::ostream& out) {
  const Graph& g = runtime_.graph();
  struct Row { std::int64_t bytes = 0; int count = 0; };
  std::map<std::string, Row> rows;
  for (StorageId s = 0; s < g.storage_count(); ++s) {
    const Storage& st = g.storage(s);
    if (!st.material || st.bytes == 0) continue;
    const CellCounts n = count_cells(st);
    std::string key(g.op(g.tensor(st.tensors[0]).op).name);
    key += st.locks ? " locked" : "";
    key += st.pinned ? " pinned" : "";
    key += st.constant ? " constant" : "";
    key += n.held ? " held" : "";
    key += n.live == 0 ? " no-cell" : "";
    key += n.handles > 0 ? " handle" : "";
    auto& r = rows[key];
    r.bytes += st.bytes;
    ++r.count;
  }
  out << "[dtr] resident storages by producing op and state:\n";
  for (const auto& [k, r] : rows) {
    out << "[dtr]   " << r.bytes << " bytes in " << r.count << " x " << k
        << "\n";
  }
}

void Context::evict_all() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  CoreScope scope(*this);
  const std::int64_t budget = runtime_.budget_bytes();
  runtime_.set_budget(0);
  try {
    runtime_.make_room(1);  // evicts until the pool is empty, then throws
  } catch (const OutOfMemory&) {
  }
  runtime_.set_budget(budget);
}

void Context::reset_peak() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  dtr_peak_bytes_ = runtime_.stats().memory_bytes;
  reset_allocator_peak();
}

}  // namespace dtr::pt
