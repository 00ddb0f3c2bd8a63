#include "dtr/core/graph.h"

#include <tuple>
#include <type_traits>
#include <utility>

namespace dtr {

namespace {
// Resets a record to its defaults but keeps the capacity of its lists, so a
// reused record does not allocate again. Works field by field through the
// default constructor, so a field added later is reset too.
template <typename Record, typename... Lists>
void reset_keeping_lists(Record& r, std::pmr::memory_resource* arena,
                         Lists Record::*... lists) {
  auto kept = std::make_tuple(std::move(r.*lists)...);
  if constexpr (std::is_constructible_v<Record, std::pmr::memory_resource*>) {
    r = Record(arena);
  } else {
    r = Record();
  }
  std::apply(
      [&](auto&... l) {
        ((l.clear()), ...);
        ((r.*lists = std::move(l)), ...);
      },
      kept);
}
}  // namespace

OpId Graph::add_op() {
  if (free_ops_.empty()) {
    ops_.emplace_back(&arena_);
    return static_cast<OpId>(ops_.size() - 1);
  }
  OpId id = free_ops_.back();
  free_ops_.pop_back();
  ops_[id].dead = false;
  return id;
}

TensorId Graph::add_tensors(std::uint32_t count) {
  if (count < free_tensor_runs_.size() && !free_tensor_runs_[count].empty()) {
    TensorId first = free_tensor_runs_[count].back();
    free_tensor_runs_[count].pop_back();
    free_tensor_count_ -= count;
    for (std::uint32_t i = 0; i < count; ++i) tensors_[first + i].dead = false;
    return first;
  }
  const auto first = static_cast<TensorId>(tensors_.size());
  for (std::uint32_t i = 0; i < count; ++i) tensors_.emplace_back();
  return first;
}

StorageId Graph::add_storage() {
  if (free_storages_.empty()) {
    storages_.emplace_back();
    return static_cast<StorageId>(storages_.size() - 1);
  }
  StorageId id = free_storages_.back();
  free_storages_.pop_back();
  storages_[id].dead = false;
  return id;
}

void Graph::recycle_op(OpId id) {
  reset_keeping_lists(ops_[id], &arena_, &Op::name, &Op::inputs, &Op::outputs);
  ops_[id].dead = true;
  free_ops_.push_back(id);
}

void Graph::recycle_tensors(TensorId first, std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i) {
    reset_keeping_lists(tensors_[first + i], &arena_, &Tensor::consumers);
    tensors_[first + i].dead = true;
  }
  if (free_tensor_runs_.size() <= count) free_tensor_runs_.resize(count + 1);
  free_tensor_runs_[count].push_back(first);
  free_tensor_count_ += count;
}

void Graph::recycle_storage(StorageId id) {
  reset_keeping_lists(storages_[id], &arena_, &Storage::tensors);
  storages_[id].dead = true;
  free_storages_.push_back(id);
}

}  // namespace dtr
