// ScanSlice and ScanAppend as functions of their operands, shared by the
// interpreter and by compiled loop traces, which run them on the same frame
// (FrameView::loops and FrameView::scans).
#pragma once

#include <cstddef>

#include "canary/tensor.h"
#include "vm/bytecode.h"
#include "vm/frame.h"

namespace canary::vm {

// y = the slice of x that the loop's current iteration scans (params.axis
// removed; counted from the end when params.reverse).
void slice_scan(const SliceParams& params, const LoopState& loop, const Tensor& x, Tensor& y);

// Appends t to the buffer. Error(Shape) when t's dtype or shape differs from
// the first iteration's, Error(Resource) when the stacked bytes would exceed
// max_bytes; the buffer is unchanged then.
void append_scan(ScanBuffer& buffer, const Tensor& t, std::size_t max_bytes);

}  // namespace canary::vm
