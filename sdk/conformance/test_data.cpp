// Deterministic test bytes, so a test can regenerate what it expects instead
// of keeping a copy.
#include <algorithm>

#include "kit.h"

namespace strata::conformance {

std::string pattern_bytes(size_t n, uint64_t seed) {
  // splitmix64: every output byte value is equally likely, and a different
  // seed gives unrelated bytes, so misplaced ranges do not compare equal.
  std::string out(n, '\0');
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  for (size_t i = 0; i < n; i += 8) {
    x += 0x9e3779b97f4a7c15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    for (size_t b = 0; b < 8 && i + b < n; ++b) out[i + b] = static_cast<char>(z >> (8 * b));
  }
  return out;
}

namespace {
std::string hex_around(std::string_view s, size_t at) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = at; i < s.size() && i < at + 8; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out += kHex[c >> 4];
    out += kHex[c & 15];
    out += ' ';
  }
  return out.empty() ? "(end)" : out;
}
}  // namespace

ByteComparison same_bytes(std::string_view got, std::string_view want) {
  size_t common = std::min(got.size(), want.size());
  size_t at = 0;
  while (at < common && got[at] == want[at]) ++at;
  if (at == got.size() && at == want.size()) return {true, ""};
  return {false, "got " + std::to_string(got.size()) + " bytes, want " +
                     std::to_string(want.size()) + "; first difference at offset " +
                     std::to_string(at) + ": got " + hex_around(got, at) + "want " +
                     hex_around(want, at)};
}

}  // namespace strata::conformance
