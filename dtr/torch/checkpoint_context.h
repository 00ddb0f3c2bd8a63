#pragma once
/// The process-wide DTR state for LibTorch: the core runtime, the registry
/// of live cells and rematerializers, and the boxed kernel's logic. Private
/// to dtr_torch; the public surface is dtr_torch.h.
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dtr/core/executor.h"
#include "dtr/core/runtime.h"
#include "dtr/torch/checkpoint_tensor.h"
#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/trace_recorder.h"

namespace dtr::pt {

class Context final : public Executor {
 public:
  static Context& get();

  /// The boxed kernel: runs `op` on checkpointed (and plain) arguments.
  void call(const c10::OperatorHandle& op, torch::jit::Stack* stack);

  at::Tensor checkpoint(const at::Tensor& t);
  at::Tensor decheckpoint(const at::Tensor& t);
  std::int64_t set_budget(std::int64_t bytes);
  std::int64_t budget();
  void set_cost_model(CostModel model) { cost_model_ = model; }
  Stats stats();
  void reset_peak();
  void evict_all();
  /// Debugging: one line per resident storage.
  void dump(std::ostream& out);
  /// Debugging: resident bytes grouped by producing op and state.
  void dump_summary(std::ostream& out);
  /// Starts (or with nullptr stops) recording a trace of every call.
  void set_recorder(TraceRecorder* recorder);

  // Lifecycle hooks from Cell, Remat and Handle.
  void on_last_handle(Cell& cell);
  void on_cell_dead(Cell& cell);
  void on_remat_dead(Remat& remat);

  // Executor
  void replay(const Graph& graph, OpId op) override;
  void release_storage(const Graph& graph, StorageId s) override;

 private:
  Context();
  struct CoreScope;  // defers releases until the runtime call is over
  struct CellCounts {
    int live = 0;     // cells of the storage still alive
    int held = 0;     // of which held
    int handles = 0;  // program handles on them
  };
  CellCounts count_cells(const Storage& st) const;
  enum class Mutation { kCopyOnWrite, kMove, kDirect, kSharedViews, kShared };

  std::shared_ptr<Cell> new_cell(TensorId id, at::Tensor value);
  void hold(const std::shared_ptr<Cell>& cell);
  void cut_lineage();
  Mutation classify(const at::Tensor& wrapper, const Cell& cell,
                    int extra_refs) const;
  void call_plain(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                  std::vector<c10::IValue> args);
  void flush();
  void evict_if_unreferenced(TensorId id);
  void note_peak();
  void note_escape(const std::string& name);
  std::int64_t cost_of(std::int64_t elapsed_ns, std::int64_t bytes) const;
  static void make_room_hook(std::int64_t bytes);

  std::recursive_mutex mutex_;
  Runtime runtime_;
  std::vector<Cell*> cells_;  // by TensorId; null once dead
  std::unordered_map<OpId, Remat*> remats_;
  std::unordered_map<const c10::StorageImpl*, int> captured_;
  struct Pending {
    TensorId id;
    bool unlock;
    bool release;
  };
  std::vector<Pending> pending_;
  int core_depth_ = 0;
  CostModel cost_model_ = CostModel::kMeasured;
  std::int64_t dtr_peak_bytes_ = 0;
  std::uint64_t lineage_cuts_ = 0;
  std::uint64_t escapes_ = 0;  // see Note [Escapes]
  std::unordered_set<std::string> warned_escapes_;
  std::uint64_t ops_ = 0;
  TraceRecorder* recorder_ = nullptr;
  bool in_unsafe_split_ = false;  // see Note [unsafe_split]
  bool debug_ = false;  // DTR_DEBUG=1: one line per kernel call
};

}  // namespace dtr::pt
