// print -> parse -> print: the fixed-point check shared by the onnx_import
// and text_format targets.
#include "tests/fuzz/text_round_trip.h"

#include <cstddef>
#include <memory>

#include "graph/text_format.h"

namespace canary::fuzz {
namespace {

// Line `index` (0-based) of text without its newline, or "" past the end.
std::string line_at(const std::string& text, std::size_t index) {
  std::size_t begin = 0;
  for (std::size_t i = 0; i < index && begin != std::string::npos; ++i) {
    begin = text.find('\n', begin);
    if (begin != std::string::npos) ++begin;
  }
  if (begin == std::string::npos || begin >= text.size()) return "";
  return text.substr(begin, text.find('\n', begin) - begin);
}

// The 0-based line of the first character where a and b differ.
std::size_t first_differing_line(const std::string& a, const std::string& b) {
  std::size_t line = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size() && a[i] == b[i]; ++i)
    if (a[i] == '\n') ++line;
  return line;
}

}  // namespace

FuzzResult compare_printed(const std::string& first, const std::string& second) {
  if (first == second) return FuzzResult::accepted();
  std::size_t line = first_differing_line(first, second);
  return FuzzResult::finding("printing the reparsed graph gives different text at line " + std::to_string(line + 1) +
                             ":\n  first print:  " + line_at(first, line) + "\n  second print: " +
                             line_at(second, line) + "\nfirst print:\n" + clip_text(first));
}

FuzzResult reparse_printed(const std::string& printed, std::string& reprinted) {
  try {
    std::shared_ptr<graph::Graph> again = graph::parse_graph(printed, "printed.cnr");
    reprinted = graph::print_graph(*again);
    return FuzzResult::accepted();
  } catch (const Error& e) {
    return FuzzResult::finding(std::string("the printed graph does not parse back: ") + e.what() +
                               "\nprinted text:\n" + clip_text(printed));
  }
}

FuzzResult check_text_round_trip(const graph::Graph& g) {
  std::string first;
  try {
    first = graph::print_graph(g);
  } catch (const Error& e) {
    return FuzzResult::finding(std::string("an accepted graph does not print: ") + e.what());
  }
  std::string second;
  FuzzResult reparsed = reparse_printed(first, second);
  if (reparsed.is_finding()) return reparsed;
  return compare_printed(first, second);
}

}  // namespace canary::fuzz
