// Blocked-layout convolutions (see conv_blocked.h).
#include "kernels/onednn/conv_blocked.h"

#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/onednn/batch_chunks.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/epilogue.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/scratch_buffer.h"
#include "kernels/onednn/weight_copies.h"

namespace canary::kernels::onednn {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// Shapes kept per thread before the cache starts over (each holds a
// primitive and up to two reorders).
constexpr std::size_t kMaxBlockedConvs = 128;

// One operand that may need a reorder between the plain buffer and the primitive's layout.
struct Edge {
  dnnl::memory plain, blocked;  // handles bound per call
  dnnl::reorder reorder;        // empty when the primitive takes the plain layout
  bool needs_reorder() const { return static_cast<bool>(reorder); }
};

struct BlockedConv {
  bool usable = false;  // oneDNN chose a direct or Winograd kernel (not gemm or reference)
  bool winograd = false;
  dnnl::convolution_forward conv;
  Edge src, dst;
  dnnl::memory::desc weights_plain_md, weights_md;
  dnnl::memory plain_weights;  // w itself, bound per call (the primitive's layout or a reorder's source)
  dnnl::memory scratch_weights;  // blocked weights that are not constant, rewritten per call
  dnnl::memory bias;
};

struct BlockedConvs {
  std::unordered_map<PrimitiveKey, std::unique_ptr<BlockedConv>, PrimitiveKeyHash> by_shape;
  HotBatches hot;  // whole-batch shapes that come back
  UninitializedBytes src, dst;  // reorder buffers of the blocked activations
  std::uint64_t calls = 0, created = 0, winograd_calls = 0;
};

BlockedConvs& thread_blocked_convs() {
  thread_local BlockedConvs convs;
  return convs;
}

// True for oneDNN's direct kernels (not its gemm or reference fallbacks).
bool direct_kernel(const std::string& impl) {
  return impl.find("gemm") == std::string::npos && impl.find("ref") == std::string::npos;
}

// The reorder between a plain descriptor and the primitive's, in the direction given.
Edge make_edge(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen, bool into_primitive) {
  Edge e;
  e.plain = dnnl::memory(plain, cpu_engine(), nullptr);
  if (plain == chosen) return e;
  e.blocked = dnnl::memory(chosen, cpu_engine(), nullptr);
  e.reorder = into_primitive ? dnnl::reorder(e.plain, e.blocked) : dnnl::reorder(e.blocked, e.plain);
  return e;
}

// oneDNN's convolution of this shape by `algorithm`, any layouts.
dnnl::convolution_forward::primitive_desc conv_primitive_desc(const BlockedConvShape& s, dnnl::algorithm algorithm) {
  const dnnl::memory::desc any_src(s.src, dt::f32, tag::any), any_w(s.weights, dt::f32, tag::any),
      any_dst(s.dst, dt::f32, tag::any);
  const dnnl::memory::desc b_md = s.has_bias ? dnnl::memory::desc({s.dst[1]}, dt::f32, tag::a) : dnnl::memory::desc();
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, any_src, any_w, b_md,
                                             any_dst, s.strides, s.dilations, s.pad_l, s.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, epilogue_attributes(s.epilogue), cpu_engine());
}

// The Winograd primitive descriptor where the shape suits it and oneDNN has
// a kernel for it on this host (channel counts, ISA and post-ops permitting).
std::optional<dnnl::convolution_forward::primitive_desc> winograd_primitive_desc(const BlockedConvShape& s) {
  if (!s.operands_finite || !winograd_suits(s)) return std::nullopt;
  try {
    return conv_primitive_desc(s, dnnl::algorithm::convolution_winograd);
  } catch (const dnnl::error&) {
    return std::nullopt;  // unimplemented here: the direct kernel runs it
  }
}

std::unique_ptr<BlockedConv> make_blocked_conv(const BlockedConvShape& s) {
  auto c = std::make_unique<BlockedConv>();
  std::optional<dnnl::convolution_forward::primitive_desc> winograd = winograd_primitive_desc(s);
  c->winograd = winograd.has_value();
  const dnnl::convolution_forward::primitive_desc pd =
      c->winograd ? *winograd : conv_primitive_desc(s, dnnl::algorithm::convolution_direct);
  c->usable = direct_kernel(pd.impl_info_str());
  if (!c->usable) return c;
  c->conv = dnnl::convolution_forward(pd);
  const auto plain = [&](const dnnl::memory::dims& dims) {
    return s.channels_last ? channels_last_desc(dims) : row_major_desc(dims);
  };
  c->src = make_edge(plain(s.src), pd.src_desc(), true);
  c->dst = make_edge(plain(s.dst), pd.dst_desc(), false);
  c->weights_plain_md = row_major_desc(s.weights);
  c->weights_md = pd.weights_desc();
  c->plain_weights = dnnl::memory(c->weights_plain_md, cpu_engine(), nullptr);
  if (s.has_bias) c->bias = dnnl::memory(pd.bias_desc(), cpu_engine(), nullptr);
  return c;
}

// The key of a shape: every dim, the geometry, the layout of the buffers,
// the bias, the finiteness of the operands and the epilogue.
PrimitiveKey blocked_key(const BlockedConvShape& s) {
  PrimitiveKey key(PrimitiveKind::Conv);
  for (const dnnl::memory::dims* list : {&s.src, &s.weights, &s.dst, &s.strides, &s.dilations, &s.pad_l, &s.pad_r})
    key.push_list(*list);
  key.push(s.has_bias ? 1 : 0);
  key.push(s.channels_last ? 1 : 0);
  key.push(s.operands_finite ? 1 : 0);
  push_epilogue(key, s.epilogue);
  return key;
}

// The shape of a chunk of `images` images of s.
BlockedConvShape chunk_shape(const BlockedConvShape& s, std::int64_t images) {
  BlockedConvShape chunk = s;
  chunk.src[0] = chunk.dst[0] = images;
  return chunk;
}

// The calling thread's convolution for this shape (created on first use),
// or null when its key does not fit. The caller has made room (make_room).
BlockedConv* blocked_conv_for(const BlockedConvShape& s) {
  const PrimitiveKey key = blocked_key(s);
  if (!key.valid()) return nullptr;
  BlockedConvs& all = thread_blocked_convs();
  auto it = all.by_shape.find(key);
  if (it != all.by_shape.end()) return it->second.get();
  throw_if_creation_fault();
  ++all.created;
  return all.by_shape.emplace(key, make_blocked_conv(s)).first->second.get();
}

// The weights the primitive reads: w itself when it takes the plain layout;
// for a constant, its kept blocked copy (made on first use); otherwise a
// fresh reorder into the shape's scratch.
const dnnl::memory& weights_for(BlockedConv& c, const Tensor& w, bool weights_are_constant) {
  if (c.weights_md == c.weights_plain_md) {
    c.plain_weights.set_data_handle(const_cast<void*>(w.raw()));
    return c.plain_weights;
  }
  // Only a Canary-owned constant can be pinned: its address then cannot be reused by another tensor.
  if (!weights_are_constant || !w.owns_storage()) {
    if (!c.scratch_weights) c.scratch_weights = dnnl::memory(c.weights_md, cpu_engine());
    reorder_weights(w, c.weights_plain_md, c.scratch_weights);
    return c.scratch_weights;
  }
  return thread_weight_copies().copy_of(w, c.weights_plain_md, c.weights_md);
}

void execute(const dnnl::primitive& p, dnnl_exec_arg_t* args, int count, const char* what) {
  dnnl::error::wrap_c_api(dnnl_primitive_execute(p.get(), thread_stream().get(), count, args), what);
}

}  // namespace

bool winograd_suits(const BlockedConvShape& s) {
  constexpr std::int64_t kMinOutputPoints = 36, kMinBatchOutputPoints = 256, kMinInputChannels = 16,
                         kMinOutputChannels = 32, kMinChannelProduct = 1024;
  if (s.src.size() != 4 || s.weights.size() != 4) return false;  // 2-D and one group ([M, C, kh, kw])
  if (s.weights[2] != 3 || s.weights[3] != 3) return false;
  const std::int64_t out_channels = s.weights[0], in_channels = s.weights[1];
  if (in_channels < kMinInputChannels || out_channels < kMinOutputChannels ||
      in_channels * out_channels < kMinChannelProduct)
    return false;
  for (std::size_t i = 0; i < 2; ++i)
    if (s.strides[i] != 1 || s.dilations[i] != 0) return false;
  const std::int64_t points = s.dst[2] * s.dst[3];
  return points >= kMinOutputPoints && s.dst[0] * points >= kMinBatchOutputPoints;
}

namespace {

// Runs one chunk's convolution: x and y point at its first image.
void run_chunk(BlockedConv& c, const float* x, const dnnl::memory& weights, const Tensor* b, float* y) {
  BlockedConvs& all = thread_blocked_convs();
  c.src.plain.set_data_handle(const_cast<float*>(x));
  c.dst.plain.set_data_handle(y);
  dnnl::memory& src = c.src.needs_reorder() ? c.src.blocked : c.src.plain;
  dnnl::memory& dst = c.dst.needs_reorder() ? c.dst.blocked : c.dst.plain;
  if (c.src.needs_reorder()) {
    c.src.blocked.set_data_handle(all.src.reserve(c.src.blocked.get_desc().get_size()));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, c.src.plain.get()}, {DNNL_ARG_TO, c.src.blocked.get()}};
    execute(c.src.reorder, args, 2, "convolution input reorder");
  }
  if (c.dst.needs_reorder()) c.dst.blocked.set_data_handle(all.dst.reserve(c.dst.blocked.get_desc().get_size()));
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src.get()}, {DNNL_ARG_WEIGHTS, weights.get()},
                             {DNNL_ARG_DST, dst.get()}, {DNNL_ARG_BIAS, nullptr}};
  int count = 3;
  if (b) {
    c.bias.set_data_handle(const_cast<void*>(b->raw()));
    args[count++].memory = c.bias.get();
  }
  execute(c.conv, args, count, "blocked convolution");
  if (c.dst.needs_reorder()) {
    dnnl_exec_arg_t back[2] = {{DNNL_ARG_FROM, c.dst.blocked.get()}, {DNNL_ARG_TO, c.dst.plain.get()}};
    execute(c.dst.reorder, back, 2, "convolution output reorder");
  }
  thread_stream().wait();
}

std::int64_t product(const dnnl::memory::dims& dims, std::size_t from) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < dims.size(); ++i) n *= dims[i];
  return n;
}

}  // namespace

bool blocked_conv(const BlockedConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                  bool weights_are_constant) {
  BlockedConvs& all = thread_blocked_convs();
  const PrimitiveKey whole = blocked_key(s);
  if (!whole.valid()) return false;
  const std::vector<BatchChunk> chunks = batch_plan(s.src[0], all.by_shape.contains(whole), all.hot, whole);
  // Starting over only here keeps the chunks' primitives alive through the call.
  if (all.by_shape.size() + chunks.size() > kMaxBlockedConvs) all.by_shape.clear();
  // Every chunk's primitive first: y stays untouched when one has no direct kernel.
  std::vector<BlockedConv*> convs;
  for (const BatchChunk& chunk : chunks) {
    BlockedConv* c = blocked_conv_for(chunk_shape(s, chunk.images));
    if (c == nullptr || !c->usable) return false;
    convs.push_back(c);
  }
  ++all.calls;
  if (s.channels_last) y.reset(DType::F32, channels_last_dims(s.dst));
  else y.reset(DType::F32, std::span<const std::int64_t>(s.dst.data(), s.dst.size()));
  // Both layouts keep an image's values together, so a chunk starts at its first image.
  const std::int64_t src_image = product(s.src, 1), dst_image = product(s.dst, 1);
  bool winograd = false;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    BlockedConv& c = *convs[i];
    winograd = winograd || c.winograd;
    const dnnl::memory& weights = weights_for(c, w, weights_are_constant);
    run_chunk(c, x.data<float>() + chunks[i].first * src_image, weights, b,
              y.data<float>() + chunks[i].first * dst_image);
  }
  all.winograd_calls += winograd ? 1 : 0;
  return true;
}

void add_blocked_conv_stats(OnednnCacheStats& stats) {
  stats.blocked_conv_calls += thread_blocked_convs().calls;
  stats.blocked_conv_shapes += thread_blocked_convs().created;
  stats.winograd_conv_calls += thread_blocked_convs().winograd_calls;
}

void clear_blocked_convs() {
  thread_blocked_convs() = BlockedConvs();
  thread_weight_copies().clear();
}

}  // namespace canary::kernels::onednn
