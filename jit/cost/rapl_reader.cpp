// RAPL energy counters read from the powercap sysfs tree (package zones and
// their DRAM subzones), with wraparound.
#include "jit/cost/energy.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>
#include <unordered_map>

namespace canary::jit::cost {

namespace fs = std::filesystem;

namespace {

// Wrap range assumed for a zone without a readable max_energy_range_uj: a
// 32-bit microjoule counter. Real zones always publish it (for the usual
// 15.3 uJ / 61 uJ energy units it is 65.5 kJ / 262 kJ).
constexpr std::uint64_t kDefaultRangeUj = std::uint64_t{1} << 32;

// A counter file's value, or why it could not be read.
struct CounterRead {
  std::optional<std::uint64_t> value;
  std::string error;
};

// Reads one unsigned decimal counter ("12345\n") from a sysfs file.
CounterRead read_counter(const fs::path& path) {
  CounterRead r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    r.error = path.string() + ": " + std::generic_category().message(errno);
    return r;
  }
  char buf[64];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  const int read_errno = errno;
  ::close(fd);
  if (n < 0) {
    r.error = path.string() + ": " + std::generic_category().message(read_errno);
    return r;
  }
  std::string_view text(buf, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    r.error = path.string() + ": not a counter: \"" + std::string(text.substr(0, 20)) + "\"";
    return r;
  }
  r.value = value;
  return r;
}

// The first line of a small text file, or "" when it cannot be read.
std::string read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

// N when name is prefix followed by decimal digits only.
std::optional<unsigned> zone_index(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  unsigned n = 0;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  const auto [end, ec] = std::from_chars(first, last, n);
  if (ec != std::errc() || end != last) return std::nullopt;
  return n;
}

// Subdirectories of dir named prefix + N, sorted by N; empty on any error.
std::vector<std::pair<unsigned, fs::path>> indexed_dirs(const fs::path& dir, const std::string& prefix,
                                                        std::error_code& ec) {
  std::vector<std::pair<unsigned, fs::path>> found;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto n = zone_index(it->path().filename().string(), prefix);
    std::error_code dir_ec;
    if (n && it->is_directory(dir_ec)) found.emplace_back(*n, it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

// Finds the package zones and their DRAM subzones; any unreadable counter disables the reader.
RaplReader::RaplReader(std::string root) {
  std::error_code ec;
  const auto packages = indexed_dirs(root, "intel-rapl:", ec);
  if (ec) {
    description_ = "not readable: " + root + ": " + ec.message();
    return;
  }
  if (packages.empty()) {
    description_ = "not readable: " + root + " has no intel-rapl zones";
    return;
  }
  std::string labels;
  // Adds one zone; false (with the reason in description_) when its counter is unreadable.
  auto add_zone = [&](const fs::path& dir, const std::string& label) {
    const CounterRead energy = read_counter(dir / "energy_uj");
    if (!energy.value) {
      description_ = "not readable: " + energy.error;
      return false;
    }
    const CounterRead range = read_counter(dir / "max_energy_range_uj");
    zones_.push_back({(dir / "energy_uj").string(), range.value && *range.value > 0 ? *range.value : kDefaultRangeUj});
    labels += (labels.empty() ? "" : " + ") + label;
    return true;
  };
  for (const auto& [n, dir] : packages) {
    const std::string name = read_line(dir / "name");
    bool ok = add_zone(dir, name.empty() ? "package-" + std::to_string(n) : name);
    std::error_code sub_ec;
    for (const auto& sub : indexed_dirs(dir, "intel-rapl:" + std::to_string(n) + ":", sub_ec))
      if (ok && read_line(sub.second / "name") == "dram") ok = add_zone(sub.second, "dram-" + std::to_string(n));
    if (!ok) {
      zones_.clear();
      return;
    }
  }
  description_ = labels + " (" + root + ")";
}

// Reads every zone's counter.
RaplSample RaplReader::read() const {
  RaplSample s;
  s.ok = !zones_.empty();
  for (const Zone& z : zones_) {
    const CounterRead r = read_counter(z.energy_path);
    s.ok = s.ok && r.value.has_value();
    s.energy_uj.push_back(r.value.value_or(0));
  }
  return s;
}

// Sums each zone's increase, unwrapping counters that went down.
double RaplReader::joules_between(const RaplSample& before, const RaplSample& after) const {
  if (!before.ok || !after.ok || before.energy_uj.size() != zones_.size() || after.energy_uj.size() != zones_.size())
    return 0.0;
  double uj = 0.0;
  for (std::size_t i = 0; i < zones_.size(); ++i) {
    const std::uint64_t b = before.energy_uj[i], a = after.energy_uj[i];
    const std::uint64_t range = zones_[i].max_range_uj;
    // The counter wrapped at its range (a counter above the range is read as having restarted at 0).
    const std::uint64_t delta = a >= b ? a - b : (b <= range ? range - b + a : a);
    uj += static_cast<double>(delta);
  }
  return uj * 1e-6;
}

}  // namespace canary::jit::cost
