// Index tensors to flat data offsets, bounds-checked, for the reference
// kernels that read or write data at positions an input names: the
// per-element indices of GatherElements and ScatterElements, and the index
// tuples of GatherND and ScatterND. Every index is checked before any data
// moves, so a bad one leaves the output untouched and never reaches memory
// outside data; the errors name the op, the index, where it is and the bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canary/tensor.h"

namespace canary::kernels::detail {

// The multi-index of flat position i in a row-major shape, as "[1, 0]".
std::string position_text(const Shape& shape, std::int64_t i);

// Rejects indices of another rank than data, or larger than data on a dim
// other than the axis: they would name rows data does not have. Error(Shape) naming op and both shapes.
void check_element_indices(const char* op, std::int64_t axis, const Tensor& data, const Tensor& indices);

// For every element i of indices, the offset in data of i with i[axis]
// replaced by indices[i] (negative from the end of the axis). An index
// outside [-dim, dim) is Error(Input). `axis` is normalised; the shapes
// passed check_element_indices.
std::vector<std::int64_t> element_offsets(const char* op, std::int64_t axis, const Tensor& data,
                                          const Tensor& indices);

// The index tuples of i64 indices [..., k] read as positions in data dims
// [first, first + k): for tuple t, the offset sum(index_j * stride_j) within
// one block of data.shape[first:] (negative indices from the end of their
// dim). An index outside [-dim, dim) is Error(Input). The caller checked
// that first + k <= rank.
std::vector<std::int64_t> tuple_offsets(const char* op, std::int64_t first, const Tensor& data,
                                        const Tensor& indices);

}  // namespace canary::kernels::detail
