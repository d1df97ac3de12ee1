// Tiled channels-last 1-D convolution (see conv_tiled.h).
#include "kernels/onednn/conv_tiled.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn/engine.h"
#include "kernels/onednn/epilogue.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/threading.h"
#include "kernels/transpose_block.h"

namespace canary::kernels::onednn {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// Convolutions kept per thread before the cache starts over (each holds two
// primitives and a blocked weight copy, a few hundred KiB at most).
constexpr std::size_t kMaxTiledConvs = 64;

// One primitive of a fixed tile count, with its channels-last buffers.
struct TilePrimitive {
  std::int64_t tiles = 0;
  dnnl::convolution_forward conv;
  dnnl::memory src, dst;
  dnnl::memory dst_in_y;  // dst's layout over the output itself (handle bound per call; see output_in_place)
};

// Everything one convolution geometry needs, shared by all its calls on this thread.
struct TiledConv {
  bool usable = false;  // oneDNN picked a channels-last kernel
  std::int64_t tile_in = 0;
  TilePrimitive group, single;
  dnnl::memory::desc weights_md;
  dnnl::memory weights;   // blocked copy of w
  dnnl::memory bias;      // handle bound per call
  Tensor weights_source;  // the constant w the copy was made from (pins its buffer)
};

// The halo of a tile: inputs a tile of kTileOut outputs reads.
std::int64_t tile_input(const TiledConvShape& s) { return kTileOut + (s.kernel - 1) * s.dilation; }

// Creates the primitive for `tiles` tiles; its weights layout is left to oneDNN.
TilePrimitive make_tile_primitive(const TiledConvShape& s, std::int64_t tiles, std::int64_t tile_in,
                                  dnnl::memory::desc& weights_md, std::string& impl) {
  const dt operand = operand_data_type(s.encoding);
  const dnnl::memory::desc src({tiles, s.channels, tile_in}, operand, tag::acb);
  const dnnl::memory::desc dst({tiles, s.out_channels, kTileOut}, dt::f32, tag::acb);
  const dnnl::memory::desc w({s.out_channels, s.channels, s.kernel}, operand, tag::any);
  const dnnl::memory::desc b = s.has_bias ? dnnl::memory::desc({s.out_channels}, dt::f32, tag::a) : dnnl::memory::desc();
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             src, w, b, dst, {1}, {s.dilation - 1}, {0}, {0});
  const dnnl::convolution_forward::primitive_desc pd(desc, epilogue_attributes(s.epilogue), cpu_engine());
  impl = pd.impl_info_str();
  weights_md = pd.weights_desc();
  return {tiles, dnnl::convolution_forward(pd), dnnl::memory(src, cpu_engine()), dnnl::memory(dst, cpu_engine()),
          dnnl::memory(dst, cpu_engine(), nullptr)};
}

// True for oneDNN's channels-last JIT kernels (not its gemm or reference fallbacks).
bool fast_kernel(const std::string& impl) {
  return impl.find("gemm") == std::string::npos && impl.find("ref") == std::string::npos;
}

// Runs p once on zeros. oneDNN's brgconv finishes setting up its kernels on
// a primitive's first execution (0.02-0.04 ms here): the single-tile
// primitive would otherwise pay that on the first call whose tile count is
// not a multiple of the group's, which is a call at a new shape.
void run_on_zeros(TiledConv& t, TilePrimitive& p, const TiledConvShape& s) {
  std::memset(p.src.get_data_handle(), 0, p.src.get_desc().get_size());
  std::vector<float> zero_bias(static_cast<std::size_t>(s.has_bias ? s.out_channels : 0), 0.0f);
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, p.src.get()}, {DNNL_ARG_WEIGHTS, t.weights.get()},
                             {DNNL_ARG_DST, p.dst.get()}, {DNNL_ARG_BIAS, nullptr}};
  int num_args = 3;
  if (s.has_bias) {
    t.bias.set_data_handle(zero_bias.data());
    args[num_args++].memory = t.bias.get();
  }
  dnnl::error::wrap_c_api(dnnl_primitive_execute(p.conv.get(), thread_stream().get(), num_args, args),
                          "tiled convolution warm-up");
  thread_stream().wait();
}

std::unique_ptr<TiledConv> make_tiled_conv(const TiledConvShape& s) {
  auto t = std::make_unique<TiledConv>();
  t->tile_in = tile_input(s);
  std::string group_impl, single_impl;
  dnnl::memory::desc single_weights;
  t->group = make_tile_primitive(s, kGroupTiles, t->tile_in, t->weights_md, group_impl);
  t->single = make_tile_primitive(s, 1, t->tile_in, single_weights, single_impl);
  // Both primitives must read the same blocked weights.
  t->usable = fast_kernel(group_impl) && fast_kernel(single_impl) && single_weights == t->weights_md;
  if (!t->usable) return t;
  t->weights = dnnl::memory(t->weights_md, cpu_engine());
  std::memset(t->weights.get_data_handle(), 0, t->weights_md.get_size());  // load_weights fills it per call
  if (s.has_bias) t->bias = dnnl::memory(dnnl::memory::desc({s.out_channels}, dt::f32, tag::a), cpu_engine(), nullptr);
  run_on_zeros(*t, t->single, s);
  return t;
}

// The calling thread's tiled convolutions and their counters.
struct TiledConvs {
  std::unordered_map<PrimitiveKey, std::unique_ptr<TiledConv>, PrimitiveKeyHash> by_geometry;
  std::uint64_t calls = 0, created = 0;
};

TiledConvs& thread_tiled_convs() {
  thread_local TiledConvs convs;
  return convs;
}

// The calling thread's convolution for this geometry and encoding (created on first use).
TiledConv& tiled_conv_for(const TiledConvShape& s) {
  TiledConvs& all = thread_tiled_convs();
  auto& convs = all.by_geometry;
  PrimitiveKey key(PrimitiveKind::Conv, s.encoding);
  for (std::int64_t v : {std::int64_t{-1}, s.channels, s.out_channels, s.kernel, s.dilation, std::int64_t{s.has_bias}})
    key.push(v);
  push_epilogue(key, s.epilogue);
  auto it = convs.find(key);
  if (it != convs.end()) return *it->second;
  if (convs.size() >= kMaxTiledConvs) convs.clear();
  throw_if_creation_fault();
  ++all.created;
  return *convs.emplace(key, make_tiled_conv(s)).first->second;
}

// Reorders plain w [M, C, k] into the blocked copy, unless it already holds this constant.
void load_weights(TiledConv& t, const TiledConvShape& s, const Tensor& w, bool weights_are_constant) {
  if (weights_are_constant && t.weights_source.defined() && t.weights_source.shares_storage_with(w)) return;
  const std::int64_t dims[3] = {s.out_channels, s.channels, s.kernel};
  const void* rounded = encode_operand(w.data<float>(), w.numel(), s.encoding, OperandSlot::Weights);
  dnnl::memory plain(operand_desc(row_major_desc(dims), s.encoding), cpu_engine(), const_cast<void*>(rounded));
  dnnl::reorder(plain, t.weights).execute(thread_stream(), plain, t.weights);
  thread_stream().wait();
  // Only a Canary-owned constant can be pinned: its address then cannot be reused by another tensor.
  t.weights_source = weights_are_constant && w.owns_storage() ? w : Tensor();
}

// The f32 encoding: values as they are, gathered by block transposes.
struct KeepF32 {
  float operator()(float v) const { return v; }
};

// Copies count values of a channels-last input, encoded, into a tile.
template <typename Element, typename Encode>
void copy_rows(const float* from, std::int64_t count, Element* to, Encode encode) {
  if constexpr (std::is_same_v<Element, float> && std::is_same_v<Encode, KeepF32>) {
    std::memcpy(to, from, static_cast<std::size_t>(count) * sizeof(float));
  } else {
    for (std::int64_t i = 0; i < count; ++i) to[i] = encode(from[i]);
  }
}

// Copies tiles [first, first + count) of the padded input, channels-last, into
// src: zeros where a tile reaches into the padding, encode(x) elsewhere.
template <typename Element, typename Encode>
void gather_tiles(const TiledConvShape& s, const float* x, std::int64_t tiles_per_seq, std::int64_t first,
                  std::int64_t count, std::int64_t tile_in, Element* src, Encode encode) {
  const std::size_t row_bytes = static_cast<std::size_t>(s.channels) * sizeof(Element);
  for (std::int64_t g = 0; g < count; ++g) {
    const std::int64_t n = (first + g) / tiles_per_seq, tile = (first + g) % tiles_per_seq;
    const std::int64_t start = tile * kTileOut - s.pad_begin;  // x position of the tile's first input
    // Tile positions [lo, hi) read x; the rest are padding.
    const std::int64_t lo = std::clamp<std::int64_t>(-start, 0, tile_in);
    const std::int64_t hi = std::clamp<std::int64_t>(s.width - start, lo, tile_in);
    Element* out = src + g * tile_in * s.channels;
    std::memset(out, 0, static_cast<std::size_t>(lo) * row_bytes);
    std::memset(out + hi * s.channels, 0, static_cast<std::size_t>(tile_in - hi) * row_bytes);
    if (s.channels_last) {
      copy_rows(x + (n * s.width + start + lo) * s.channels, (hi - lo) * s.channels, out + lo * s.channels, encode);
      continue;
    }
    const float* column = x + n * s.channels * s.width + start;
    if constexpr (std::is_same_v<Element, float> && std::is_same_v<Encode, KeepF32>) {
      transpose_block(column + lo, s.width, out + lo * s.channels, s.channels, s.channels, hi - lo);
    } else {
      for (std::int64_t p = lo; p < hi; ++p)
        for (std::int64_t c = 0; c < s.channels; ++c) out[p * s.channels + c] = encode(column[c * s.width + p]);
    }
  }
}

// Gathers tiles into the primitive's source buffer in the shape's encoding.
void gather_encoded_tiles(const TiledConvShape& s, const float* x, std::int64_t tiles_per_seq, std::int64_t first,
                          std::int64_t count, std::int64_t tile_in, void* src) {
  switch (s.encoding) {
    case OperandEncoding::F32:
      gather_tiles(s, x, tiles_per_seq, first, count, tile_in, static_cast<float*>(src), KeepF32());
      return;
    case OperandEncoding::Bf16Values:
      gather_tiles(s, x, tiles_per_seq, first, count, tile_in, static_cast<float*>(src),
                   [](float v) { return bf16_value(v); });
      return;
    case OperandEncoding::Bf16:
      gather_tiles(s, x, tiles_per_seq, first, count, tile_in, static_cast<std::uint16_t*>(src),
                   [](float v) { return bf16_bits(v); });
      return;
  }
}

// Copies the valid outputs of tiles [first, first + count) from dst into y
// [N, M, out] (channels-last: [N, out, M]).
void scatter_tiles(const TiledConvShape& s, const float* dst, std::int64_t tiles_per_seq, std::int64_t first,
                   std::int64_t count, float* y) {
  for (std::int64_t g = 0; g < count; ++g) {
    const std::int64_t n = (first + g) / tiles_per_seq, tile = (first + g) % tiles_per_seq;
    const std::int64_t begin = tile * kTileOut, valid = std::min(kTileOut, s.out - begin);
    const float* in = dst + g * kTileOut * s.out_channels;
    if (s.channels_last)
      std::memcpy(y + (n * s.out + begin) * s.out_channels, in,
                  static_cast<std::size_t>(valid * s.out_channels) * sizeof(float));
    else
      transpose_block(in, s.out_channels, y + n * s.out_channels * s.out + begin, s.out, valid, s.out_channels);
  }
}

// Where tiles [first, first + count) can be written in place: channels-last
// outputs of full tiles lie back to back in y, across sequence ends too
// (a sequence whose last tile is full ends where the next one starts), so
// the primitive writes them there and nothing is scattered. Null otherwise.
float* output_in_place(const TiledConvShape& s, std::int64_t tiles_per_seq, std::int64_t first, std::int64_t count,
                       float* y) {
  if (!s.channels_last) return nullptr;
  if (s.out % kTileOut != 0)
    for (std::int64_t g = first; g < first + count; ++g)
      if (g % tiles_per_seq == tiles_per_seq - 1) return nullptr;  // a partial last tile
  const std::int64_t n = first / tiles_per_seq, tile = first % tiles_per_seq;
  return y + (n * s.out + tile * kTileOut) * s.out_channels;
}

// Runs the primitive's tile count of tiles from `first` through it.
void run_tiles(TiledConv& t, TilePrimitive& p, const TiledConvShape& s, const float* x, const Tensor* b,
               std::int64_t tiles_per_seq, std::int64_t first, float* y) {
  gather_encoded_tiles(s, x, tiles_per_seq, first, p.tiles, t.tile_in, p.src.get_data_handle());
  float* in_place = output_in_place(s, tiles_per_seq, first, p.tiles, y);
  if (in_place) p.dst_in_y.set_data_handle(in_place);
  // The C API takes the arguments as an array: no map is built per execution.
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, p.src.get()}, {DNNL_ARG_WEIGHTS, t.weights.get()},
                             {DNNL_ARG_DST, in_place ? p.dst_in_y.get() : p.dst.get()}, {DNNL_ARG_BIAS, nullptr}};
  int num_args = 3;
  if (b) {
    t.bias.set_data_handle(const_cast<void*>(b->raw()));
    args[num_args++].memory = t.bias.get();
  }
  dnnl::error::wrap_c_api(dnnl_primitive_execute(p.conv.get(), thread_stream().get(), num_args, args),
                          "tiled convolution");
  thread_stream().wait();
  if (!in_place) scatter_tiles(s, static_cast<const float*>(p.dst.get_data_handle()), tiles_per_seq, first, p.tiles, y);
}

// Runs tiles [begin, end) through the thread's group and single-tile primitives.
void run_tile_range(TiledConv& t, const TiledConvShape& s, const float* x, const Tensor* b, std::int64_t tiles_per_seq,
                    std::int64_t begin, std::int64_t end, float* y) {
  for (std::int64_t first = begin; first < end;) {
    TilePrimitive& p = end - first >= kGroupTiles ? t.group : t.single;
    run_tiles(t, p, s, x, b, tiles_per_seq, first, y);
    first += p.tiles;
  }
}

// Multiply-adds of all tiles, counted twice.
double tiled_flops(const TiledConvShape& s, std::int64_t tiles) {
  return 2.0 * static_cast<double>(tiles * kTileOut) * static_cast<double>(s.out_channels * s.channels * s.kernel);
}

// Threads worth splitting `tiles` tiles over: whole groups per thread, and
// enough work that a second thread pays for waking.
int tile_threads(const TiledConvShape& s, std::int64_t tiles) {
  const int available = current_threads();
  if (available <= 1 || omp_in_parallel() || tiled_flops(s, tiles) < kParallelMinFlops) return 1;
  return static_cast<int>(std::min<std::int64_t>(available, tiles / kGroupTiles));
}

// Splits the tiles over `threads` OpenMP threads, each running its share
// (whole groups, the remainder on the last) through its own single-threaded
// primitives and buffers: oneDNN splitting one group of 8 small tiles over
// two threads costs more than it saves. False when a thread's convolution
// has no fast kernel or oneDNN failed (the caller then runs the plain path,
// which rewrites all of y).
bool run_tiles_parallel(const TiledConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                        bool weights_are_constant, std::int64_t tiles_per_seq, std::int64_t total, int threads) {
  const std::int64_t groups = total / kGroupTiles;
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
#pragma omp parallel num_threads(threads)
  {
    const int i = omp_get_thread_num(), n = omp_get_num_threads();
    const std::int64_t begin = groups * i / n * kGroupTiles;
    const std::int64_t end = i + 1 == n ? total : groups * (i + 1) / n * kGroupTiles;
    try {
      const OnednnThreadScope one_thread(1);
      TiledConv& t = tiled_conv_for(s);
      if (!t.usable) {
        failed = true;
      } else {
        load_weights(t, s, w, weights_are_constant);
        run_tile_range(t, s, x.data<float>(), b, tiles_per_seq, begin, end, y.data<float>());
      }
    } catch (const dnnl::error&) {
      failed = true;
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  }
  if (error) std::rethrow_exception(error);
  return !failed;
}

}  // namespace

bool tiled_conv1d(const TiledConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                  bool weights_are_constant) {
  const std::int64_t tiles_per_seq = (s.out + kTileOut - 1) / kTileOut;
  const std::int64_t total = s.batch * tiles_per_seq;
  const std::int64_t out_dims[3] = {s.batch, s.channels_last ? s.out : s.out_channels,
                                    s.channels_last ? s.out_channels : s.out};
  const int threads = tile_threads(s, total);
  if (threads > 1) {
    y.reset(DType::F32, out_dims);
    if (!run_tiles_parallel(s, x, w, b, y, weights_are_constant, tiles_per_seq, total, threads)) return false;
    ++thread_tiled_convs().calls;
    return true;
  }
  TiledConv& t = tiled_conv_for(s);
  if (!t.usable) return false;
  ++thread_tiled_convs().calls;
  load_weights(t, s, w, weights_are_constant);
  y.reset(DType::F32, out_dims);
  run_tile_range(t, s, x.data<float>(), b, tiles_per_seq, 0, total, y.data<float>());
  return true;
}

void add_tiled_conv_stats(OnednnCacheStats& stats) {
  stats.tiled_conv_calls += thread_tiled_convs().calls;
  stats.tiled_conv_geometries += thread_tiled_convs().created;
}

void clear_tiled_convs() { thread_tiled_convs() = TiledConvs(); }

}  // namespace canary::kernels::onednn
