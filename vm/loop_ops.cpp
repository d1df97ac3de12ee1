// Loop and scan instructions: trip counts, slicing scanned inputs, appending
// per-iteration values and stacking them into the scan outputs.
#include <cstring>
#include <string>

#include "canary/error.h"
#include "vm/interpreter.h"
#include "vm/scan_ops.h"

namespace canary::vm {
namespace {

// A shape held on the stack (no allocation in the loop).
struct SmallShape {
  std::int64_t dims[kMaxTensorRank];
  std::size_t rank = 0;
  std::span<const std::int64_t> span() const { return {dims, rank}; }
  // Appends a dim; a rank above kMaxTensorRank is a shape error, not an overflow.
  void push(std::int64_t d) {
    if (rank == kMaxTensorRank)
      throw Error(ErrorKind::Shape, "rank above " + std::to_string(kMaxTensorRank) + " is not supported");
    dims[rank++] = d;
  }
};

// Product of dims [begin, end).
std::int64_t product(std::span<const std::int64_t> s, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

// Reads a one-element integer trip count.
std::optional<std::int64_t> read_count(const Tensor& t) {
  if (!t.defined() || t.numel() != 1) return std::nullopt;
  switch (t.dtype()) {
    case DType::I64: return t.data<std::int64_t>()[0];
    case DType::I32: return t.data<std::int32_t>()[0];
    default: return std::nullopt;
  }
}

}  // namespace

void slice_scan(const SliceParams& params, const LoopState& loop, const Tensor& x, Tensor& y) {
  const auto shape = std::span<const std::int64_t>(x.shape());
  const auto axis = static_cast<std::size_t>(params.axis);
  SmallShape out;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (i != axis) out.push(shape[i]);
  y.reset(x.dtype(), out.span());
  const std::int64_t index = params.reverse ? loop.trip_count - 1 - loop.iteration : loop.iteration;
  const std::int64_t outer = product(shape, 0, axis);
  const std::int64_t len = shape[axis];
  const auto inner = static_cast<std::size_t>(product(shape, axis + 1, shape.size())) * dtype_size(x.dtype());
  const auto* src = static_cast<const unsigned char*>(x.raw());
  auto* dst = static_cast<unsigned char*>(y.raw());
  for (std::int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + static_cast<std::size_t>(o) * inner, src + static_cast<std::size_t>(o * len + index) * inner, inner);
}

void append_scan(ScanBuffer& sb, const Tensor& t, std::size_t max_bytes) {
  if (sb.count > 0 && (t.dtype() != sb.dtype || t.shape() != sb.elem_shape))
    throw Error(ErrorKind::Shape, "scan output of iteration " + std::to_string(sb.count) + " is " + t.type_string() +
                                      ", iteration 0 gave " + std::string(dtype_name(sb.dtype)) +
                                      shape_to_string(sb.elem_shape));
  const std::size_t elem = t.nbytes();
  const std::size_t used = static_cast<std::size_t>(sb.count) * elem;
  if (used + elem > max_bytes)
    throw Error(ErrorKind::Resource, "stacked scan output exceeds the limit of " + std::to_string(max_bytes) + " bytes");
  if (sb.bytes.size() < used + elem) sb.bytes.resize(std::max(used + elem, sb.bytes.size() * 2));
  if (sb.count == 0) {
    sb.dtype = t.dtype();
    sb.elem_shape.assign(t.shape().begin(), t.shape().end());
  }
  if (elem != 0) std::memcpy(sb.bytes.data() + used, t.raw(), elem);
  ++sb.count;
}

// LoopInit: iteration 0, trip count from M (unbounded without it), empty scan buffers.
void Interpreter::init_loop(const Instruction& in) {
  const auto& lp = static_cast<const LoopParams&>(*in.params);
  LoopState& s = frame_.loops[lp.loop];
  s.iteration = 0;
  s.trip_count = INT64_MAX;
  if (ops_[in.operands].valid()) {
    const Tensor& m = input_reg(in, 0);
    std::optional<std::int64_t> trip = read_count(m);
    if (!trip) fail(in, ErrorKind::Input, "trip count M must be a one-element integer, got " + m.type_string());
    s.trip_count = std::max<std::int64_t>(*trip, 0);
  }
  for (std::uint32_t k = 0; k < lp.scan_count; ++k) frame_.scans[lp.first_scan + k].count = 0;
}

// ScanInit: the trip count is the common length of the scanned inputs along their axes.
void Interpreter::init_scan(const Instruction& in) {
  const auto& lp = static_cast<const LoopParams&>(*in.params);
  LoopState& s = frame_.loops[lp.loop];
  s.iteration = 0;
  for (std::uint32_t i = 0; i < in.num_inputs; ++i) {
    const Tensor& x = input_reg(in, static_cast<int>(i));
    const int axis = lp.axes[i];
    if (axis >= x.rank())
      fail(in, ErrorKind::Shape, "scanned input " + std::to_string(i) + " " + x.type_string() + " has no axis " +
                                     std::to_string(axis));
    const std::int64_t len = x.dim(axis);
    if (i > 0 && len != s.trip_count)
      fail(in, ErrorKind::Shape, "scanned input " + std::to_string(i) + " has length " + std::to_string(len) +
                                     " along its scan axis, input 0 has " + std::to_string(s.trip_count));
    s.trip_count = len;
  }
  for (std::uint32_t k = 0; k < lp.scan_count; ++k) frame_.scans[lp.first_scan + k].count = 0;
}

// ScanSlice: the current iteration's slice of a scanned input (axis removed).
void Interpreter::slice_scan_input(const Instruction& in) {
  slice_scan(static_cast<const SliceParams&>(*in.params), frame_.loops[in.slot], input_reg(in, 0),
             frame_.registers[output_id(in, 0).index]);
}

// ScanAppend: copies this iteration's value into the scan buffer; every
// iteration must produce the same dtype and shape.
void Interpreter::append_scan_output(const Instruction& in) {
  try {
    append_scan(frame_.scans[in.slot], input_reg(in, 0), limits_.max_tensor_bytes);
  } catch (const Error& e) {
    fail(in, e.kind(), e.detail());
  }
}

// ScanStack: the scan output with the iteration axis inserted at `axis`
// (reversed when asked); a zero-iteration loop gives a 0-length axis.
void Interpreter::stack_scan_output(const Instruction& in) {
  const auto& sp = static_cast<const StackParams&>(*in.params);
  const ScanBuffer& sb = frame_.scans[in.slot];
  Tensor& y = frame_.registers[output_id(in, 0).index];
  const auto axis = static_cast<std::size_t>(sp.axis);
  SmallShape elem;
  DType dtype = sb.dtype;
  if (sb.count == 0) {
    dtype = sp.elem_dtype;
    for (const graph::Dim& d : sp.elem_shape) elem.push(d.evaluate(frame_.bindings).value_or(0));
  } else {
    for (std::int64_t d : sb.elem_shape) elem.push(d);
  }
  SmallShape out;
  for (std::size_t i = 0; i <= elem.rank; ++i) {
    if (i == axis) out.push(sb.count);
    if (i < elem.rank) out.push(elem.dims[i]);
  }
  y.reset(dtype, out.span());
  if (sb.count == 0) return;
  const auto outer = static_cast<std::size_t>(product(elem.span(), 0, axis));
  const std::size_t inner = static_cast<std::size_t>(product(elem.span(), axis, elem.rank)) * dtype_size(dtype);
  const std::size_t elem_bytes = outer * inner;
  if (elem_bytes == 0) return;  // empty elements: nothing to copy (and no buffer to copy from)
  const auto count = static_cast<std::size_t>(sb.count);
  auto* dst = static_cast<unsigned char*>(y.raw());
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t p = sp.reverse ? count - 1 - k : k;
    for (std::size_t o = 0; o < outer; ++o)
      std::memcpy(dst + (o * count + p) * inner, sb.bytes.data() + k * elem_bytes + o * inner, inner);
  }
}

}  // namespace canary::vm
