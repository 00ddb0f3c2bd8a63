// DTR_DEBUG output: resident storages, one per line or grouped.
#include <map>
#include <mutex>

#include "dtr/torch/checkpoint_context.h"

namespace dtr::pt {

Context::CellCounts Context::count_cells(const Storage& st) const {
  CellCounts n;
  for (TensorId t : st.tensors) {
    if (const Cell* c = cells_.find(t)) {
      ++n.live;
      n.held += c->held;
      n.handles += c->handles;
    }
  }
  return n;
}

void Context::dump(std::ostream& out) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const Graph& g = runtime_.graph();
  for (StorageId s = 0; s < g.storage_count(); ++s) {
    const Storage& st = g.storage(s);
    if (!st.resident) continue;
    const CellCounts n = count_cells(st);
    out << "storage " << s << " bytes=" << st.bytes << " locks=" << st.locks
        << " ext_refs=" << st.ext_refs << " live_cells=" << n.live
        << " held=" << n.held << " handles=" << n.handles
        << " op=" << g.op(g.tensor(st.tensors[0]).op).name << "\n";
  }
}

void Context::dump_summary(std::ostream& out) {
  const Graph& g = runtime_.graph();
  struct Row {
    std::int64_t bytes = 0;
    int count = 0;
  };
  std::map<std::string, Row> rows;
  for (StorageId s = 0; s < g.storage_count(); ++s) {
    const Storage& st = g.storage(s);
    if (!st.resident || st.bytes == 0) continue;
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

}  // namespace dtr::pt
