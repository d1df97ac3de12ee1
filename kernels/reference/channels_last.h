// Running a channels-first kernel on channels-last tensors (the
// channels_last attribute of Conv and pooling): x [N, spatial..., C] is
// transposed to [N, C, spatial...], the kernel runs, and its result comes
// back as [N, spatial..., C]. The reference kernels take this detour; the
// oneDNN kernels read channels-last buffers directly.
#pragma once

#include <cstdint>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "kernels/reference.h"

namespace canary::kernels::detail {

// perm taking [N, spatial..., C] to [N, C, spatial...], or the inverse.
inline std::vector<std::int64_t> channels_perm(std::int64_t rank, bool to_first) {
  std::vector<std::int64_t> perm{0};
  if (to_first) {
    perm.push_back(rank - 1);
    for (std::int64_t i = 1; i < rank - 1; ++i) perm.push_back(i);
  } else {
    for (std::int64_t i = 2; i < rank; ++i) perm.push_back(i);
    perm.push_back(1);
  }
  return perm;
}

template <typename Kernel>
void through_channels_first(const Tensor& x, Tensor& y, Kernel&& kernel) {
  if (x.rank() < 3)
    throw Error(ErrorKind::Shape, "channels-last input " + x.type_string() + " needs rank 3 or more");
  Tensor xf, yf;
  transpose(channels_perm(x.rank(), true), x, xf);
  kernel(static_cast<const Tensor&>(xf), yf);
  transpose(channels_perm(yf.rank(), false), yf, y);
}

}  // namespace canary::kernels::detail
