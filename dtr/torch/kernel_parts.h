#pragma once
/// The intermediate records of one boxed-kernel call (Note [The boxed
/// kernel]), passed between the steps in kernel.cpp, mutation.cpp and
/// remat.cpp. Private to dtr_torch.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "dtr/core/runtime.h"
#include "dtr/torch/checkpoint_tensor.h"

namespace dtr::pt {

/// Step 1: what the call writes and how each write is carried out.
struct MutationPlan {
  std::vector<bool> write;    ///< per argument: written in place
  std::vector<int> stripped;  ///< hidden writes, passed as None on replay
  std::vector<bool> moved;    ///< per argument: Mutation::kMove
  std::vector<TensorId> shared_storages;    ///< written in place, views live
  std::vector<at::Tensor> external_writes;  ///< program tensors written
  bool direct = false;    ///< the op runs in place on the real values
  bool need_cut = false;  ///< a lineage cut must come first
  bool any_cow = false;   ///< some argument is copied before the write
  bool is_stripped(std::size_t i) const {
    return std::find(stripped.begin(), stripped.end(), static_cast<int>(i)) !=
           stripped.end();
  }
};

/// Step 2: the call's tensor slots in traversal order (ivalue_tensors.h).
struct Slots {
  std::vector<std::shared_ptr<Cell>> cells;  ///< null for a plain tensor
  std::vector<int> arg;            ///< the argument each slot came from
  std::vector<int> input;          ///< index into `ids`, or -1 for plain
  std::vector<TensorId> ids;       ///< the checkpointed inputs
  std::vector<at::Tensor> values;  ///< what the operator received
  std::vector<int> cow;            ///< slots cloned before the write
  bool is_cow(std::size_t slot) const {
    return std::find(cow.begin(), cow.end(), static_cast<int>(slot)) !=
           cow.end();
  }
};

/// Step 3: the operator's results, classified for the runtime.
struct Outputs {
  std::vector<c10::IValue> results;  ///< as the operator returned them
  std::vector<OutputSpec> specs;     ///< one per new value
  std::vector<at::Tensor> values;    ///< plain value of each spec
  std::vector<int> result_map;       ///< per flattened result: spec or -1
  std::vector<int> inplace_arg;      ///< per return: written argument or -1
  std::int64_t new_bytes = 0;
  std::int64_t elapsed_ns = 0;
};

/// The random-number state a replay must reproduce.
struct RngCapture {
  at::Generator generator;
  at::Tensor state;
};

}  // namespace dtr::pt
