// Shape profile files: a small line format,
//   canary-jit-profile 2 <fingerprint>
//   anchor <name-length> <name> tier <0|1|2>
//   symbolic <register> <axis> <lo> <hi> <divisor>   (DimFacts; 0 0 0: not recorded)
//   unequal <register> <axis> <register> <axis>
// Version 1 files (symbolic lines without facts) still load: their dims
// start with no facts and learn them again.
#include "jit/profile_store.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace canary::jit {

namespace {
constexpr int kProfileVersion = 2;
}  // namespace

std::string program_fingerprint(const vm::Program& program) {
  std::string f = std::to_string(program.instruction_count()) + ":" + std::to_string(program.register_count());
  for (const vm::Anchor& a : program.anchors()) f += ":" + std::to_string(a.pc);
  return f;
}

bool save_profile(const std::string& path, const vm::Program& program, const std::vector<AnchorProfile>& anchors,
                  std::string& error) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) {
      error = "cannot write the JIT profile '" + tmp + "'";
      return false;
    }
    out << "canary-jit-profile " << kProfileVersion << " " << program_fingerprint(program) << "\n";
    for (const AnchorProfile& a : anchors) {
      out << "anchor " << a.anchor.size() << " " << a.anchor << " tier " << static_cast<int>(a.tier) << "\n";
      for (const auto& [d, f] : a.knowledge.symbolic)
        out << "symbolic " << d.reg << " " << d.axis << " " << f.lo << " " << f.hi << " " << f.divisor << "\n";
      for (const auto& [x, y] : a.knowledge.unequal)
        out << "unequal " << x.reg << " " << x.axis << " " << y.reg << " " << y.axis << "\n";
    }
    if (!out.flush()) {
      error = "cannot write the JIT profile '" + tmp + "'";
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);  // atomic replace: a crash never leaves half a file
  if (ec) {
    error = "cannot replace the JIT profile '" + path + "': " + ec.message();
    return false;
  }
  return true;
}

namespace {

// Facts as a file writes them: none (all 0), or 2 <= lo <= hi <= kMaxSymbolicDim
// with one of the divisors.
bool valid_facts(const DimFacts& f) {
  if (f == DimFacts{}) return true;
  const bool divisor_ok = f.divisor == 1 || f.divisor == 4 || f.divisor == 8 || f.divisor == 16;
  return divisor_ok && f.lo >= 2 && f.lo <= f.hi && f.hi <= kMaxSymbolicDim && f.lo % f.divisor == 0 &&
         f.hi % f.divisor == 0;
}

std::string facts_text(const DimFacts& f) {
  return std::to_string(f.lo) + " " + std::to_string(f.hi) + " " + std::to_string(f.divisor);
}

// Ranks above this are refused when a model loads, so no axis reaches it.
constexpr std::uint32_t kMaxAxes = 64;

// Whether a dim names a register of the program and an axis a tensor can have:
// the fingerprint matching does not make every line of the file true.
bool valid_dim(const RegDim& d, const vm::Program& program) {
  return d.reg < program.register_count() && d.axis < kMaxAxes;
}

std::string dim_text(const RegDim& d) { return "register " + std::to_string(d.reg) + " axis " + std::to_string(d.axis); }

bool fail(std::string& error, const std::string& path, int line, const std::string& what) {
  error = "JIT profile '" + path + "' line " + std::to_string(line) + ": " + what;
  return false;
}

}  // namespace

bool load_profile(const std::string& path, const vm::Program& program, std::vector<AnchorProfile>& anchors,
                  std::string& error) {
  std::ifstream in(path);
  if (!in) return true;  // no profile yet: start cold
  std::string header, fingerprint;
  int version = 0;
  if (!(in >> header >> version >> fingerprint) || header != "canary-jit-profile" || version < 1 ||
      version > kProfileVersion)
    return fail(error, path, 1, "not a canary JIT profile (version 1 or " + std::to_string(kProfileVersion) + ")");
  if (fingerprint != program_fingerprint(program))
    return fail(error, path, 1, "written for another model (fingerprint " + fingerprint + ")");
  std::vector<AnchorProfile> loaded;
  std::string word;
  int line = 1;
  while (in >> word) {
    ++line;
    if (word == "anchor") {
      std::size_t len = 0;
      int tier = 0;
      std::string tier_word;
      if (!(in >> len) || len > 4096) return fail(error, path, line, "bad anchor name length");
      in.get();
      std::string name(len, '\0');
      in.read(name.data(), static_cast<std::streamsize>(len));
      if (!in || !(in >> tier_word >> tier) || tier_word != "tier" || tier < 0 || tier > 2)
        return fail(error, path, line, "bad anchor line");
      loaded.push_back({name, static_cast<Tier>(tier), {}});
    } else if (word == "symbolic" && !loaded.empty()) {
      RegDim d;
      DimFacts f;
      if (!(in >> d.reg >> d.axis) || (version >= 2 && !(in >> f.lo >> f.hi >> f.divisor)))
        return fail(error, path, line, "bad symbolic line");
      if (!valid_dim(d, program)) return fail(error, path, line, "no such dim in this model: " + dim_text(d));
      if (!valid_facts(f)) return fail(error, path, line, "bad facts of a symbolic dim: " + facts_text(f));
      loaded.back().knowledge.symbolic[d] = f;
    } else if (word == "unequal" && !loaded.empty()) {
      RegDim a, b;
      if (!(in >> a.reg >> a.axis >> b.reg >> b.axis)) return fail(error, path, line, "bad unequal line");
      for (const RegDim& d : {a, b})
        if (!valid_dim(d, program)) return fail(error, path, line, "no such dim in this model: " + dim_text(d));
      loaded.back().knowledge.unequal.insert({a, b});
    } else {
      return fail(error, path, line, "unexpected '" + word + "'");
    }
  }
  anchors = std::move(loaded);
  return true;
}

}  // namespace canary::jit
