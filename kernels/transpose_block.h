// A dense 2-D f32 transpose between strided buffers: the layout changes of
// kernels that run channels-last inside and keep plain layouts outside (the
// tiled 1-D convolution gathers [C, W] columns into [W, C] tiles and
// scatters [W, M] results back into [M, W] rows).
//
// Written element by element, such a copy reads one of its sides with a
// stride, one float per load, and took 40% of a dilated TCN's call; here it
// moves 8x8 blocks through AVX registers (unpack and shuffle, eight loads and
// eight stores per 64 floats) where the host has AVX2, the ragged edges and
// other hosts element by element.
#pragma once

#include <cstddef>
#include <cstdint>

namespace canary::kernels {

// dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols.
// The buffers must not overlap.
void transpose_block(const float* src, std::int64_t src_stride, float* dst, std::int64_t dst_stride,
                     std::int64_t rows, std::int64_t cols);

}  // namespace canary::kernels
