// The ONNX import pipeline: parse the bytes, check the opsets, import the
// graphs, infer shapes. Also the one place that maps ONNX op names to ops.
#include "graph/onnx_import.h"

#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>

#include "graph/onnx_import_internal.h"
#include "graph/op_registry.h"

namespace canary::graph {
namespace onnx_import {
namespace {

// Protobuf's nesting limit. Each subgraph level costs three messages (graph,
// node, attribute) plus a few more for value types, so this admits every
// depth up to the ceiling: any configured depth is then reported by name, as
// an Error(Resource) from the importer, while parsing's own recursion stays
// bounded (a few hundred frames).
constexpr int kProtobufRecursionLimit = 3 * kMaxImportDepthCeiling + 64;

// The first version of an op in the default domain, where it is above 13.
std::int64_t introduced_in(OpKind op) {
  switch (op) {
    case OpKind::Trilu:
    case OpKind::HardSwish:
      return 14;
    case OpKind::LayerNormalization:
      return 17;
    case OpKind::Gelu:
      return 20;
    default:
      return 1;
  }
}

// Parses a ModelProto; Error(Model) when the bytes are not one.
onnx::ModelProto parse_model(std::string_view bytes) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) fail("file is larger than 2 GiB, which protobuf cannot parse");
  google::protobuf::io::CodedInputStream input(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  input.SetRecursionLimit(kProtobufRecursionLimit);
  onnx::ModelProto model;
  if (!model.ParseFromCodedStream(&input) || !input.ConsumedEntireMessage()) {
    fail("not a valid ONNX model (protobuf parsing failed: truncated or corrupt file)");
  }
  if (!model.has_graph()) fail("the model has no graph");
  return model;
}

// The default-domain opset, which must be within the supported range
// (older ones from kMinUpgradableOpset are upgraded on load).
std::int64_t default_opset(const onnx::ModelProto& model) {
  std::optional<std::int64_t> version;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (!id.domain().empty() && id.domain() != "ai.onnx") continue;
    if (version) fail("the model imports the default domain twice (opsets " + std::to_string(*version) + " and " +
                      std::to_string(id.version()) + ")");
    if (id.version() < kMinUpgradableOpset || id.version() > kMaxOpset) {
      fail("unsupported opset " + std::to_string(id.version()) + " for domain '' (supported " +
           std::to_string(kMinUpgradableOpset) + " to " + std::to_string(kMaxOpset) + "; " +
           std::to_string(kMinUpgradableOpset) + " to " + std::to_string(kMinOpset - 1) + " upgraded to " +
           std::to_string(kMinOpset) + " on load)");
    }
    version = id.version();
  }
  if (!version)
    fail("the model imports no opset for domain '' (supported " + std::to_string(kMinUpgradableOpset) + " to " +
         std::to_string(kMaxOpset) + ")");
  return *version;
}

}  // namespace

// Error(Model) with the text.
void fail(const std::string& text) { throw Error(ErrorKind::Model, text); }

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// "node 'NAME' (OpType)".
std::string describe_node(const onnx::NodeProto& node) {
  std::string name = node.name();
  for (int i = 0; name.empty() && i < node.output_size(); ++i) name = node.output(i);
  return "node '" + name + "' (" + node.op_type() + ")";
}

// Constant nodes are imported as graph constants.
bool is_constant_node(const onnx::NodeProto& node) {
  return (node.domain().empty() || node.domain() == "ai.onnx") && node.op_type() == "Constant";
}

// Maps the op type to an OpKind, checking domain and opset.
OpLookup lookup_op(const onnx::NodeProto& node, std::int64_t opset) {
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return {std::nullopt, "domain '" + node.domain() + "' is not supported (only the default ONNX domain is)"};
  std::optional<OpKind> op = find_op(node.op_type());
  if (!op) return {std::nullopt, "unknown op"};
  if (introduced_in(*op) > opset) {
    return {std::nullopt, "unknown op in opset " + std::to_string(opset) + " (it exists from opset " +
                              std::to_string(introduced_in(*op)) + ")"};
  }
  return {op, {}};
}

OpKind op_of_node(const onnx::NodeProto& node, const OpLookup& lookup) {
  if (!lookup.op) fail(describe_node(node) + ": " + lookup.why_not);
  return *lookup.op;
}

}  // namespace onnx_import

// parse -> check opsets -> import graphs -> infer shapes; errors name the source.
std::shared_ptr<Graph> import_onnx(std::string_view bytes, std::string_view source_name, const ImportLimits& limits) {
  using namespace onnx_import;
  try {
    onnx::ModelProto model = parse_model(bytes);
    ImportContext ctx;
    ctx.limits = limits;
    ctx.opset = default_opset(model);
    if (ctx.opset < kMinOpset) {
      model = upgrade_opset(model, ctx.opset, ctx.limits);
      ctx.opset = kMinOpset;
    }
    std::shared_ptr<Graph> graph = import_main_graph(model.graph(), ctx);
    infer_shapes(*graph);
    return graph;
  } catch (const Error& e) {
    throw Error(e.kind(), std::string(source_name) + ": " + e.detail());
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::Resource, std::string(source_name) + ": out of memory while importing the model");
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Model, std::string(source_name) + ": cannot import the model (" + e.what() + ")");
  }
}

// Checks the file's size against protobuf's 2 GiB limit, reads it once into a
// buffer of that size, then imports it.
std::shared_ptr<Graph> import_onnx_file(const std::string& path, const ImportLimits& limits) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(ErrorKind::Model, "cannot read ONNX file '" + path + "': " + ec.message());
  if (size > static_cast<std::uintmax_t>(INT_MAX)) {
    throw Error(ErrorKind::Model, "ONNX file '" + path + "' is " + std::to_string(size) +
                                      " bytes, larger than the 2 GiB (" + std::to_string(INT_MAX) +
                                      " bytes) protobuf can parse");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Model, "cannot read ONNX file '" + path + "'");
  std::string contents;
  try {
    contents.resize(static_cast<std::size_t>(size));
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::Resource, "cannot allocate " + std::to_string(size) + " bytes to read ONNX file '" +
                                         path + "'");
  }
  in.read(contents.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size)) {
    throw Error(ErrorKind::Model, "cannot read ONNX file '" + path + "': read " + std::to_string(in.gcount()) +
                                      " of " + std::to_string(size) + " bytes");
  }
  return import_onnx(contents, path, limits);
}

}  // namespace canary::graph
