// Fuzz outcomes: names, unexpected exceptions, and the abort that turns a
// finding into a libFuzzer crash.
#include "tests/fuzz/fuzz_result.h"

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <typeinfo>

namespace canary::fuzz {
namespace {

// The demangled name of a type ("std::out_of_range"), or the raw name.
std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

}  // namespace

const char* verdict_name(FuzzVerdict verdict) {
  switch (verdict) {
    case FuzzVerdict::Accepted: return "accepted";
    case FuzzVerdict::Rejected: return "rejected";
    case FuzzVerdict::Finding: return "finding";
  }
  return "?";
}

FuzzResult unexpected_exception(const std::exception& e) {
  return FuzzResult::finding("an exception other than canary::Error escaped: " + type_name(typeid(e)) + ": " +
                             e.what());
}

FuzzResult unknown_exception() { return FuzzResult::finding("a value that is not a std::exception was thrown"); }

void abort_on_finding(const FuzzResult& result, const char* target) {
  if (!result.is_finding()) return;
  std::fprintf(stderr, "\ncanary fuzz finding (%s):\n%s\n", target, result.detail.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string clip_text(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  return text.substr(0, limit) + "\n... (" + std::to_string(text.size() - limit) + " more characters)";
}

}  // namespace canary::fuzz
