// canary::Error: kinds and message formatting.
#include "canary/error.h"

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

Error::Error(ErrorKind kind, const std::string& message)
    : std::runtime_error(std::string(error_kind_name(kind)) + " error: " + message),
      kind_(kind),
      detail_(message) {}

}  // namespace canary
