// The text format's lossless claim as a fuzz check: a graph that was
// accepted (imported from ONNX or parsed from text) prints, the printed text
// parses back, and printing the reparsed graph gives the same text.
#pragma once

#include <string>

#include "graph/graph.h"
#include "tests/fuzz/fuzz_result.h"

namespace canary::fuzz {

// print -> parse -> print of an accepted graph: Accepted when the two printed
// texts are equal; a Finding when printing fails, the text does not parse
// back, or the second print differs.
FuzzResult check_text_round_trip(const graph::Graph& g);

// Accepted when `second` equals `first`, else a Finding naming the first line that differs.
FuzzResult compare_printed(const std::string& first, const std::string& second);

// Parses printed text and prints the result into `reprinted`; a Finding,
// quoting the text, when it does not parse (printed text always must).
FuzzResult reparse_printed(const std::string& printed, std::string& reprinted);

}  // namespace canary::fuzz
