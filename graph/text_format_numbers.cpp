// Number spelling of the graph text format: shortest round-trip floats and
// checked parsing of number lexemes.
#include "graph/text_format_numbers.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace canary::graph::text {
namespace {

// Spells nan and infinities; empty for finite values.
template <typename T>
std::string special_text(T v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return {};
}

// Shortest round-trip text of a finite or special value.
template <typename T>
std::string shortest_text(T v) {
  std::string special = special_text(v);
  if (!special.empty()) return special;
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

// Parses a float lexeme (no sign) or inf/nan.
template <typename T>
NumberStatus parse_floating(std::string_view text, T& out) {
  if (text == "inf") {
    out = std::numeric_limits<T>::infinity();
    return NumberStatus::Ok;
  }
  if (text == "nan") {
    out = std::numeric_limits<T>::quiet_NaN();
    return NumberStatus::Ok;
  }
  if (text.empty() || text[0] < '0' || text[0] > '9') return NumberStatus::Malformed;
  auto result = std::from_chars(text.data(), text.data() + text.size(), out);
  if (result.ec == std::errc::result_out_of_range) return NumberStatus::OutOfRange;
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return NumberStatus::Malformed;
  return NumberStatus::Ok;
}

}  // namespace

// Shortest text that parses back to exactly the same float.
std::string format_f32(float v) { return shortest_text(v); }

// Shortest text that parses back to exactly the same double.
std::string format_f64(double v) { return shortest_text(v); }

// Like format_f64 but always recognisable as a float.
std::string format_float_attr(double v) {
  std::string text = format_f64(v);
  if (text.find_first_of(".eEna") == std::string::npos) text += ".0";
  return text;
}

// Parses an unsigned decimal integer lexeme.
NumberStatus parse_magnitude(std::string_view text, std::uint64_t& out) {
  if (text.empty() || looks_like_float(text)) return NumberStatus::Malformed;
  auto result = std::from_chars(text.data(), text.data() + text.size(), out);
  if (result.ec == std::errc::result_out_of_range) return NumberStatus::OutOfRange;
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return NumberStatus::Malformed;
  return NumberStatus::Ok;
}

// Parses a float lexeme as f32.
NumberStatus parse_f32(std::string_view text, float& out) { return parse_floating(text, out); }

// Parses a float lexeme as f64.
NumberStatus parse_f64(std::string_view text, double& out) { return parse_floating(text, out); }

// True when a number lexeme has a fraction or an exponent.
bool looks_like_float(std::string_view text) { return text.find_first_of(".eE") != std::string_view::npos; }

}  // namespace canary::graph::text
