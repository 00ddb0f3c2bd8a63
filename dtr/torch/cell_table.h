#pragma once
/// The registry of live cells, by the runtime's tensor id. Tensor ids are
/// dense and recycled (Graph), so a vector indexed by them. It holds raw
/// pointers: a Cell whose last reference just went may still be listed
/// while its destructor waits for the context's mutex, so live() answers
/// only what can still be locked.
#include <memory>
#include <thread>
#include <vector>

#include "dtr/core/graph.h"
#include "dtr/torch/checkpoint_tensor.h"

namespace dtr::pt {

class CellTable {
 public:
  /// A new cell holding `value` as tensor `id`, owned by this thread, and
  /// listed.
  std::shared_ptr<Cell> make(TensorId id, at::Tensor value) {
    auto cell = std::make_shared<Cell>();
    cell->id = id;
    cell->owner = std::this_thread::get_id();
    cell->value = std::move(value);
    set(id, cell.get());
    return cell;
  }
  /// The cell of `id`, or nullptr; may be dying (see live()).
  Cell* find(TensorId id) const {
    return id < slots_.size() ? slots_[id] : nullptr;
  }
  /// The cell of `id` if it is listed and not dying, else nullptr.
  std::shared_ptr<Cell> live(TensorId id) const {
    Cell* c = find(id);
    return c != nullptr ? c->weak_from_this().lock() : nullptr;
  }
  void set(TensorId id, Cell* cell) {
    if (id >= slots_.size()) slots_.resize(id + 1, nullptr);
    slots_[id] = cell;
  }
  void erase(TensorId id) {
    if (id < slots_.size()) slots_[id] = nullptr;
  }
  /// f(cell) for every listed cell, dying ones included.
  template <typename F>
  void for_each(F&& f) const {
    for (Cell* c : slots_) {
      if (c != nullptr) f(*c);
    }
  }
  /// One past the largest id that may be listed.
  TensorId end_id() const { return static_cast<TensorId>(slots_.size()); }

 private:
  std::vector<Cell*> slots_;
};

}  // namespace dtr::pt
