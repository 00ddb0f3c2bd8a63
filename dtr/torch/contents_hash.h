#pragma once
/// A fingerprint of the bytes a plain tensor covers, so that a replay can
/// tell whether a plain input changed since its capture however it was
/// written (Note [Stale plain inputs]).
#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

namespace dtr::pt {

/// XXH3 of the bytes from `t`'s first element to its last (gaps of a strided
/// view included), or nullopt where the bytes cannot be read on the host: no
/// storage, no data, or not on the CPU. Large spans are hashed in fixed
/// chunks on ATen's intra-op threads; the result does not depend on the
/// number of threads.
std::optional<std::uint64_t> contents_hash(const at::Tensor& t);

}  // namespace dtr::pt
