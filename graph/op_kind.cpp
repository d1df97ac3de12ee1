// Op names: the OpKind ↔ name mapping generated from op_kinds.def.
#include "graph/op_kind.h"

#include <array>

namespace canary::graph {
namespace {

constexpr std::array<std::string_view, kOpKindCount> kOpNames = {
#define X(kind, name, min_in, max_in, min_out, max_out) name,
#include "graph/op_kinds.def"
#undef X
};

}  // namespace

// The ONNX-style name of an op.
std::string_view op_name(OpKind op) {
  auto i = static_cast<std::size_t>(op);
  return i < kOpNames.size() ? kOpNames[i] : std::string_view("?");
}

// Exact lookup of an op by name.
std::optional<OpKind> find_op(std::string_view name) {
  for (std::size_t i = 0; i < kOpNames.size(); ++i) {
    if (kOpNames[i] == name) return static_cast<OpKind>(i);
  }
  return std::nullopt;
}

bool is_unary_elementwise(OpKind op) {
  switch (op) {
#define CANARY_UNARY_OP(o, ...) case OpKind::o:
#include "runtime/core/unary_ops.def"
#undef CANARY_UNARY_OP
      return true;
    default: return false;
  }
}

}  // namespace canary::graph
