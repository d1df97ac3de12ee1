// Parsing of dtype names.
#include "canary/dtype.h"

namespace canary {

// Looks a dtype up by the short name dtype_name prints.
std::optional<DType> parse_dtype(std::string_view name) {
#define CANARY_DTYPE_PARSE(e, n, ty) \
  if (name == n) return DType::e;
  CANARY_DTYPES(CANARY_DTYPE_PARSE)
#undef CANARY_DTYPE_PARSE
  return std::nullopt;
}

}  // namespace canary
