// The kernel table: OpKind → adapter function plus its parameter struct,
// decoded from the node's attributes once, at compile time.
#pragma once

#include <memory>

#include "canary/dtype.h"
#include "graph/graph.h"
#include "vm/bytecode.h"
#include "vm/compiler.h"

namespace canary::vm {

struct KernelBinding {
  KernelFn fn = nullptr;
  std::unique_ptr<InstrParams> params;
};

// The adapter and parameters for a non-control-flow node; throws
// Error(Model) naming the node for attributes it cannot use.
KernelBinding bind_kernel(const graph::Graph& g, const graph::Node& n, const CompileOptions& opts);

// Binary Max, Min or Add (Sum) adapter for chaining variadic nodes two inputs at a time.
KernelBinding bind_binary_kernel(graph::OpKind op);
// Identity adapter (single-input Max/Min/Concat).
KernelBinding bind_identity_kernel();
// Cast adapter, for converting promoted inputs at entry.
KernelBinding bind_cast_kernel(DType to);

}  // namespace canary::vm
