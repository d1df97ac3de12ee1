// NumPy .npy reading and writing: magic, version, header length, dict, raw C-order data.
#include "cli/npy.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>

#include "canary/error.h"
#include "cli/npy_header.h"

namespace canary::cli {

static_assert(std::endian::native == std::endian::little, "the .npy code assumes a little-endian host");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// Throws Error(Input) naming the file or option at fault.
[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw Error(ErrorKind::Input, "'" + source + "': " + what);
}

// The DType of a descr such as "<f4", and whether its bytes need swapping.
struct DescrType {
  DType dtype;
  bool swap = false;
};

// "<f4" -> f32; nullopt for descrs Canary has no DType for.
std::optional<DescrType> dtype_of_descr(std::string_view descr) {
  if (descr.size() != 3) return std::nullopt;
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '=' && order != '|') return std::nullopt;
  const std::string_view code = descr.substr(1);
  std::optional<DType> t;
  if (code == "f4") t = DType::F32;
  else if (code == "f8") t = DType::F64;
  else if (code == "i8") t = DType::I64;
  else if (code == "i4") t = DType::I32;
  else if (code == "b1") t = DType::Bool;
  if (!t) return std::nullopt;
  if (order == '|' && dtype_size(*t) != 1) return std::nullopt;
  return DescrType{*t, order == '>' && dtype_size(*t) > 1};
}

// The descr numpy writes for a DType on a little-endian machine.
std::string_view descr_of(DType t) {
  switch (t) {
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
    case DType::I64: return "<i8";
    case DType::I32: return "<i4";
    case DType::Bool: return "|b1";
  }
  return "?";
}

// Little-endian unsigned integer of `n` bytes at `p`.
std::uint32_t read_le(const char* p, int n) {
  std::uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Copies raw element bytes into the tensor, swapping or normalising as needed.
void fill_data(Tensor& t, std::string_view data, bool swap) {
  auto* out = static_cast<unsigned char*>(t.raw());
  if (t.dtype() == DType::Bool) {
    for (std::size_t i = 0; i < data.size(); ++i) out[i] = data[i] != 0 ? 1 : 0;
    return;
  }
  std::memcpy(out, data.data(), data.size());
  if (!swap) return;
  const std::size_t size = dtype_size(t.dtype());
  for (std::size_t i = 0; i < data.size(); i += size) std::reverse(out + i, out + i + size);
}

}  // namespace

Tensor parse_npy(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 10) fail(source, "too short to be a .npy file (" + std::to_string(bytes.size()) + " bytes)");
  if (bytes.substr(0, kMagic.size()) != kMagic) fail(source, "not a .npy file (the magic string \\x93NUMPY is missing)");
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(source, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                     " (1.0, 2.0 and 3.0 are supported)");
  const std::size_t prefix = major == 1 ? 10 : 12;
  if (bytes.size() < prefix) fail(source, "truncated: the file ends inside the header length");
  const std::size_t header_len = read_le(bytes.data() + 8, major == 1 ? 2 : 4);
  if (bytes.size() - prefix < header_len)
    fail(source, "truncated header: it needs " + std::to_string(header_len) + " bytes, the file has " +
                     std::to_string(bytes.size() - prefix));
  const NpyHeader h = parse_npy_header(bytes.substr(prefix, header_len), source);
  if (h.fortran_order)
    fail(source, "Fortran-order arrays are not supported (save a C-order array, e.g. numpy.ascontiguousarray)");
  const std::optional<DescrType> type = dtype_of_descr(h.descr);
  if (!type) fail(source, "dtype '" + h.descr + "' is not supported (supported: <f4 <f8 <i8 <i4 |b1)");
  const std::int64_t count = checked_numel(h.shape);
  const std::size_t size = dtype_size(type->dtype);
  const std::string_view data = bytes.substr(prefix + header_len);
  if (static_cast<std::uint64_t>(count) > data.size() / size)
    fail(source, "truncated data: " + std::string(dtype_name(type->dtype)) + shape_to_string(h.shape) + " needs " +
                     std::to_string(static_cast<std::uint64_t>(count) * size) + " bytes, the file has " +
                     std::to_string(data.size()) + " after the header");
  const std::size_t needed = static_cast<std::size_t>(count) * size;
  if (data.size() != needed)
    fail(source, std::to_string(data.size() - needed) + " unexpected bytes after the data of " +
                     std::string(dtype_name(type->dtype)) + shape_to_string(h.shape));
  Tensor t = Tensor::empty(type->dtype, h.shape);
  fill_data(t, data, type->swap);
  return t;
}

std::string encode_npy(const Tensor& tensor, int major_version) {
  if (!tensor.defined()) throw Error(ErrorKind::Input, "cannot encode an undefined tensor as .npy");
  const std::string dict = format_npy_header(descr_of(tensor.dtype()), tensor.shape());
  int major = major_version;
  auto header_len_for = [&](int m) {
    const std::size_t unpadded = (m == 1 ? 10 : 12) + dict.size() + 1;
    return dict.size() + 1 + (64 - unpadded % 64) % 64;
  };
  if (major == 0) major = header_len_for(1) <= 0xFFFF ? 1 : 2;
  if (major != 1 && major != 2) throw Error(ErrorKind::Input, "npy header version must be 1 or 2");
  const std::size_t header_len = header_len_for(major);
  if (major == 1 && header_len > 0xFFFF)
    throw Error(ErrorKind::Input, "the .npy header of " + tensor.type_string() + " does not fit version 1.0");
  std::string out(kMagic);
  out += static_cast<char>(major);
  out += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xFF);
  out += dict;
  out.append(header_len - dict.size() - 1, ' ');
  out += '\n';
  const auto* data = static_cast<const char*>(tensor.raw());
  if (tensor.dtype() == DType::Bool) {
    for (std::int64_t i = 0; i < tensor.numel(); ++i) out += tensor.data<bool>()[i] ? '\1' : '\0';
  } else {
    out.append(data, tensor.nbytes());
  }
  return out;
}

Tensor read_npy(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail(path, "read error");
  return parse_npy(buffer.str(), path);
}

void write_npy(const std::string& path, const Tensor& tensor) {
  const std::string bytes = encode_npy(tensor);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::Resource, "cannot write '" + path + "': " + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error(ErrorKind::Resource, "cannot write '" + path + "': write failed");
}

}  // namespace canary::cli
