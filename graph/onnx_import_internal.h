// Internals of the ONNX importer shared by its translation units: the
// model-wide import state and the stages (tensors, attributes, node order,
// graphs). Only the importer's .cpp files include this (it pulls in ONNX).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "canary/error.h"
#include "graph/graph.h"
#include "graph/import_limits.h"

namespace canary::graph::onnx_import {

// The default-domain opsets the importer accepts.
inline constexpr std::int64_t kMinOpset = 13;
inline constexpr std::int64_t kMaxOpset = 17;
// Older default-domain opsets, upgraded to kMinOpset on load.
inline constexpr std::int64_t kMinUpgradableOpset = 7;

// State shared by every graph of one model.
struct ImportContext {
  std::int64_t opset = kMinOpset;
  std::shared_ptr<SymbolTable> symbols = std::make_shared<SymbolTable>();
  std::map<std::string, std::string, std::less<>> dim_params;  // ONNX dim_param -> symbol name
  ImportLimits limits;
  std::size_t nodes = 0;  // nodes imported so far, in every graph
};

// Throws Error(Model) with the text (the pipeline prefixes the source name).
[[noreturn]] void fail(const std::string& text);
// "node 'NAME' (OpType)"; an unnamed node is named by its first output.
std::string describe_node(const onnx::NodeProto& node);
// The first line of a library's message (libonnx's run over several).
std::string first_line(const std::string& text);

// --- onnx_import.cpp: the one place that compares ONNX op names ----------
// True for an ONNX Constant node (imported as a graph constant, not an op).
bool is_constant_node(const onnx::NodeProto& node);
// The op of a node in the model's opset, or why it has none (unknown op,
// other domain, op not in this opset).
struct OpLookup {
  std::optional<OpKind> op;
  std::string why_not;
};
OpLookup lookup_op(const onnx::NodeProto& node, std::int64_t opset);
// The op found, or Error(Model) naming node, op type and the reason.
OpKind op_of_node(const onnx::NodeProto& node, const OpLookup& lookup);

// --- onnx_tensors.cpp -----------------------------------------------------
// The DType of an ONNX element type; Error(Model) naming `what` and the type.
DType dtype_from_onnx(std::int64_t elem_type, const std::string& what);
// The ONNX element type of a DType.
std::int64_t onnx_elem_type(DType dtype);
// Copies a TensorProto (raw_data or typed fields) into a Tensor after
// checking dims, element counts and data location; `what` names it in errors.
Tensor tensor_from_onnx(const onnx::TensorProto& proto, const std::string& what);

// --- onnx_attributes.cpp --------------------------------------------------
// Imports one graph attribute (the body of a Loop, a branch of an If).
using SubgraphImport = std::function<std::shared_ptr<Graph>(const std::string& attr_name, const onnx::GraphProto&)>;
// Converts a node's attributes to IR attributes of `op`, checking names and
// types against the op's schema and applying the ONNX-to-IR conversions.
Attributes attributes_from_onnx(const onnx::NodeProto& node, OpKind op, const SubgraphImport& import_subgraph);
// The tensor a Constant node defines.
Tensor constant_node_value(const onnx::NodeProto& node);
// An int attribute of a node, or `fallback` when absent.
std::int64_t int_attribute(const onnx::NodeProto& node, std::string_view name, std::int64_t fallback);
// An ints attribute of a node, or empty when absent.
std::vector<std::int64_t> ints_attribute(const onnx::NodeProto& node, std::string_view name);

// --- onnx_node_order.cpp --------------------------------------------------
// The names a graph reads but does not define (its inputs from enclosing
// scopes), including those of nested subgraphs.
std::set<std::string> free_names(const onnx::GraphProto& graph, int depth);
// The node indices of a graph in a topological order (Kahn, stable): a
// node's inputs and its subgraphs' free names come first. Duplicate output
// names and cycles are Error(Model) naming a node.
std::vector<int> topological_order(const onnx::GraphProto& graph, int depth);

// --- onnx_functions.cpp ---------------------------------------------------
// The body of an op that ONNX defines as a function of other ops, as libonnx
// gives it at `opset`, with the node's inputs, outputs and attributes (or the
// schema's defaults) bound and every inner value and node named with
// `prefix`; nullopt when the op has no function body. input_types: the
// node's input types where known (the loss ops' bodies depend on them).
std::optional<std::vector<onnx::NodeProto>> expand_function(const onnx::NodeProto& node, std::int64_t opset,
                                                            const std::vector<onnx::TypeProto>& input_types,
                                                            const std::string& prefix);

// --- onnx_elem_types.cpp -------------------------------------------------
// The element types ONNX's type inference gives the node's outputs at
// `opset` from its inputs' (TensorProto::UNDEFINED where unknown: an input
// of unknown type, a node its schema rejects, another domain, a subgraph's
// outputs). input_types: one per node input; only elem_type is read.
std::vector<std::int32_t> infer_elem_types(const onnx::NodeProto& node, std::int64_t opset,
                                           const std::vector<onnx::TypeProto>& input_types);
// True when a node of the graph or of its subgraphs has an op Canary has no
// kernel for (one that may import as a function body).
bool has_op_without_kernel(const onnx::GraphProto& graph, std::int64_t opset);

// --- onnx_opset_upgrade.cpp -----------------------------------------------
// The model rewritten for opset kMinOpset by libonnx's version converter;
// Error(Model) naming the reason when it is malformed or an op has no
// adapter, Error(Resource) past the import limits. `from`: the model's
// default-domain opset.
onnx::ModelProto upgrade_opset(const onnx::ModelProto& model, std::int64_t from, const ImportLimits& limits);

// --- onnx_graph_import.cpp ------------------------------------------------
// Imports the main graph (and, recursively, its subgraphs) without shape
// inference.
std::shared_ptr<Graph> import_main_graph(const onnx::GraphProto& graph, ImportContext& ctx);

}  // namespace canary::graph::onnx_import
