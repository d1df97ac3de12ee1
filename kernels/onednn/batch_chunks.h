// A batch run as chunks of power-of-two sizes, so that oneDNN primitives
// made per batch size (convolutions, pooling: 0.3-3 ms each to create) serve
// every batch size of a stream; and the rule that gives a batch size that
// keeps coming back a primitive of its own.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "kernels/onednn/primitive_cache.h"

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

// Calls per exact shape, to tell when a batch size that is not a power of
// two has come back often enough to deserve a primitive of its own. Chunks
// cost a few percent in the steady state (ResNet-18 at batch 7, one thread:
// 21.5 against 20.0 ms; a batch-1 chunk of a 12x12 map is too small for
// Winograd), which repays a creation (about 1 ms per convolution) within
// a few dozen calls.
class HotBatches {
 public:
  static constexpr int kHotCalls = 16;

  // Counts a call of the exact shape `key`; true from its kHotCalls-th on.
  bool hot(const PrimitiveKey& key);

 private:
  static constexpr std::size_t kMaxShapes = 4096;
  std::unordered_map<PrimitiveKey, int, PrimitiveKeyHash> calls_;
};

// How to run a batch of `images` whose whole-batch primitive is `cached`
// (already made) or not: whole when it is a power of two, cached or hot
// (hot.hot(key) is counted only when asked), else in batch_chunks.
std::vector<BatchChunk> batch_plan(std::int64_t images, bool cached, HotBatches& hot, const PrimitiveKey& key);

}  // namespace canary::kernels::onednn
