// Tests of check_plain_inputs (dtr/torch/stale_inputs.h): a replay refuses
// a plain input that changed since its capture, whichever way it changed,
// and names the operator, the input and the way.
#include "dtr/torch/stale_inputs.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "dtr/core/error.h"
#include "dtr/torch/contents_hash.h"
#include "dtr/torch/plain_tensors.h"

namespace {

using dtr::pt::Remat;

// The record of `add(self, other)` that captured `self`, a plain tensor.
// It lives outside any context: its death concerns none (Note [Fork]).
Remat add_reading(const at::Tensor& self) {
  Remat r(
      c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor"));
  r.fork_generation = dtr::pt::current_fork_generation() + 1;
  r.args = {self, at::Tensor(), c10::IValue(1)};
  r.slots = {-1, 0};
  r.plain_inputs.push_back({0, dtr::pt::version_of(self),
                            self.storage().getWeakStorageImpl(), false,
                            dtr::pt::contents_hash(self)});
  return r;
}

std::string refusal(const Remat& r) {
  try {
    dtr::pt::check_plain_inputs(r, r.args.data());
  } catch (const dtr::Error& e) {
    return e.what();
  }
  return "";
}

TEST(StaleInputsTest, AnUnchangedInputReplays) {
  const at::Tensor self = at::arange(6.0);
  const Remat r = add_reading(self);
  self.add_(0);  // a write (the version moves) ...
  EXPECT_NE(refusal(r), "");
  const Remat again = add_reading(self);  // ... captured again: fine
  EXPECT_EQ(refusal(again), "");
}

TEST(StaleInputsTest, AWriteThatBumpsTheVersionIsNamedWithTheVersions) {
  const at::Tensor self = at::arange(6.0);
  const Remat r = add_reading(self);
  const std::uint32_t before = dtr::pt::version_of(self);
  self.mul_(2);
  const std::string why = refusal(r);
  EXPECT_NE(why.find("cannot recompute aten::add.Tensor: its plain input "
                     "'self' (shape [6]) was written in place"),
            std::string::npos)
      << why;
  const std::string versions = "(version " + std::to_string(before) + " -> " +
                               std::to_string(before + 1) + ")";
  EXPECT_NE(why.find(versions), std::string::npos) << why;
}

TEST(StaleInputsTest, AWriteThroughDataIsSeenInTheBytes) {
  const at::Tensor self = at::arange(6.0);
  const Remat r = add_reading(self);
  const std::uint32_t before = dtr::pt::version_of(self);
  self.data().fill_(7);  // its own version counter: self's does not move
  ASSERT_EQ(dtr::pt::version_of(self), before);
  const std::string why = refusal(r);
  EXPECT_NE(why.find("'self' (shape [6]) holds other bytes"), std::string::npos)
      << why;
}

TEST(StaleInputsTest, ANewBufferIsNamedAsOne) {
  const at::Tensor self = at::arange(6.0);
  const Remat r = add_reading(self);
  at::Tensor rebound = self;
  rebound.set_data(at::arange(6.0));  // same bytes, another buffer
  const std::string why = refusal(r);
  EXPECT_NE(why.find("'self' (shape [6]) was given another buffer"),
            std::string::npos)
      << why;
}

}  // namespace
