#pragma once
/// A miniature autograd that writes what PyTorch autograd does under the
/// paper's logger: the forward pass records, for every differentiable op, the
/// tensors its backward needs (each saved with a COPY); backward() then runs
/// the recorded ops in reverse, unpacks the saved tensors (COPY), calls the
/// `<op>_backward` ops, accumulates gradients (`add`, or MUTATE `add_` into a
/// weight gradient it owns alone) and releases everything as soon as it is
/// dead. Parameters, buffers and their gradients stay referenced at the end,
/// so they are the trace's outputs.
///
///   Tape tape(writer, CostModel(seed));                // ANNOTATE START
///   Var w = tape.parameter({64, 64});
///   Var x = tape.constant({32, 64});
///   Var loss = sum(relu(mm(x, w)));                    // ops.h
///   tape.backward(loss);                               // ANNOTATE BACKWARD
///
/// The Tape must outlive every Var made from it; declare it first.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dtr/models/cost_model.h"
#include "dtr/models/trace_builder.h"

namespace dtr::models {

/// Elements per dimension.
using Shape = std::vector<std::int64_t>;
std::int64_t numel(const Shape& shape);

class Tape;

/// A tensor of the traced program, as at::Tensor is in PyTorch: copying a Var
/// copies a reference (nothing is logged) and the logged handle is RELEASEd
/// when the last Var referring to it dies. In-place ops act on the shared
/// tensor, so every copy sees them.
class Var {
 public:
  Var() = default;

  bool defined() const { return impl_ != nullptr; }
  Tape& tape() const;
  const Shape& shape() const;
  /// Size of dimension `i`; a negative `i` counts from the end.
  std::int64_t dim(int i) const;
  std::int64_t numel() const;
  int elem_bytes() const;
  /// Bytes of this tensor's elements (a view may sit in a larger storage).
  std::int64_t bytes() const;
  Handle& handle() const;
  const std::string& name() const;
  bool requires_grad() const;
  /// Drops this reference (RELEASE if it was the last one).
  void reset() { impl_.reset(); }

 private:
  friend class Tape;
  struct Impl {
    Tape* tape = nullptr;
    Handle handle;
    Shape shape;
    int elem_bytes = 4;
    int slot = -1;  // gradient slot; -1: no gradient wanted
  };
  std::shared_ptr<Impl> impl_;
};

// Note [Release order]: the order in which a std::vector destroys its
// elements is unspecified (libstdc++ goes front to back, libc++ back to
// front), and a Var's destruction can write RELEASE. Wherever a vector may
// hold the last reference to a tensor, drop it with release_all() so the
// trace is the same with every standard library.

/// Drops the references in `vars` front to back, then empties it.
void release_all(std::vector<Var>& vars);

/// Keeps vars[0], releases the other outputs of a multi-output op (front to
/// back) and returns vars[0].
Var first_output(std::vector<Var>& vars);

/// One output of a traced op.
struct OutSpec {
  Shape shape;
  int alias = -1;           ///< argument it views; -1: a new storage
  int elem_bytes = 4;       ///< 8 for int64 indices, 1 for byte masks
  std::int64_t bytes = -1;  ///< logged size if not numel*elem_bytes
};

/// Computes the gradients of a recorded op's differentiable inputs (one
/// entry per input; an undefined Var where none is needed) from the
/// gradients of its outputs (undefined where an output got none) and the
/// unpacked saved tensors.
using BackwardFn = std::function<std::vector<Var>(
    const std::vector<Var>& grads, const std::vector<Var>& saved)>;

/// The most tensors a tape makes. Parameters and the activations backward
/// needs are all held until backward runs, so this bounds a model's memory
/// while it is built: `dtr gen`'s longest chain (2^21 layers, 1 GB) fits,
/// and a request far beyond it (a Transformer of 2^21 layers, tens of GB)
/// stops with an error once it has made this many (at 3.8 GB, in 27 s).
inline constexpr std::size_t kMaxTapeValues = std::size_t{1} << 24;

class Tape {
 public:
  /// Writes ANNOTATE START. Making more than `max_values` tensors throws
  /// dtr::InvalidArgument.
  Tape(trace::TraceWriter& out, CostModel cost,
       std::size_t max_values = kMaxTapeValues);
  /// Keeps parameters, buffers and the gradients of leaves (the trace's
  /// outputs) and releases whatever else the tape still holds.
  ~Tape();
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  CostModel& cost() { return cost_; }
  TraceBuilder& builder() { return builder_; }
  /// False during backward(): ops then record nothing, as under no_grad.
  bool grad_mode() const { return grad_mode_; }

  /// A trainable weight: a CONSTANT that requires grad and stays referenced.
  Var parameter(Shape shape);
  /// Module state without a gradient (running statistics, counters). The
  /// tape owns the Var; assigning a new value to it releases the old one
  /// and makes the new one an output instead.
  Var& buffer(Shape shape, int elem_bytes = 4);
  /// A tensor the program owns (input batch, targets, scalars): released
  /// when its last Var dies. With `requires_grad` its gradient is an output.
  Var constant(Shape shape, int elem_bytes = 4, bool requires_grad = false);

  /// CALL of `op` on `args`; returns one Var per output.
  std::vector<Var> call(std::string_view op, const std::vector<Var>& args,
                        const std::vector<OutSpec>& outs, std::int64_t time_ns);
  /// CALL with a single output.
  Var call1(std::string_view op, const std::vector<Var>& args, OutSpec out,
            std::int64_t time_ns);
  /// True if `v` may be mutated in place (see TraceBuilder::can_mutate).
  bool can_mutate(const Var& v) const;
  /// MUTATE of `target` with ARGS [target, others...]. Records no autograd
  /// node; in-place ops in ops.h do that.
  void mutate(std::string_view op, Var& target, const std::vector<Var>& others,
              std::int64_t time_ns);

  /// True if grad mode is on and some input requires grad.
  bool needs_grad(const std::vector<Var>& inputs) const;
  /// Saves `v` for backward, as autograd's SavedVariable does (COPY).
  Var save(const Var& v);
  /// Records the backward of an op whose differentiable inputs are `inputs`
  /// and outputs `outputs`; gives each differentiable output a fresh
  /// gradient slot (for an in-place op the output may be an input).
  void record(std::string_view op, const std::vector<Var>& inputs,
              const std::vector<Var>& outputs, std::vector<Var> saved,
              BackwardFn backward);

  /// ANNOTATE BACKWARD, seeds `root`'s gradient with ones_like(root) and
  /// runs every recorded backward in reverse order. Throws
  /// dtr::InvalidArgument if `root` does not require grad.
  void backward(const Var& root);

 private:
  struct Slot {
    Var grad;
    bool leaf = false;  // parameter or input: the gradient is kept
  };
  struct Node {
    std::string op;
    std::vector<int> inputs;   // slot per input (-1: none)
    std::vector<int> outputs;  // slot per output (-1: none)
    std::vector<Var> saved;
    BackwardFn backward;
  };

  Var wrap(Handle handle, Shape shape, int elem_bytes);
  int new_slot(bool leaf);
  void accumulate(int slot, Var grad);
  void run(Node& node);

  // Declared first so it is destroyed last: every Var below holds a Handle
  // that releases through it.
  TraceBuilder builder_;
  CostModel cost_;
  bool grad_mode_ = true;
  std::vector<Slot> slots_;
  std::vector<Node> nodes_;
  std::size_t values_ = 0;  ///< tensors made so far
  std::size_t max_values_;
  std::deque<Var> state_;  // parameters and buffers (deque: stable refs)
};

}  // namespace dtr::models
