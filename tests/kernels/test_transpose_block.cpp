// kernels/transpose_block.h: the strided 2-D transposes of the layout changes,
// at every block-remainder combination and with strides wider than the block.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "kernels/transpose_block.h"

TEST_CASE("transpose_block moves every element and nothing else, ragged edges included", "[unit][kernels]") {
  for (std::int64_t rows : {1, 7, 8, 9, 16, 35}) {
    for (std::int64_t cols : {1, 5, 8, 13, 24, 66}) {
      INFO(rows << " x " << cols);
      const std::int64_t src_stride = cols + 3, dst_stride = rows + 5;
      std::vector<float> src(static_cast<std::size_t>(rows * src_stride));
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) + 0.5f;
      std::vector<float> dst(static_cast<std::size_t>(cols * dst_stride), -1.0f);
      canary::kernels::transpose_block(src.data(), src_stride, dst.data(), dst_stride, rows, cols);
      int wrong = 0;
      for (std::int64_t j = 0; j < cols; ++j) {
        for (std::int64_t i = 0; i < dst_stride; ++i) {
          const float want = i < rows ? src[static_cast<std::size_t>(i * src_stride + j)] : -1.0f;  // padding untouched
          wrong += dst[static_cast<std::size_t>(j * dst_stride + i)] != want;
        }
      }
      CHECK(wrong == 0);
    }
  }
}
