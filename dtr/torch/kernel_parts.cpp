// The steps of one call that read only its own records (kernel_parts.h).
#include "dtr/torch/kernel_parts.h"

#include "dtr/core/error.h"
#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/ivalue_tensors.h"
#include "dtr/torch/op_rules.h"
#include "dtr/torch/plain_tensors.h"

namespace dtr::pt {

Slots collect_slots(const Args& args, const MutationPlan& plan) {
  Slots s;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (plan.is_stripped(i)) continue;
    for_each_tensor(args[i], [&](const at::Tensor& t) {
      auto* w = as_checkpoint(t);
      s.cells.push_back(w != nullptr ? w->handle()->cell : nullptr);
      s.arg.push_back(static_cast<int>(i));
      if (w != nullptr) {
        s.input.push_back(static_cast<int>(s.ids.size()));
        s.ids.push_back(s.cells.back()->id);
      } else {
        s.input.push_back(-1);
      }
    });
  }
  s.values.resize(s.cells.size());
  return s;
}

// Step 3: which results are new values, which aliases, which ignored.
void classify_results(const c10::FunctionSchema& schema, const OpRules& rules,
                      const Args& args, const MutationPlan& plan,
                      const Slots& slots, Outputs& out) {
  const std::string& name = rules.name;
  const auto& rets = schema.returns();
  const auto& formals = schema.arguments();
  out.inplace_arg.assign(rets.size(), -1);
  for (std::size_t r = 0; r < rets.size(); ++r) {
    if (is_write(rets[r])) {
      for (std::size_t j = 0; j < formals.size(); ++j) {
        if (is_write(formals[j]) && formals[j].alias_info()->beforeSets() ==
                                        rets[r].alias_info()->beforeSets()) {
          out.inplace_arg[r] = static_cast<int>(j);
          break;
        }
      }
      DTR_ASSERT(out.inplace_arg[r] >= 0, "no argument for in-place result of ",
                 name);
    }
    // Nested tensors (nn.TransformerEncoder's inference fast path) stay
    // plain: a wrapper stands for one strided value.
    for_each_tensor(out.results[r], [&](const at::Tensor& v) {
      const int j = out.inplace_arg[r];
      const bool new_value =
          j >= 0 ? !plan.direct && args[j].isTensor() &&
                       as_checkpoint(args[j].toTensor()) != nullptr
                 : v.defined() && v.has_storage() && !v.is_nested() &&
                       rules.metadata_result != r;
      if (!new_value) {
        out.result_map.push_back(-1);
        return;
      }
      int alias_of = -1;
      if (j < 0) {
        const c10::StorageImpl* s = storage_of(v);
        for (std::size_t k = 0; k < slots.values.size(); ++k) {
          if (storage_of(slots.values[k]) != s) continue;
          if (!slots.cells[k] || slots.is_cow(k)) {  // a view of a plain
            out.result_map.push_back(-1);            // tensor: stays plain
            return;
          }
          alias_of = slots.input[k];
          break;
        }
        if (alias_of < 0) {
          for (const auto& o : out.values) {
            if (storage_of(o) == s) {
              throw UnsupportedOperator(detail::concat(
                  "[dtr] ", name,
                  ": two results share one new storage, which checkpointed "
                  "tensors cannot represent"));
            }
          }
        }
      }
      out.result_map.push_back(static_cast<int>(out.specs.size()));
      const auto bytes =
          alias_of >= 0 ? 0 : static_cast<std::int64_t>(v.storage().nbytes());
      out.specs.push_back({bytes, alias_of});
      out.new_bytes += bytes;
      out.values.push_back(v);
    });
  }
}

// Step 4: wrappers for new values; in-place results return the argument.
void wrap_results(torch::jit::Stack* stack, const Args& args,
                  const Outputs& out, const OutCells& out_cells) {
  std::size_t f = 0;
  for (std::size_t r = 0; r < out.results.size(); ++r) {
    const int j = out.inplace_arg[r];
    if (j >= 0) {
      for_each_tensor(out.results[r], [&](const at::Tensor&) {
        const int idx = out.result_map[f++];
        if (idx < 0) return;
        auto* w = as_checkpoint(args[j].toTensor());
        w->handle()->reset(out_cells[idx]);
        w->refresh_metadata(out_cells[idx]->value);
      });
      stack->push_back(args[j]);
      continue;
    }
    stack->push_back(map_tensors(out.results[r], [&](const at::Tensor& v) {
      const int idx = out.result_map[f++];
      return idx < 0 ? v : make_wrapper(out_cells[idx]);
    }));
  }
}

}  // namespace dtr::pt
