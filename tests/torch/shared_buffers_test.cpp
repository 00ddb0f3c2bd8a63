// Tests of SharedBuffers (dtr/torch/shared_buffers.h): a storage stays
// visible while any visible value in it lives; the buffer given to
// checkpoint() is found until its last visible value dies; captures count.
#include "dtr/torch/shared_buffers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace {

using dtr::pt::SharedBuffers;

const c10::StorageImpl* buffer_of(const at::Tensor& t) {
  return t.storage().unsafeGetStorageImpl();
}

TEST(SharedBuffersTest, AStorageIsVisibleUntilItsLastVisibleValueDies) {
  SharedBuffers shared;
  const at::Tensor input = at::zeros({4});
  shared.add_visible(7, buffer_of(input));
  shared.add_visible(7, nullptr);  // a view of it, also visible
  EXPECT_EQ(shared.storage_of_input(buffer_of(input)), 7u);
  shared.remove_visible(7, buffer_of(input));
  EXPECT_TRUE(shared.visible(7));
  EXPECT_EQ(shared.storage_of_input(buffer_of(input)), 7u);
  shared.remove_visible(7, buffer_of(input));
  EXPECT_FALSE(shared.visible(7));
  EXPECT_FALSE(shared.storage_of_input(buffer_of(input)).has_value());
}

// A buffer freed and reused by a later input keeps the later storage: the
// death of the old storage's value does not forget it.
TEST(SharedBuffersTest, ABufferReusedByANewerInputKeepsItsNewStorage) {
  SharedBuffers shared;
  const at::Tensor input = at::zeros({4});
  shared.add_visible(1, buffer_of(input));
  shared.remove_visible(1, buffer_of(input));
  shared.add_visible(2, buffer_of(input));
  shared.add_visible(1, nullptr);
  shared.remove_visible(1, buffer_of(input));
  EXPECT_EQ(shared.storage_of_input(buffer_of(input)), 2u);
}

TEST(SharedBuffersTest, ABufferIsCapturedWhileAnyLineageReadsIt) {
  SharedBuffers shared;
  const at::Tensor weight = at::zeros({4});
  shared.capture(buffer_of(weight));
  shared.capture(buffer_of(weight));
  shared.release_capture(buffer_of(weight));
  EXPECT_TRUE(shared.captured(buffer_of(weight)));
  shared.release_capture(buffer_of(weight));
  EXPECT_FALSE(shared.captured(buffer_of(weight)));
  shared.release_capture(buffer_of(weight));  // unknown: no effect
  EXPECT_FALSE(shared.captured(buffer_of(weight)));
}

}  // namespace
