// The PTX interpreter and its block scheduler (see ptx_machine.h).
#include "tests/cuda/emulator/ptx_machine.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace canary::ptx_emulator {
namespace {

constexpr std::uint32_t kWarp = 32;
constexpr std::uint32_t kMaxBlockThreads = 1024;
constexpr std::uint32_t kCanonicalNan = 0x7fffffffu;
constexpr std::uint64_t kUninitialised = 0xffffffffffffffffull;

enum class State : std::uint8_t { Ready, AtBarrier, AtShuffle, Exited };

float as_float(std::uint64_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits)); }
std::uint32_t low(std::uint64_t v) { return static_cast<std::uint32_t>(v); }

// An f32 arithmetic result as the GPU stores it: any NaN is the canonical one.
std::uint64_t f32_result(float v) { return std::isnan(v) ? kCanonicalNan : std::bit_cast<std::uint32_t>(v); }

// min/max.f32: a NaN operand yields the other one; -0 orders below +0.
std::uint64_t min_max(float a, float b, bool want_max) {
  if (std::isnan(a) && std::isnan(b)) return kCanonicalNan;
  if (std::isnan(a)) return std::bit_cast<std::uint32_t>(b);
  if (std::isnan(b)) return std::bit_cast<std::uint32_t>(a);
  if (a == 0.0f && b == 0.0f) {
    const std::uint32_t sa = std::bit_cast<std::uint32_t>(a), sb = std::bit_cast<std::uint32_t>(b);
    return want_max ? (sa & sb) : (sa | sb);
  }
  return std::bit_cast<std::uint32_t>(want_max ? (a > b ? a : b) : (a < b ? a : b));
}

bool compare_f32(Cmp c, float a, float b) {
  const bool unordered = std::isnan(a) || std::isnan(b);
  switch (c) {
    case Cmp::Eq: return !unordered && a == b;
    case Cmp::Ne: return !unordered && a != b;
    case Cmp::Lt: return !unordered && a < b;
    case Cmp::Le: return !unordered && a <= b;
    case Cmp::Gt: return !unordered && a > b;
    case Cmp::Ge: return !unordered && a >= b;
    case Cmp::Equ: return unordered || a == b;
    case Cmp::Neu: return unordered || a != b;
    case Cmp::Ltu: return unordered || a < b;
    case Cmp::Leu: return unordered || a <= b;
    case Cmp::Gtu: return unordered || a > b;
    case Cmp::Geu: return unordered || a >= b;
    case Cmp::Num: return !unordered;
    case Cmp::Nan: return unordered;
  }
  return false;
}

template <typename T>
bool compare_int(Cmp c, T a, T b) {
  switch (c) {
    case Cmp::Eq: return a == b;
    case Cmp::Ne: return a != b;
    case Cmp::Lt: return a < b;
    case Cmp::Le: return a <= b;
    case Cmp::Gt: return a > b;
    case Cmp::Ge: return a >= b;
    default: return false;  // the parser admits no unordered compare on integers
  }
}

// cvt.rni.s32.f32: round to nearest even, saturate, NaN to 0.
std::uint64_t to_s32(float v) {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(static_cast<double>(v));
  if (r >= 2147483647.0) return 0x7fffffffu;
  if (r <= -2147483648.0) return 0x80000000u;
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(r));
}

struct Thread {
  std::uint32_t tid = 0;
  int pc = 0;
  State state = State::Ready;
};

class BlockRunner {
 public:
  BlockRunner(const Program& p, const Launch& l, const GlobalRangeCheck& g, std::uint64_t budget)
      : program_(p), launch_(l), global_ok_(g), budget_(budget),
        // At least one slot per thread: execute() binds its destination
        // reference before knowing whether the instruction has one.
        stride_(static_cast<std::size_t>(std::max(p.registers, 1))),
        regs_(static_cast<std::size_t>(l.block) * stride_),
        threads_(l.block), shared_(static_cast<std::size_t>(p.shared_bytes)) {}

  Outcome run() {
    for (std::uint32_t b = 0; b < launch_.grid && outcome_.ok(); ++b) run_block(b);
    return outcome_;
  }

 private:
  void run_block(std::uint32_t block) {
    ctaid_ = block;
    // Registers and shared memory start as garbage on a GPU: here as NaN
    // bits (and huge indices, and true predicates), so a kernel that reads
    // one before writing it computes nonsense or faults instead of seeing 0.
    std::fill(regs_.begin(), regs_.end(), kUninitialised);
    std::fill(shared_.begin(), shared_.end(), std::uint8_t{0xff});
    for (std::uint32_t t = 0; t < launch_.block; ++t) threads_[t] = Thread{t, 0, State::Ready};
    for (bool descending = false;; descending = !descending) {
      // Alternate the order threads run up to their next barrier, so a
      // missing barrier between a write and another thread's read shows in
      // one direction or the other.
      for (std::uint32_t i = 0; i < launch_.block; ++i) {
        Thread& t = threads_[descending ? launch_.block - 1 - i : i];
        if (t.state == State::Ready && !run_thread(t)) return;
      }
      if (release_shuffles()) continue;
      const Release r = release_barrier();
      if (r == Release::Done) return;
      if (r == Release::Released) continue;
      fail(Fault::LaunchFailed, threads_[0], "the block can make no progress: " + waiting_summary());
      return;
    }
  }

  // ---- scheduling ---------------------------------------------------------

  // Releases every warp whose live threads all wait at one shfl.sync.
  bool release_shuffles() {
    bool released = false;
    for (std::uint32_t w = 0; w * kWarp < launch_.block; ++w) {
      const std::uint32_t first = w * kWarp, end = std::min(first + kWarp, launch_.block);
      bool any = false, all = true;
      for (std::uint32_t t = first; t < end; ++t) {
        any |= threads_[t].state == State::AtShuffle;
        all &= threads_[t].state == State::AtShuffle;
      }
      if (!any || !all) continue;
      if (!exchange(first, end)) return false;
      released = true;
    }
    return released;
  }

  // Performs one shfl.sync.bfly for the warp [first, end).
  bool exchange(std::uint32_t first, std::uint32_t end) {
    const int pc = threads_[first].pc;
    const Instruction& in = program_.code[static_cast<std::size_t>(pc)];
    for (std::uint32_t t = first; t < end; ++t)
      if (threads_[t].pc != pc) {
        std::ostringstream m;
        m << "shfl.sync lanes diverged: lane 0 at line " << in.line << ", lane " << t - first << " at line "
          << program_.code[static_cast<std::size_t>(threads_[t].pc)].line;
        return fail(Fault::LaunchFailed, threads_[t], m.str());
      }
    if (end - first != kWarp) return fail(Fault::LaunchFailed, threads_[first], "shfl.sync in a warp of fewer than 32 threads");
    std::uint64_t values[kWarp];
    for (std::uint32_t lane = 0; lane < kWarp; ++lane) {
      const Thread& t = threads_[first + lane];
      if (low(read(in.src[3], t)) != 0xffffffffu)
        return fail(Fault::LaunchFailed, t, "shfl.sync with a partial member mask");
      values[lane] = read(in.src[0], t);
    }
    for (std::uint32_t lane = 0; lane < kWarp; ++lane) {
      Thread& t = threads_[first + lane];
      const std::uint32_t b = low(read(in.src[1], t)) & 31u, c = low(read(in.src[2], t));
      const std::uint32_t segmask = (c >> 8) & 31u;
      const std::uint32_t min_lane = lane & segmask, max_lane = min_lane | ((c & 31u) & ~segmask);
      std::uint32_t j = lane ^ b;
      if (j > max_lane) j = lane;
      reg(t, in.dst[0]) = low(values[j]);
      t.state = State::Ready;
      ++t.pc;
    }
    return true;
  }

  enum class Release : std::uint8_t { None, Released, Done };

  // Releases the block from bar.sync when every thread waits there.
  Release release_barrier() {
    std::uint32_t waiting = 0, exited = 0;
    for (const Thread& t : threads_) {
      waiting += t.state == State::AtBarrier;
      exited += t.state == State::Exited;
    }
    if (exited == launch_.block) return Release::Done;
    if (waiting + exited != launch_.block || waiting == 0) return Release::None;
    if (exited > 0) {
      for (const Thread& t : threads_)
        if (t.state == State::AtBarrier) {
          fail(Fault::LaunchFailed, t,
               "bar.sync reached after " + std::to_string(exited) + " threads of the block exited");
          break;
        }
      return Release::None;
    }
    // bar.sync is .aligned: every thread must wait at the same instruction.
    for (const Thread& t : threads_)
      if (t.pc != threads_[0].pc) {
        fail(Fault::LaunchFailed, t,
             "threads wait at different bar.sync instructions (thread 0 at line " +
                 std::to_string(program_.code[static_cast<std::size_t>(threads_[0].pc)].line) + ")");
        return Release::None;
      }
    for (Thread& t : threads_) {
      t.state = State::Ready;
      ++t.pc;
    }
    return Release::Released;
  }

  std::string waiting_summary() const {
    std::ostringstream m;
    int shown = 0;
    for (const Thread& t : threads_) {
      if (t.state == State::Exited || shown == 4) continue;
      m << (shown++ ? ", " : "") << "thread " << t.tid << " at line " << program_.code[static_cast<std::size_t>(t.pc)].line
        << (t.state == State::AtBarrier ? " (bar.sync)" : " (shfl.sync)");
    }
    return m.str();
  }

  // ---- operands -----------------------------------------------------------

  std::uint64_t& reg(Thread& t, int slot) { return regs_[t.tid * stride_ + static_cast<std::size_t>(slot)]; }
  std::uint64_t reg(const Thread& t, int slot) const { return regs_[t.tid * stride_ + static_cast<std::size_t>(slot)]; }

  std::uint64_t read(const Operand& o, const Thread& t) const {
    switch (o.kind) {
      case Operand::Kind::Reg: return reg(t, o.reg);
      case Operand::Kind::Imm: return o.imm;
      case Operand::Kind::Special:
        switch (o.special) {
          case Special::TidX: return t.tid;
          case Special::NtidX: return launch_.block;
          case Special::CtaidX: return ctaid_;
          case Special::NctaidX: return launch_.grid;
          case Special::LaneId: return t.tid % kWarp;
        }
        return 0;
      default: return 0;
    }
  }

  std::uint64_t address(const Operand& o, const Thread& t) const {
    const std::uint64_t base = o.symbol ? o.imm : reg(t, o.reg);
    return base + static_cast<std::uint64_t>(o.offset);
  }

  // ---- memory -------------------------------------------------------------

  bool fail(Fault f, const Thread& t, const std::string& what) {
    if (outcome_.ok()) {
      std::ostringstream m;
      const std::size_t pc = static_cast<std::size_t>(t.pc) < program_.code.size() ? static_cast<std::size_t>(t.pc) : 0;
      m << "line " << program_.code[pc].line << ": " << what << " (block " << ctaid_ << ", thread " << t.tid << ")";
      outcome_.fault = f;
      outcome_.message = m.str();
    }
    return false;
  }

  // A pointer to bytes of global memory at addr, or nullptr after recording the fault.
  void* global(const Thread& t, std::uint64_t addr, std::uint64_t bytes, const char* what) {
    if (addr % bytes != 0 && !(bytes == 16 && addr % 16 == 0)) {
      std::ostringstream m;
      m << what << " of " << bytes << " bytes at 0x" << std::hex << addr << " is misaligned";
      fail(Fault::MisalignedAddress, t, m.str());
      return nullptr;
    }
    if (!global_ok_(addr, bytes)) {
      std::ostringstream m;
      m << what << " of " << bytes << " bytes at 0x" << std::hex << addr << " is outside every allocation";
      fail(Fault::IllegalAddress, t, m.str());
      return nullptr;
    }
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(addr));
  }

  void* shared(const Thread& t, std::uint64_t addr, const char* what) {
    if (addr % 4 != 0 || shared_.size() < 4 || addr > shared_.size() - 4) {
      std::ostringstream m;
      m << what << " at shared offset " << addr << " is outside the block's " << shared_.size() << " bytes";
      fail(Fault::IllegalAddress, t, m.str());
      return nullptr;
    }
    return shared_.data() + addr;
  }

  std::uint64_t param(const Thread& t, const Operand& o, std::uint64_t bytes) {
    const std::uint64_t at = address(o, t);
    if (launch_.params.size() < bytes || at > launch_.params.size() - bytes) {
      fail(Fault::LaunchFailed, t, "ld.param beyond the parameter block");
      return 0;
    }
    std::uint64_t v = 0;
    std::memcpy(&v, launch_.params.data() + at, bytes);
    return v;
  }

  // ---- execution ----------------------------------------------------------

  // Runs t until it waits, exits or faults; false on a fault.
  bool run_thread(Thread& t) {
    const Instruction* code = program_.code.data();
    for (;;) {
      if (++outcome_.instructions > budget_)
        return fail(Fault::Timeout, t, "the launch ran past its instruction budget (an endless loop?)");
      const Instruction& in = code[t.pc];
      if (in.guard >= 0 && (reg(t, in.guard) != 0) == in.guard_negated) {
        ++t.pc;
        continue;
      }
      switch (in.op) {
        case Op::Bra:
          t.pc = in.src[0].target;
          continue;
        case Op::Ret:
          t.state = State::Exited;
          return true;
        case Op::BarSync:
          t.state = State::AtBarrier;
          return true;
        case Op::ShflBfly:
          t.state = State::AtShuffle;
          return true;
        default:
          if (!execute(in, t)) return false;
          ++t.pc;
      }
    }
  }

  bool execute(const Instruction& in, Thread& t) {
    const auto a = [&] { return read(in.src[0], t); };
    const auto b = [&] { return read(in.src[1], t); };
    const auto c = [&] { return read(in.src[2], t); };
    const auto fa = [&] { return as_float(a()); };
    const auto fb = [&] { return as_float(b()); };
    std::uint64_t& d = reg(t, in.dst[0] >= 0 ? in.dst[0] : 0);
    switch (in.op) {
      case Op::Mov32: d = low(a()); break;
      case Op::Mov64: case Op::Cvta: d = a(); break;
      case Op::LdParam32: d = param(t, in.address, 4); break;
      case Op::LdParam64: d = param(t, in.address, 8); break;
      case Op::LdGlobalF32: {
        const void* p = global(t, address(in.address, t), 4, "ld.global");
        if (!p) return false;
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        d = v;
        break;
      }
      case Op::LdGlobalV4F32: {
        const void* p = global(t, address(in.address, t), 16, "ld.global.v4");
        if (!p) return false;
        std::uint32_t v[4];
        std::memcpy(v, p, 16);
        for (int i = 0; i < 4; ++i) reg(t, in.dst[i]) = v[i];
        break;
      }
      case Op::StGlobalF32: {
        void* p = global(t, address(in.address, t), 4, "st.global");
        if (!p) return false;
        const std::uint32_t v = low(a());
        std::memcpy(p, &v, 4);
        break;
      }
      case Op::StGlobalV4F32: {
        void* p = global(t, address(in.address, t), 16, "st.global.v4");
        if (!p) return false;
        std::uint32_t v[4];
        for (int i = 0; i < 4; ++i) v[i] = low(read(in.src[i], t));
        std::memcpy(p, v, 16);
        break;
      }
      case Op::RedGlobalOr32: {
        void* p = global(t, address(in.address, t), 4, "red.global.or");
        if (!p) return false;
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        v |= low(a());
        std::memcpy(p, &v, 4);
        break;
      }
      case Op::LdSharedF32: {
        const void* p = shared(t, address(in.address, t), "ld.shared");
        if (!p) return false;
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        d = v;
        break;
      }
      case Op::StSharedF32: {
        void* p = shared(t, address(in.address, t), "st.shared");
        if (!p) return false;
        const std::uint32_t v = low(a());
        std::memcpy(p, &v, 4);
        break;
      }
      case Op::Add32: d = low(a() + b()); break;
      case Op::Sub32: d = low(a() - b()); break;
      case Op::MulLo32: d = low(a() * b()); break;
      case Op::MulHiU32: d = (std::uint64_t{low(a())} * low(b())) >> 32; break;
      case Op::MadLo32: d = low(low(a()) * low(b()) + low(c())); break;
      case Op::Shl32: { const std::uint32_t s = low(b()); d = s >= 32 ? 0 : low(std::uint64_t{low(a())} << s); break; }
      case Op::ShrU32: { const std::uint32_t s = low(b()); d = s >= 32 ? 0 : low(a()) >> s; break; }
      case Op::ShrS32: {
        const std::uint32_t s = std::min<std::uint32_t>(low(b()), 31);
        d = static_cast<std::uint32_t>(static_cast<std::int32_t>(low(a())) >> s);
        break;
      }
      case Op::And32: d = low(a() & b()); break;
      case Op::Or32: d = low(a() | b()); break;
      case Op::Add64: d = a() + b(); break;
      case Op::Sub64: d = a() - b(); break;
      case Op::MulLo64: d = a() * b(); break;
      case Op::MadLo64: d = a() * b() + c(); break;
      case Op::MulWideU32: d = std::uint64_t{low(a())} * low(b()); break;
      case Op::Shl64: { const std::uint32_t s = low(b()); d = s >= 64 ? 0 : a() << s; break; }
      case Op::CvtU64U32: d = low(a()); break;
      case Op::AddF32: d = f32_result(fa() + fb()); break;
      case Op::SubF32: d = f32_result(fa() - fb()); break;
      case Op::MulF32: d = f32_result(fa() * fb()); break;
      case Op::FmaF32: d = f32_result(std::fma(fa(), fb(), as_float(c()))); break;
      case Op::DivF32: case Op::DivApproxF32: d = f32_result(fa() / fb()); break;
      case Op::RcpF32: case Op::RcpApproxF32: d = f32_result(1.0f / fa()); break;
      case Op::SqrtF32: d = f32_result(std::sqrt(fa())); break;
      case Op::Ex2ApproxF32: d = f32_result(std::exp2(fa())); break;
      case Op::Lg2ApproxF32: d = f32_result(std::log2(fa())); break;
      case Op::AbsF32: d = low(a()) & 0x7fffffffu; break;
      case Op::NegF32: d = low(a()) ^ 0x80000000u; break;
      case Op::MinF32: d = min_max(fa(), fb(), false); break;
      case Op::MaxF32: d = min_max(fa(), fb(), true); break;
      case Op::CopysignF32: d = (low(b()) & 0x7fffffffu) | (low(a()) & 0x80000000u); break;
      case Op::CvtRniF32: d = f32_result(std::nearbyint(fa())); break;
      case Op::CvtRpiF32: d = f32_result(std::ceil(fa())); break;
      case Op::CvtRmiF32: d = f32_result(std::floor(fa())); break;
      case Op::CvtRziF32: d = f32_result(std::trunc(fa())); break;
      case Op::CvtRniS32F32: d = to_s32(fa()); break;
      case Op::CvtRnF32S32: d = std::bit_cast<std::uint32_t>(static_cast<float>(static_cast<std::int32_t>(low(a())))); break;
      case Op::SetpF32: d = compare_f32(in.cmp, fa(), fb()); break;
      case Op::SetpU32: d = compare_int<std::uint32_t>(in.cmp, low(a()), low(b())); break;
      case Op::SetpS32:
        d = compare_int<std::int32_t>(in.cmp, static_cast<std::int32_t>(low(a())), static_cast<std::int32_t>(low(b())));
        break;
      case Op::SelpB32: d = c() != 0 ? low(a()) : low(b()); break;
      case Op::TestpNan: d = std::isnan(fa()); break;
      case Op::TestpFinite: d = std::isfinite(fa()); break;
      case Op::OrPred: d = (a() != 0) || (b() != 0); break;
      case Op::AndPred: d = (a() != 0) && (b() != 0); break;
      case Op::NotPred: d = a() == 0; break;
      case Op::Bra: case Op::Ret: case Op::BarSync: case Op::ShflBfly: break;  // handled by run_thread
    }
    return true;
  }

  const Program& program_;
  const Launch& launch_;
  const GlobalRangeCheck& global_ok_;
  const std::uint64_t budget_;
  const std::size_t stride_;  // register slots per thread
  std::vector<std::uint64_t> regs_;
  std::vector<Thread> threads_;
  std::vector<std::uint8_t> shared_;
  std::uint32_t ctaid_ = 0;
  Outcome outcome_;
};

}  // namespace

Outcome run_kernel(const Program& program, const Launch& launch, const GlobalRangeCheck& global_ok,
                   std::uint64_t instruction_budget) {
  Outcome bad;
  bad.fault = Fault::LaunchFailed;
  if (launch.grid == 0 || launch.block == 0 || launch.block > kMaxBlockThreads) {
    bad.message = "invalid launch shape: " + std::to_string(launch.grid) + " blocks of " + std::to_string(launch.block) +
                  " threads";
    return bad;
  }
  if (launch.params.size() < static_cast<std::size_t>(program.param_bytes)) {
    bad.message = "the parameter block holds " + std::to_string(launch.params.size()) + " bytes, the kernel declares " +
                  std::to_string(program.param_bytes);
    return bad;
  }
  return BlockRunner(program, launch, global_ok, instruction_budget).run();
}

}  // namespace canary::ptx_emulator
