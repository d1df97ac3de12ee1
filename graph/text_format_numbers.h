// Number spelling of the graph text format: shortest round-trip floats with
// nan/inf spelled out, and checked parsing of number lexemes (internal).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace canary::graph::text {

// Shortest text that parses back to exactly the same float ("0.1", "1e-45",
// "-0", "nan", "-inf").
std::string format_f32(float v);
// Shortest text that parses back to exactly the same double.
std::string format_f64(double v);
// Like format_f64 but always recognisable as a float: "1.0", not "1".
std::string format_float_attr(double v);

enum class NumberStatus { Ok, Malformed, OutOfRange };

// Parses an unsigned decimal integer lexeme.
NumberStatus parse_magnitude(std::string_view text, std::uint64_t& out);
// Parses an unsigned decimal number lexeme or "inf"/"nan" as a float.
NumberStatus parse_f32(std::string_view text, float& out);
// Parses an unsigned decimal number lexeme or "inf"/"nan" as a double.
NumberStatus parse_f64(std::string_view text, double& out);
// True when a number lexeme has a fraction or an exponent ("1.0", "2e3").
bool looks_like_float(std::string_view text);

}  // namespace canary::graph::text
