// canary::Error: kinds and message formatting.
#include "canary/error.h"

#include <utility>

#include "runtime/core/printable.h"

namespace canary {

// Lower-case name of a kind as it appears in messages.
const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::Model: return "model";
    case ErrorKind::Shape: return "shape";
    case ErrorKind::Input: return "input";
    case ErrorKind::Resource: return "resource";
    case ErrorKind::Internal: return "internal";
  }
  return "unknown";
}

// Messages quote names and values from models and files: their control
// bytes and invalid UTF-8 are escaped here, once for every error, so no
// message can drive the terminal or break a JSON document that carries it.
// Newlines stay: a few messages list several lines on purpose.
Error::Error(ErrorKind kind, const std::string& message)
    : Error(kind, printable(message, /*keep_newlines=*/true), 0) {}

Error::Error(ErrorKind kind, std::string&& printable_message, int)
    : std::runtime_error(std::string(error_kind_name(kind)) + " error: " + printable_message),
      kind_(kind),
      detail_(std::move(printable_message)) {}

}  // namespace canary
