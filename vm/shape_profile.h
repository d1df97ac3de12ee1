// ShapeProfile: what the interpreter observed — per-instruction output shape
// histograms, input shapes per call and hot counters at anchors.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "canary/tensor.h"
#include "vm/bytecode.h"

namespace canary::vm {

class Program;

// A few distinct shapes with their counts, then an overflow count. Recording
// compares with the last recorded shape first, so a steady stream costs one
// comparison and never allocates.
class ShapeHistogram {
 public:
  static constexpr std::size_t kMaxShapes = 4;
  struct Entry {
    Shape shape;
    std::uint64_t count = 0;
  };

  void record(std::span<const std::int64_t> shape) {
    if (size_ != 0 && same_shape(entries_[last_].shape, shape)) {
      ++entries_[last_].count;
      return;
    }
    record_slow(shape);
  }
  std::span<const Entry> entries() const { return {entries_.data(), size_}; }
  // Observations whose shape did not fit in the table.
  std::uint64_t overflow() const { return overflow_; }
  std::uint64_t total() const;
  // Count of one shape (0 when unseen or in the overflow).
  std::uint64_t count_of(std::span<const std::int64_t> shape) const;
  void clear();

 private:
  // Element-wise comparison; cheaper than memcmp for the short shapes seen here.
  static bool same_shape(const Shape& a, std::span<const std::int64_t> b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < b.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  void record_slow(std::span<const std::int64_t> shape);

  std::array<Entry, kMaxShapes> entries_{};
  std::size_t size_ = 0;
  std::size_t last_ = 0;
  std::uint64_t overflow_ = 0;
};

class ShapeProfile {
 public:
  ShapeProfile() = default;
  explicit ShapeProfile(const Program& program);

  // Recording (called by the interpreter).
  void record_output(std::uint32_t slot, std::span<const std::int64_t> shape) { outputs_[slot].record(shape); }
  void record_input(std::size_t input, std::span<const std::int64_t> shape) { inputs_[input].record(shape); }
  // Counts one visit; returns the new count.
  std::uint64_t visit_anchor(AnchorId anchor) { return ++anchors_[anchor.index]; }

  // Reading.
  // Histogram of output `output` of the kernel instruction at pc; throws
  // std::out_of_range for an instruction that records nothing.
  const ShapeHistogram& output_shapes(Pc pc, int output = 0) const;
  const ShapeHistogram& input_shapes(std::size_t input) const { return inputs_.at(input); }
  std::uint64_t anchor_count(AnchorId anchor) const { return anchors_.at(anchor.index); }
  std::uint64_t calls() const { return anchors_.empty() ? 0 : anchors_[0]; }
  // Distinct output shapes tracked, summed over every kernel output.
  std::uint64_t distinct_shape_count() const;
  void clear();

 private:
  std::vector<std::uint32_t> slot_of_pc_;   // UINT32_MAX: no histogram
  std::vector<std::uint16_t> outputs_of_pc_;
  std::vector<ShapeHistogram> outputs_;
  std::vector<ShapeHistogram> inputs_;
  std::vector<std::uint64_t> anchors_;
};

}  // namespace canary::vm
