#pragma once
/// The bridge from the runtime to a framework that holds real buffers.
/// The simulator needs none; the LibTorch layer implements it.
#include "dtr/core/graph.h"

namespace dtr {

class Executor {
 public:
  virtual ~Executor() = default;
  /// Re-runs `op`: its inputs are defined and locked, room for its outputs
  /// has been made. Must restore every output that is still wanted and may
  /// drop outputs that were already resident (the duplicates).
  virtual void replay(const Graph& graph, OpId op) = 0;
  /// The buffer of `s` (and every view of it) must be released now.
  virtual void release_storage(const Graph& graph, StorageId s) = 0;
};

}  // namespace dtr
