// Shape histograms and hot counters recorded while interpreting.
#include "vm/shape_profile.h"

#include <algorithm>
#include <stdexcept>

#include "vm/program.h"

namespace canary::vm {

// Counts one observation of a shape that differs from the last one seen.
void ShapeHistogram::record_slow(std::span<const std::int64_t> shape) {
  for (std::size_t i = 0; i < size_; ++i) {
    if (same_shape(entries_[i].shape, shape)) {
      ++entries_[i].count;
      last_ = i;
      return;
    }
  }
  if (size_ == kMaxShapes) {
    ++overflow_;
    return;
  }
  entries_[size_].shape.assign(shape.begin(), shape.end());
  entries_[size_].count = 1;
  last_ = size_++;
}

// Every observation, overflow included.
std::uint64_t ShapeHistogram::total() const {
  std::uint64_t n = overflow_;
  for (std::size_t i = 0; i < size_; ++i) n += entries_[i].count;
  return n;
}

// Count recorded for one exact shape.
std::uint64_t ShapeHistogram::count_of(std::span<const std::int64_t> shape) const {
  for (std::size_t i = 0; i < size_; ++i) {
    const Shape& s = entries_[i].shape;
    if (std::equal(s.begin(), s.end(), shape.begin(), shape.end())) return entries_[i].count;
  }
  return 0;
}

// Forgets every observation.
void ShapeHistogram::clear() {
  for (auto& e : entries_) e = Entry{};
  size_ = last_ = 0;
  overflow_ = 0;
}

std::uint64_t ShapeProfile::distinct_shape_count() const {
  std::uint64_t n = 0;
  for (const ShapeHistogram& h : outputs_) n += h.entries().size();
  return n;
}

// Sizes the tables for a program: one histogram per kernel output, per input and per anchor.
ShapeProfile::ShapeProfile(const Program& program)
    : slot_of_pc_(program.instruction_count(), UINT32_MAX),
      outputs_of_pc_(program.instruction_count(), 0),
      outputs_(program.profile_slots()),
      inputs_(program.input_names().size()),
      anchors_(program.anchors().size(), 0) {
  const auto code = program.code();
  for (Pc pc = 0; pc < code.size(); ++pc) {
    if (code[pc].op != Opcode::Kernel) continue;
    slot_of_pc_[pc] = code[pc].slot;
    outputs_of_pc_[pc] = code[pc].num_outputs;
  }
}

// The histogram of one kernel output.
const ShapeHistogram& ShapeProfile::output_shapes(Pc pc, int output) const {
  if (pc >= slot_of_pc_.size() || slot_of_pc_[pc] == UINT32_MAX || output < 0 || output >= outputs_of_pc_[pc])
    throw std::out_of_range("ShapeProfile: no output histogram at this pc");
  return outputs_[slot_of_pc_[pc] + static_cast<std::uint32_t>(output)];
}

// Forgets all shapes and counts.
void ShapeProfile::clear() {
  for (auto& h : outputs_) h.clear();
  for (auto& h : inputs_) h.clear();
  std::fill(anchors_.begin(), anchors_.end(), 0);
}

}  // namespace canary::vm
