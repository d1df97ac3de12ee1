// The outcome of one fuzz execution, and the guard that classifies what a
// target body throws: canary::Error is the expected answer to bad input,
// anything else escaping (another exception type) is a finding.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "canary/error.h"

namespace canary::fuzz {

enum class FuzzVerdict {
  Accepted,  // the input was valid and every check after it held
  Rejected,  // the input was refused with a canary::Error, as it should be
  Finding,   // a bug: a check failed or an unexpected exception escaped
};

struct FuzzResult {
  FuzzVerdict verdict = FuzzVerdict::Accepted;
  std::string detail;  // the error message or what was wrong

  bool is_finding() const { return verdict == FuzzVerdict::Finding; }
  static FuzzResult accepted() { return {}; }
  static FuzzResult rejected(std::string message) { return {FuzzVerdict::Rejected, std::move(message)}; }
  static FuzzResult finding(std::string what) { return {FuzzVerdict::Finding, std::move(what)}; }
};

// "accepted", "rejected" or "finding".
const char* verdict_name(FuzzVerdict verdict);

// A finding for an exception of a type other than canary::Error, naming its type.
FuzzResult unexpected_exception(const std::exception& e);
// A finding for a thrown value that is not a std::exception.
FuzzResult unknown_exception();

// Runs a target body: canary::Error becomes Rejected, any other exception a Finding.
template <typename Body>
FuzzResult run_guarded(Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    return FuzzResult::rejected(e.what());
  } catch (const std::exception& e) {
    return unexpected_exception(e);
  } catch (...) {
    return unknown_exception();
  }
}

// For the libFuzzer entry points: a finding is printed to stderr and aborts
// the process, so libFuzzer saves the input as a crash artifact.
void abort_on_finding(const FuzzResult& result, const char* target);

// At most `limit` characters of text (for findings that quote a model).
std::string clip_text(const std::string& text, std::size_t limit = 4000);

}  // namespace canary::fuzz
