// The text format of graphs (".cnr", "canary graph text"): printing and parsing
// whole models, including symbol constraints and subgraphs, losslessly.
// The syntax is documented in docs/text-format.md.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.h"
#include "graph/import_limits.h"

namespace canary::graph {

// Prints a whole model: the version line, the symbols block and the main graph
// with its subgraphs. Intermediate values carry their inferred types.
std::string print_graph(const Graph& g);

// Parses a model printed by print_graph (or written by hand), then runs
// infer_shapes. Malformed text throws canary::Error(Model) whose message starts
// with "source_name:line:col: "; a model over `limits` is Error(Resource) with
// the same prefix.
std::shared_ptr<Graph> parse_graph(std::string_view text, std::string_view source_name = "<text>",
                                   const ImportLimits& limits = {});

// Parses like parse_graph but runs neither shape inference nor op validation:
// node outputs keep the written types (unwritten ones stay f32[]). For tools and
// tests that handle graphs the op registry would not accept yet.
std::shared_ptr<Graph> parse_graph_uninferred(std::string_view text, std::string_view source_name = "<text>",
                                              const ImportLimits& limits = {});

// Reads and parses a file; throws canary::Error(Model) if it cannot be read.
std::shared_ptr<Graph> load_graph_file(const std::string& path, const ImportLimits& limits = {});

}  // namespace canary::graph
