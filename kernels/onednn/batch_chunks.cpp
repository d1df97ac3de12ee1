// Power-of-two batch chunks (see batch_chunks.h).
#include "kernels/onednn/batch_chunks.h"

#include <bit>

namespace canary::kernels::onednn {

std::vector<BatchChunk> batch_chunks(std::int64_t images) {
  std::vector<BatchChunk> chunks;
  if (images <= 0) return chunks;
  std::int64_t first = 0;
  for (std::uint64_t size = std::bit_floor(static_cast<std::uint64_t>(images)); size > 0; size >>= 1)
    if (static_cast<std::uint64_t>(images) & size) {
      chunks.push_back({first, static_cast<std::int64_t>(size)});
      first += static_cast<std::int64_t>(size);
    }
  return chunks;
}

bool HotBatches::hot(const PrimitiveKey& key) {
  if (calls_.size() >= kMaxShapes) calls_.clear();
  int& calls = calls_[key];
  if (calls < kHotCalls) ++calls;
  return calls >= kHotCalls;
}

std::vector<BatchChunk> batch_plan(std::int64_t images, bool cached, HotBatches& hot, const PrimitiveKey& key) {
  if (images <= 0) return {};
  if (std::has_single_bit(static_cast<std::uint64_t>(images)) || cached || hot.hot(key)) return {{0, images}};
  return batch_chunks(images);
}

}  // namespace canary::kernels::onednn
