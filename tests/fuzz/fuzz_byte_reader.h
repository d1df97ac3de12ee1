// Reads fuzz bytes front to back as small integers. Past the end every read
// gives 0, so any byte string (the empty one too) decodes to a valid value
// and a mutation changes only the fields whose bytes it touches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace canary::fuzz {

class FuzzByteReader {
 public:
  explicit FuzzByteReader(std::string_view bytes) : bytes_(bytes) {}

  // The next byte, or 0 past the end.
  std::uint8_t next_byte() {
    if (pos_ >= bytes_.size()) return 0;
    return static_cast<std::uint8_t>(bytes_[pos_++]);
  }

  // The next 8 bytes as a little-endian integer (missing bytes are 0).
  std::uint64_t next_u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(next_byte()) << (8 * i);
    return v;
  }

  // Bytes not read yet.
  std::size_t remaining() const { return pos_ < bytes_.size() ? bytes_.size() - pos_ : 0; }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace canary::fuzz
