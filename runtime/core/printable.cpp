// Escaping of control bytes, invalid UTF-8 and bidirectional marks (printable.h).
#include "runtime/core/printable.h"

#include <cstdint>

namespace canary {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// The length of the valid UTF-8 sequence at text[i] and its code point, or
// 0 when the bytes there are not one (overlong forms, surrogates and values
// past U+10FFFF included).
std::size_t utf8_sequence(std::string_view text, std::size_t i, std::uint32_t& code) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
  const std::uint8_t lead = byte(i);
  std::size_t length = 0;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2, code = lead & 0x1f;
  else if (lead >= 0xe0 && lead <= 0xef) length = 3, code = lead & 0x0f;
  else if (lead >= 0xf0 && lead <= 0xf4) length = 4, code = lead & 0x07;
  else return 0;
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
  if (overlong || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return 0;
  return length;
}

// C1 controls and the marks that reorder or hide the text around them.
bool escaped_code_point(std::uint32_t code) {
  return (code >= 0x80 && code <= 0x9f) || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

bool escaped_byte(std::uint8_t b, bool keep_newlines) {
  return (b < 0x20 && !(keep_newlines && b == '\n')) || b == 0x7f;
}

void append_byte_escape(std::string& out, std::uint8_t b) {
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xf];
}

void append_code_point_escape(std::string& out, std::uint32_t code) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xf];
}

}  // namespace

bool is_printable(std::string_view text, bool keep_newlines) {
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<std::uint8_t>(text[i]);
    if (b < 0x80) {
      if (escaped_byte(b, keep_newlines)) return false;
      ++i;
      continue;
    }
    std::uint32_t code = 0;
    const std::size_t length = utf8_sequence(text, i, code);
    if (length == 0 || escaped_code_point(code)) return false;
    i += length;
  }
  return true;
}

std::string printable(std::string_view text, bool keep_newlines) {
  if (is_printable(text, keep_newlines)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<std::uint8_t>(text[i]);
    if (b < 0x80) {
      if (escaped_byte(b, keep_newlines)) append_byte_escape(out, b);
      else out += static_cast<char>(b);
      ++i;
      continue;
    }
    std::uint32_t code = 0;
    const std::size_t length = utf8_sequence(text, i, code);
    if (length == 0) {
      append_byte_escape(out, b);  // not UTF-8: this byte alone, then go on from the next
      ++i;
    } else if (escaped_code_point(code)) {
      append_code_point_escape(out, code);
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace canary
