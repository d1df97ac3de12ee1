// OpKind: the enum generated from op_kinds.def, and name lookup.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace canary::graph {

enum class OpKind : std::uint16_t {
#define X(kind, name, min_in, max_in, min_out, max_out) kind,
#include "graph/op_kinds.def"
#undef X
};

inline constexpr int kOpKindCount = 0
#define X(kind, name, min_in, max_in, min_out, max_out) +1
#include "graph/op_kinds.def"
#undef X
    ;

// The ONNX-style name ("Add").
std::string_view op_name(OpKind op);
// Exact, case-sensitive lookup of an op name; nullopt when unknown.
std::optional<OpKind> find_op(std::string_view name);
// True for the rows of runtime/core/unary_ops.def: y[i] = f(x[i]), shaped like x.
bool is_unary_elementwise(OpKind op);

}  // namespace canary::graph
