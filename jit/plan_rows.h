// Row kernels in plans: which trace ops (reductions over the last axis,
// Softmax and LayerNormalization over the last axis) run as fused row
// kernels, and which elementwise group before them becomes their prologue.
#pragma once

#include <optional>
#include <unordered_set>
#include <utility>

#include "jit/plan.h"
#include "jit/plan_fusion.h"

namespace canary::jit {

// True when trace op `i` is a row op a row kernel can run (f32, last axis,
// no extra LayerNorm outputs, dense scale/bias).
bool is_row_candidate(const vm::Program& program, const Trace& trace, std::size_t i);

// Plans trace op `row` as a row kernel. `prologue` is the group of ops just
// before it, absorbed when the row op's input is the only value of the group
// needed afterwards (`live_after_group`, `live_after_row`); otherwise the
// kernel reads the row op's input directly. False when the layout does not
// collapse with the last axis kept apart.
bool build_row(const vm::Program& program, const Trace& trace, std::size_t row,
               std::optional<std::pair<std::size_t, std::size_t>> prologue, const ScalarConstants& constants,
               const std::unordered_set<std::uint32_t>& live_after_group,
               const std::unordered_set<std::uint32_t>& live_after_row, const PlanOptions& options, RowStep& out,
               bool& absorbed);

}  // namespace canary::jit
