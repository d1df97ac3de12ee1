// The text form of a cost decision: a header with the choice and its reason,
// the weights and limits, and an aligned table of candidates by terms.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "canary/cost.h"

namespace canary {

namespace {

// A grid of cells; right-aligned columns hold numbers.
struct TextGrid {
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right_aligned;
};

// Compact number (%g with `digits` significant digits).
std::string format_number(double v, int digits = 3) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  return text;
}

// A term cell: value and unit, "-" when not measured, energy marked when modelled.
std::string format_term_cell(const CostTerm& t) {
  if (t.source == "not measured") return "-";
  std::string cell = format_number(t.value);
  if (!t.unit.empty()) cell += " " + t.unit;
  if (t.name == "energy" && t.source == "modelled") cell += " (modelled)";
  return cell;
}

// The term names of every candidate, in first-seen order.
std::vector<std::string> collect_term_names(const std::vector<CostCandidate>& candidates) {
  std::vector<std::string> names;
  for (const CostCandidate& c : candidates)
    for (const CostTerm& t : c.terms)
      if (std::find(names.begin(), names.end(), t.name) == names.end()) names.push_back(t.name);
  return names;
}

// The candidate's failed gates with their details, "-" when none failed.
std::string format_failed_gates(const CostCandidate& c) {
  std::string text;
  for (const CostGate& g : c.gates) {
    if (g.passed) continue;
    if (!text.empty()) text += "; ";
    text += g.name + " (" + g.detail + ")";
  }
  return text.empty() ? "-" : text;
}

// One candidate's row: marker, name, pass/FAIL, cost, one cell per term, failed gates.
std::vector<std::string> candidate_row(const CostCandidate& c, bool chosen, const std::vector<std::string>& names) {
  std::vector<std::string> row{chosen ? "*" : "", c.name, c.passed ? "pass" : "FAIL", format_number(c.cost)};
  for (const std::string& name : names) {
    auto it = std::find_if(c.terms.begin(), c.terms.end(), [&](const CostTerm& t) { return t.name == name; });
    row.push_back(it == c.terms.end() ? "" : format_term_cell(*it));
  }
  row.push_back(format_failed_gates(c));
  return row;
}

// The candidates as a grid with a header row.
TextGrid build_grid(const CostDecision& d) {
  const std::vector<std::string> names = collect_term_names(d.candidates);
  TextGrid grid;
  grid.rows.push_back({"", "candidate", "gates", "cost"});
  grid.rows.front().insert(grid.rows.front().end(), names.begin(), names.end());
  grid.rows.front().push_back("failed gates");
  grid.right_aligned.assign(grid.rows.front().size(), true);
  grid.right_aligned[0] = grid.right_aligned[1] = grid.right_aligned[2] = false;
  grid.right_aligned.back() = false;
  for (std::size_t i = 0; i < d.candidates.size(); ++i)
    grid.rows.push_back(candidate_row(d.candidates[i], i == d.chosen, names));
  return grid;
}

// The grid as lines, columns padded to their widest cell and separated by two spaces.
std::string render_grid(const TextGrid& grid) {
  std::vector<std::size_t> widths(grid.right_aligned.size(), 0);
  for (const auto& row : grid.rows)
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  std::string out;
  for (const auto& row : grid.rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - row[c].size(), ' ');
      if (c > 0) line += "  ";
      line += grid.right_aligned[c] ? pad + row[c] : row[c] + pad;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

// "weights: latency 1, tail 0.25, ..."
std::string format_weights(const CostWeights& w) {
  return "weights: latency " + format_number(w.latency) + ", tail " + format_number(w.tail) + ", error " +
         format_number(w.error) + ", flips " + format_number(w.flips) + ", variance " + format_number(w.variance) +
         ", deopt " + format_number(w.deopt) + ", energy " + format_number(w.energy) + ", memory " +
         format_number(w.memory) + ", transfer " + format_number(w.transfer) + "\n";
}

// "limits: max relative error 0.0001, ..."
std::string format_limits(const CostLimits& l) {
  return "limits: max relative error " + format_number(l.max_relative_error) + ", relative floor " +
         format_number(l.relative_floor) + ", reject far flips " + (l.reject_far_flips ? "yes" : "no") +
         ", max variance ratio " + format_number(l.max_variance_ratio) + "\n";
}

// "profile balanced, anchor 'a', trace 3, call 7, chosen 'x': reason"
std::string format_header(const CostDecision& d) {
  const std::string chosen = d.chosen < d.candidates.size() ? d.candidates[d.chosen].name : "-";
  return "profile " + d.profile + ", anchor '" + d.anchor + "', trace " + std::to_string(d.trace) + ", call " +
         std::to_string(d.call) + ", chosen '" + chosen + "': " + d.reason + "\n";
}

}  // namespace

// The decision as text: header, weights, limits, then the candidate table.
std::string CostDecision::to_table() const {
  return format_header(*this) + format_weights(weights) + format_limits(limits) + render_grid(build_grid(*this));
}

}  // namespace canary
