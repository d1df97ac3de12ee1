// ONNX import: turns an ONNX model (.onnx, protobuf) into Canary's graph IR.
// Default-domain opsets 13 to 17 are accepted, and 7 to 12 upgraded to 13 on
// load (libonnx's version converter); subgraphs (Loop, If, Scan)
// become graph attributes with captures; the result has been through
// infer_shapes. Every problem with the file is a canary::Error(Model) whose
// message starts with the source name and names the node, tensor or input.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.h"
#include "graph/import_limits.h"

namespace canary::graph {

// Imports a serialized ModelProto. `source_name` prefixes error messages.
// A model over `limits` is Error(Resource) naming the graph and the limit.
std::shared_ptr<Graph> import_onnx(std::string_view bytes, std::string_view source_name = "<onnx>",
                                   const ImportLimits& limits = {});

// Reads a .onnx file and imports it; an unreadable file is Error(Model)
// naming the path.
std::shared_ptr<Graph> import_onnx_file(const std::string& path, const ImportLimits& limits = {});

}  // namespace canary::graph
