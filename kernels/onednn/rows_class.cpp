// Shape-class matmul primitives with a run-time row count (see rows_class.h).
#include "kernels/onednn/rows_class.h"

#include <array>
#include <mutex>
#include <utility>
#include <vector>

#include "kernels/onednn.h"
#include "kernels/onednn/engine.h"

namespace canary::kernels::onednn {

dnnl::memory::desc RowsArgument::class_desc() const {
  dnnl::memory::dims d = dims;
  if (runtime_rows) d[0] = DNNL_RUNTIME_DIM_VAL;
  return dnnl::memory::desc(d, type, strides);
}

dnnl::memory::desc RowsArgument::call_desc(std::int64_t rows) const {
  dnnl::memory::dims d = dims;
  if (runtime_rows) d[0] = rows;
  return dnnl::memory::desc(d, type, strides);
}

RowsClassPrimitive::RowsClassPrimitive(dnnl::primitive primitive, std::vector<RowsArgument> arguments)
    : primitive_(std::move(primitive)), arguments_(std::move(arguments)) {}

// The memory objects for `rows`, made on first use; the kept set starts over when full.
RowsClassPrimitive::Memories& RowsClassPrimitive::memories_for(std::int64_t rows) {
  auto it = by_rows_.find(rows);
  if (it != by_rows_.end()) return it->second;
  if (by_rows_.size() >= kMaxKeptRowCounts) by_rows_.clear();
  Memories memories;
  memories.reserve(arguments_.size());
  for (const RowsArgument& a : arguments_)
    memories.push_back(dnnl::memory(a.call_desc(rows), cpu_engine(), DNNL_MEMORY_NONE));
  return by_rows_.emplace(rows, std::move(memories)).first->second;
}

// Binds the buffers for this row count and runs through the C API (no argument map).
void RowsClassPrimitive::execute(std::int64_t rows, std::span<const void* const> buffers) {
  if (buffers.size() != arguments_.size())
    throw dnnl::error(dnnl_invalid_arguments, "wrong number of primitive buffers");
  Memories& memories = memories_for(rows);
  std::array<dnnl_exec_arg_t, CachedPrimitive::kMaxArgs> args{};
  if (arguments_.size() > args.size()) throw dnnl::error(dnnl_invalid_arguments, "too many primitive arguments");
  for (std::size_t i = 0; i < arguments_.size(); ++i) {
    memories[i].set_data_handle(const_cast<void*>(buffers[i]));
    args[i] = dnnl_exec_arg_t{arguments_[i].arg, memories[i].get()};
  }
  dnnl::stream& stream = thread_stream();
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(primitive_.get(), stream.get(), static_cast<int>(arguments_.size()), args.data()),
      "could not execute a primitive");
  stream.wait();
}

std::size_t RowsClasses::size() const {
  std::size_t usable = 0;
  for (const auto& [key, primitive] : primitives_) usable += primitive != nullptr;
  return usable;
}

void RowsClasses::clear() {
  primitives_.clear();
  calls_ = hits_ = misses_ = 0;
}

RowsClasses& thread_rows_classes() {
  thread_local RowsClasses classes;
  return classes;
}

}  // namespace canary::kernels::onednn

namespace canary::kernels {

// Runs a few run-time-row products, once per process: oneDNN's gemm
// generates kernels per path, and the paths differ by row count (one row,
// two, more) and by B's layout (plain or transposed, as Gemm's transB).
void onednn_warm_up_shape_classes() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      const OnednnThreadScope one_thread(1);
      using dt = dnnl::memory::data_type;
      constexpr std::int64_t k = 16, n = 16;
      std::vector<float> a(64 * k, 1.0f), b(k * n, 1.0f), y(64 * n);
      for (bool transposed : {false, true}) {
        const std::vector<onednn::RowsArgument> args{
            {DNNL_ARG_SRC, {1, k}, {k, 1}, dt::f32, true},
            {DNNL_ARG_WEIGHTS, {k, n}, {transposed ? 1 : n, transposed ? k : 1}, dt::f32, false},
            {DNNL_ARG_DST, {1, n}, {n, 1}, dt::f32, true}};
        const dnnl::matmul::primitive_desc pd(
            dnnl::matmul::desc(args[0].class_desc(), args[1].class_desc(), args[2].class_desc()),
            onednn::cpu_engine());
        onednn::RowsClassPrimitive product(dnnl::matmul(pd), args);
        for (std::int64_t rows : {1, 2, 5, 17, 64}) {
          const std::array<const void*, 3> buffers{a.data(), b.data(), y.data()};
          product.execute(rows, buffers);
        }
      }
    } catch (const dnnl::error&) {
      // Nothing (more) warmed: the first shape-class call generates the kernels.
    }
  });
}

}  // namespace canary::kernels
