// ArenaBudget: the bytes of tensor storage one interpreter (a Session's, or a
// shadow run's) may hold at once — the register buffers it keeps between
// calls plus everything a call allocates — so a model whose intermediates add
// up past Options::max_arena_bytes gets an Error(Resource) instead of an
// out-of-memory kill. Storage remembers the budget it was charged to and
// gives the bytes back when freed, on whatever thread that happens.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "canary/tensor.h"

namespace canary {

class ArenaBudget {
 public:
  explicit ArenaBudget(std::size_t max_bytes) noexcept : max_bytes_(max_bytes) {}

  // Takes `bytes` for a tensor of that dtype and shape out of the budget, or
  // throws Error(Resource) naming the tensor, the bytes already held and the
  // limit, leaving the budget as it was.
  void charge(std::size_t bytes, DType dtype, std::span<const std::int64_t> shape);
  void release(std::size_t bytes) noexcept { held_.fetch_sub(bytes, std::memory_order_relaxed); }

  std::size_t held() const noexcept { return held_.load(std::memory_order_relaxed); }
  std::size_t peak() const noexcept { return peak_.load(std::memory_order_relaxed); }
  std::size_t max_bytes() const noexcept { return max_bytes_; }

 private:
  const std::size_t max_bytes_;
  std::atomic<std::size_t> held_{0};
  std::atomic<std::size_t> peak_{0};
};

// Charges the storage of tensors allocated on this thread to `budget` while
// alive (null: nothing is charged). Scopes nest; the innermost one wins.
class ScopedArenaBudget {
 public:
  explicit ScopedArenaBudget(std::shared_ptr<ArenaBudget> budget) noexcept;
  ~ScopedArenaBudget();
  ScopedArenaBudget(const ScopedArenaBudget&) = delete;
  ScopedArenaBudget& operator=(const ScopedArenaBudget&) = delete;

 private:
  std::shared_ptr<ArenaBudget> previous_;
};

// Gives the tensor's storage back to the budget it was charged to (a call's
// outputs once they are the caller's) when the tensor is its only holder;
// no effect on storage charged to none, or still shared with the session.
void release_from_arena(Tensor& tensor) noexcept;

}  // namespace canary
