// The printers of printers.h.
#include "printers.h"

#include <cstring>

namespace strata::conformance {

std::string errno_name(int64_t code) {
  int64_t positive = code < 0 ? -code : code;
  if (positive > 0 && positive < 4096)
    if (const char *name = strerrorname_np(static_cast<int>(positive))) return name;
  return std::to_string(code);
}

std::string describe_rc(int64_t code) {
  if (code >= 0) return std::to_string(code);
  std::string name = errno_name(code);
  if (name == std::to_string(code)) return name;  // not an errno this C library knows
  return "-" + name + " (" + std::to_string(code) + ")";
}

std::string printable_bytes(std::string_view bytes, size_t max) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  size_t shown = bytes.size() < max ? bytes.size() : max;
  for (size_t i = 0; i < shown; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        }
    }
  }
  out += "\"";
  if (shown < bytes.size()) out += "... (" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

}  // namespace strata::conformance
