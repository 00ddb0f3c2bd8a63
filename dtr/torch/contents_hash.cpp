#include "dtr/torch/contents_hash.h"

#include <ATen/Parallel.h>

#include <vector>

#include "dtr/torch/plain_tensors.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace dtr::pt {
namespace {

// Spans up to one chunk are hashed directly; longer ones as the hash of
// their chunks' hashes, so that threads can share the work.
constexpr std::int64_t kChunkBytes = std::int64_t{1} << 20;

std::uint64_t hash_chunks(const char* p, std::int64_t n) {
  const std::int64_t chunks = (n + kChunkBytes - 1) / kChunkBytes;
  std::vector<XXH64_hash_t> parts(static_cast<std::size_t>(chunks));
  at::parallel_for(0, chunks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      const std::int64_t from = c * kChunkBytes;
      parts[static_cast<std::size_t>(c)] = XXH3_64bits(
          p + from, static_cast<std::size_t>(std::min(kChunkBytes, n - from)));
    }
  });
  return XXH3_64bits(parts.data(), parts.size() * sizeof(XXH64_hash_t));
}

// Bytes from the first element to one past the last.
std::int64_t span_bytes(const at::Tensor& t) {
  std::int64_t last = 0;
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    last += (t.size(d) - 1) * t.stride(d);
  }
  return (last + 1) * static_cast<std::int64_t>(t.itemsize());
}

// The elements of a view with gaps, in index order, one run of the innermost
// dimension at a time: the gaps may belong to other tensors, whose writes
// must not count as writes to this one.
std::uint64_t hash_elements(const char* p, const at::Tensor& t) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  const auto item = static_cast<std::int64_t>(t.itemsize());
  const std::int64_t dims = t.dim();
  const std::int64_t inner = t.size(dims - 1);
  const std::int64_t inner_stride = t.stride(dims - 1);
  std::vector<std::int64_t> index(static_cast<std::size_t>(dims - 1), 0);
  for (std::int64_t row = 0; row < t.numel() / inner; ++row) {
    std::int64_t offset = 0;
    for (std::int64_t d = 0; d + 1 < dims; ++d) {
      offset += index[static_cast<std::size_t>(d)] * t.stride(d);
    }
    if (inner_stride == 1) {
      XXH3_64bits_update(&state, p + offset * item,
                         static_cast<std::size_t>(inner * item));
    } else {
      for (std::int64_t i = 0; i < inner; ++i) {
        XXH3_64bits_update(&state, p + (offset + i * inner_stride) * item,
                           static_cast<std::size_t>(item));
      }
    }
    for (std::int64_t d = dims - 2; d >= 0; --d) {  // next row
      auto& k = index[static_cast<std::size_t>(d)];
      if (++k < t.size(d)) break;
      k = 0;
    }
  }
  return XXH3_64bits_digest(&state);
}

}  // namespace

std::optional<std::uint64_t> contents_hash(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage() || !t.device().is_cpu()) {
    return std::nullopt;
  }
  const auto* base = static_cast<const char*>(t.storage().data());
  if (t.numel() == 0) return XXH3_64bits(nullptr, 0);
  if (base == nullptr) return std::nullopt;
  const char* p = base + t.storage_offset() * t.itemsize();
  // Views with gaps are hashed element by element; overlapping ones
  // (expanded: stride 0) by their span, which is smaller than their elements.
  const bool dense = t.is_non_overlapping_and_dense();
  if (!dense && elements_are_distinct(t)) return hash_elements(p, t);
  const std::int64_t n = span_bytes(t);
  if (n <= kChunkBytes) return XXH3_64bits(p, static_cast<std::size_t>(n));
  return hash_chunks(p, n);
}

}  // namespace dtr::pt
