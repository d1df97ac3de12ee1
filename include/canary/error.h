// The typed error every public entry point throws for bad input or exhausted resources.
#pragma once

#include <stdexcept>
#include <string>

namespace canary {

// What kind of thing went wrong; the caller decides how to react by kind.
enum class ErrorKind {
  Model,     // the model is malformed: unknown op, bad attribute, bad graph structure
  Shape,     // shapes do not fit together (inference or a run-time shape)
  Input,     // the caller's inputs: missing, unknown name, wrong dtype/rank, NaN where forbidden
  Resource,  // a limit was hit: allocation too large, element count overflow
  Internal,  // a bug in Canary; please report it
};

const char* error_kind_name(ErrorKind k);

// canary::Error carries a kind and a message that names the node, the input and
// the expected versus actual value, e.g.
//   shape error: node 'conv1' (Conv): input 'x' expected rank 3, got rank 2 [4, 128]
// Control bytes and invalid UTF-8 in the message (from a hostile model's
// names) are escaped as \xHH, so what() is always safe to print.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message);
  ErrorKind kind() const noexcept { return kind_; }
  // The message without the "<kind> error: " prefix.
  const std::string& detail() const noexcept { return detail_; }

 private:
  Error(ErrorKind kind, std::string&& printable_message, int);
  ErrorKind kind_;
  std::string detail_;
};

}  // namespace canary
