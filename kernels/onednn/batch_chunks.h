// A batch run as chunks of power-of-two sizes, so that oneDNN primitives
// made per batch size (convolutions, pooling: 0.3-3 ms each to create) serve
// every batch size of a stream.
#pragma once

#include <cstdint>
#include <vector>

namespace canary::kernels::onednn {

// A run of images of a batch: [first, first + images).
struct BatchChunk {
  std::int64_t first, images;
};

// A batch of `images` as chunks whose sizes are the powers of two that add
// up to it, largest first (13: 8, 4, 1). Every batch size of a stream up to
// 2^k then needs only k + 1 primitives per op, and a batch size not seen
// before usually none. Ops whose images are computed apart (convolution,
// pooling) give the same result either way.
std::vector<BatchChunk> batch_chunks(std::int64_t images);

}  // namespace canary::kernels::onednn
