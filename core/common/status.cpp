#include "common/status.h"

#include <cstring>

namespace strata {

std::string Status::ToString() const {
  if (ok()) return "ok";
  const char *name = strerrorname_np(-code_);
  return msg_ + " (" + (name ? name : std::to_string(-code_)) + ")";
}

}  // namespace strata
