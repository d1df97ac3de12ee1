// Options::fault_injection and CANARY_FAULT, applied at Runtime construction.
#include "runtime/fault_options.h"

#include <cstdlib>
#include <string>

#include "canary/error.h"
#include "runtime/core/fault_injection.h"

namespace canary {

// Configures the registry from the option, else the variable, naming the source on error.
void apply_fault_options(const Options& options) {
  std::string source = "Options::fault_injection";
  std::string spec = options.fault_injection;
  if (spec.empty()) {
    const char* env = std::getenv("CANARY_FAULT");
    if (env == nullptr || *env == '\0') return;
    spec = env;
    source = "CANARY_FAULT";
  }
  try {
    configure_faults(spec);
  } catch (const Error& e) {
    throw Error(ErrorKind::Input, source + ": " + e.detail());
  }
}

}  // namespace canary
