#include "dtr/torch/holds.h"

#include <cstdio>
#include <unordered_set>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/torch/call_guard.h"
#include "dtr/torch/counting_allocator.h"
#include "dtr/torch/ivalue_tensors.h"
#include "dtr/torch/op_rules.h"
#include "dtr/torch/plain_tensors.h"

namespace dtr::pt {

// Note [Storage copy-on-write]
// A write into a storage whose views the program holds, while lineage
// still reads the storage's old contents: instead of a lineage cut (which
// holds every live value), the storage is copied. Every view the program
// holds moves to the copy (same sizes, strides and offset; the write then
// goes there and every view sees it, as in PyTorch); the old storage keeps
// its values and lineage for the consumers that read it, evictable as
// before. The copy cannot be recomputed, so it is held until its views
// die: the cost is one held copy of what was written into.
void Holds::copy_storage_on_write(TensorId member) {
  const Graph& g = runtime_.graph();
  std::vector<std::shared_ptr<Cell>> views;
  for (TensorId t : g.storage(g.tensor(member).storage).tensors) {
    auto c = cells_.live(t);
    if (c && c->handles > 0) views.push_back(std::move(c));
  }
  ReleaseQueue::Scope scope(releases_);
  std::vector<TensorId> ids;
  for (const auto& c : views) ids.push_back(c->id);
  std::vector<std::shared_ptr<Cell>> copies;
  {
    CallGuard guard(runtime_, ids);
    const c10::Storage& old = views[0]->value.storage();
    const auto nbytes = static_cast<std::int64_t>(old.nbytes());
    at::Tensor raw;
    {
      AllocationWindow window(make_room_);
      raw = at::empty({0}, at::kByte).set_(old).clone();
    }
    OutputSpec spec{nbytes, -1};
    const TensorId root = guard.end("copy_on_write", {&spec, 1}, 1)[0];
    listeners_.notify(
        [&](RunListener& l) {  // so that the holds below have names
          l.call(runtime_.graph(), "copy_on_write", ids, {&root, 1}, {&spec, 1},
                 1, 0);
        });
    for (const auto& c : views) {
      at::Tensor v = at::empty({0}, c->value.options())
                         .set_(raw.storage(), c->value.storage_offset(),
                               c->value.sizes(), c->value.strides());
      CallGuard alias(runtime_, {&root, 1});
      OutputSpec view_spec{0, 0};
      const TensorId view =
          alias.end("copy_on_write_view", {&view_spec, 1}, 1)[0];
      listeners_.notify([&](RunListener& l) {
        l.call(runtime_.graph(), "copy_on_write_view", {&root, 1}, {&view, 1},
               {&view_spec, 1}, 1, 0);
      });
      copies.push_back(cells_.make(view, v));
    }
    // The copy cannot be recomputed: its views are held while they live;
    // the root has no handle and goes at once (the views keep the buffer).
    for (auto& c : copies) hold(c);
    cells_.make(root, raw);
  }
  for (std::size_t k = 0; k < views.size(); ++k) {
    std::vector<Handle*> handles(views[k]->handle_list.begin(),
                                 views[k]->handle_list.end());
    for (Handle* h : handles) h->reset(copies[k]);
  }
}

// Inside a ReleaseQueue::Scope.
void Holds::pin(Cell& cell) {
  runtime_.begin_call({&cell.id, 1});  // materializes and locks
  cell.held = true;
  listeners_.notify([&](RunListener& l) { l.pin(cell.id); });
}

void Holds::hold(const std::shared_ptr<Cell>& cell) {
  if (cell->held) return;
  ReleaseQueue::Scope scope(releases_);
  pin(*cell);
  cell->remat.reset();
}

// Every written value stays resident, since its lineage would recompute
// the old contents, and so does every live value sharing a written storage.
void Holds::hold_written(const Args& args, const MutationPlan& plan) {
  const Graph& g = runtime_.graph();
  for (TensorId member_of : plan.shared_storages) {
    std::vector<std::shared_ptr<Cell>> members;
    for (TensorId m : g.storage(g.tensor(member_of).storage).tensors) {
      if (auto c = cells_.live(m)) members.push_back(std::move(c));
    }
    for (auto& c : members) hold(c);
  }
  for (const at::Tensor& t : plan.external_writes) {
    t.unsafeGetTensorImpl()->bump_version();
  }
  for (std::size_t j = 0; j < args.size(); ++j) {
    if (!plan.write[j] || plan.is_stripped(j)) continue;
    for_each_tensor(args[j], [&](const at::Tensor& t) {
      if (auto* w = as_checkpoint(t)) {
        hold(w->handle()->cell);
        w->refresh_metadata(w->handle()->cell->value);
      }
    });
  }
}

// Note [Lineage cut]
// A value's lineage reads its inputs as they were. When something it read
// is about to be overwritten in place -- a plain parameter updated by the
// optimizer -- we make every value the program still holds resident and
// unevictable ("held", until it dies) and drop every rematerializer, so
// nothing is ever replayed against new contents. Values only lineage kept
// alive die with it. In training this happens once per optimizer step, at
// the end of backward (gradients.cpp): an iteration boundary.
// Threads training their own models concurrently cut their own values
// only (`owner`): a value of this thread that another thread's lineage
// still reads is held too, so that lineage stays replayable. Lineage that
// reads a parameter another thread updates is not cut; the version check
// refuses its replay (Note [Stale plain inputs]).
void Holds::cut_lineage(std::optional<std::thread::id> owner) {
  ReleaseQueue::Scope scope(releases_);
  ++lineage_cuts_;
  auto mine = [&](const auto& x) { return !owner || x.owner == *owner; };
  std::unordered_set<const Cell*> read_elsewhere;
  if (owner) {
    remats_.for_each([&](const Remat& r) {
      if (mine(r)) return;
      for (const auto& in : r.inputs) {
        if (mine(*in)) read_elsewhere.insert(in.get());
      }
    });
  }
  std::vector<std::shared_ptr<Cell>> live;
  bool others = false;  // another thread's values keep their lineage
  for (TensorId id = 0; id < cells_.end_id(); ++id) {
    auto c = cells_.live(id);
    if (!c) continue;
    if (mine(*c)) {
      live.push_back(std::move(c));
    } else {
      others = true;
    }
  }
  for (auto& c : live) {
    if ((c->handles > 0 || read_elsewhere.count(c.get())) && !c->held) {
      pin(*c);
      if (debug_) {
        const Graph& g = runtime_.graph();
        std::fprintf(
            stderr, "[dtr]   cut holds x%u (%s, %lld bytes)\n", c->id,
            g.op(g.tensor(c->id).op).name.c_str(),
            static_cast<long long>(g.storage(g.tensor(c->id).storage).bytes));
      }
    }
  }
  for (auto& c : live) c->remat.reset();
  live.clear();
  // The trace cannot say whose lineage a cut ends: only a cut of every
  // live value's is written.
  if (!others)
    listeners_.notify([](RunListener& l) { l.annotate("LINEAGE_CUT"); });
}

}  // namespace dtr::pt
