// Tests of contents_hash (dtr/torch/contents_hash.h), the fingerprint a
// replay compares to tell that a plain input still holds the bytes it held
// at capture: any changed element changes it, bytes outside the tensor
// (gaps of a view) do not, and chunked hashing of large tensors sees every
// chunk.
#include "dtr/torch/contents_hash.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

using dtr::pt::contents_hash;

TEST(ContentsHashTest, AnyChangedElementChangesTheHash) {
  at::Tensor t = torch::arange(64, torch::kFloat);
  const auto before = contents_hash(t);
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(contents_hash(t.clone()), before);  // bytes, not the buffer
  for (int i : {0, 31, 63}) {
    at::Tensor u = t.clone();
    u[i] = -1.0;
    EXPECT_NE(contents_hash(u), before) << "element " << i;
  }
}

TEST(ContentsHashTest, LargeTensorsAreHashedChunkByChunk) {
  // 3 MiB and a bit: several 1 MiB chunks and a short last one.
  at::Tensor t = torch::zeros({(3 << 20) / 4 + 5}, torch::kFloat);
  const auto before = contents_hash(t);
  const std::int64_t chunk = (1 << 20) / 4;  // elements
  for (std::int64_t i : {std::int64_t{0}, chunk + 1, t.numel() - 1}) {
    at::Tensor u = t.clone();
    u[i] = 1.0;
    EXPECT_NE(contents_hash(u), before) << "element " << i;
  }
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  EXPECT_EQ(contents_hash(t), before);  // independent of the threads
  at::set_num_threads(threads);
}

TEST(ContentsHashTest, GapsOfAViewAreNotPartOfIt) {
  at::Tensor base = torch::arange(16 * 25, torch::kFloat).view({16, 25});
  at::Tensor view = base.slice(1, 0, 24);  // [16, 24], strides [25, 1]
  const auto before = contents_hash(view);
  base.select(1, 24).fill_(-1.0);  // only the gap column
  EXPECT_EQ(contents_hash(view), before);
  base[3][5] = -1.0;
  EXPECT_NE(contents_hash(view), before);
  // A transposed (dense) view hashes the same bytes as the tensor.
  at::Tensor m = torch::randn({8, 5});
  EXPECT_EQ(contents_hash(m.t()), contents_hash(m));
}

TEST(ContentsHashTest, ExpandedTensorsAreHashedByTheirBuffer) {
  at::Tensor row = torch::arange(4, torch::kFloat);
  at::Tensor wide = row.expand({1 << 20, 4});  // 4M elements over 16 bytes
  const auto before = contents_hash(wide);
  ASSERT_TRUE(before.has_value());
  row[2] = 9.0;
  EXPECT_NE(contents_hash(wide), before);
}

TEST(ContentsHashTest, TensorsWithoutHostBytesHaveNoHash) {
  EXPECT_FALSE(contents_hash(at::Tensor()).has_value());
  EXPECT_FALSE(contents_hash(torch::empty({4}, torch::device(torch::kMeta)))
                   .has_value());
  EXPECT_TRUE(contents_hash(torch::empty({0})).has_value());
}

}  // namespace
