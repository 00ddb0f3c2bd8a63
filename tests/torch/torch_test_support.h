#pragma once
// Shared by the LibTorch test suites: a fixture that restores the
// unlimited budget whatever a test set, and the plain value of a tensor.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "dtr/torch/dtr_torch.h"

namespace dtr::pt::testing {

class BudgetRestoringTest : public ::testing::Test {
 protected:
  void TearDown() override { set_budget(kUnlimited); }
};

inline torch::Tensor plain(const torch::Tensor& t) {
  return decheckpoint(t);
}

}  // namespace dtr::pt::testing
