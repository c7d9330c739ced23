#include "placement/fixed_point.h"

#include <cstdio>

namespace strata::placement {

bool parse_fixed(const std::string &text, Weight *out) {
  size_t i = 0;
  uint64_t whole = 0;
  bool digits = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    whole = whole * 10 + uint64_t(text[i++] - '0');
    digits = true;
    if (whole > 65535) return false;
  }
  // The fraction as numerator / 10^n, exact up to 18 digits.
  uint64_t num = 0, den = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (den < 1000000000000000000ull) {
        num = num * 10 + uint64_t(text[i] - '0');
        den *= 10;
      }
      ++i;
      digits = true;
    }
  }
  if (!digits || i != text.size()) return false;
  // round(num / den * 65536) without overflow: num < den <= 1e18 < 2^60.
  unsigned __int128 scaled = (unsigned __int128)num * kWeightOne * 2 + den;
  uint64_t frac = uint64_t(scaled / ((unsigned __int128)den * 2));
  uint64_t value = whole * kWeightOne + frac;
  if (value > UINT32_MAX) return false;
  *out = Weight(value);
  return true;
}

std::string format_fixed(Weight w) {
  char buf[32];
  for (int decimals = 3; decimals <= 5; ++decimals) {
    // Round w / 65536 to `decimals` digits with integers only.
    uint64_t scale = decimals == 3 ? 1000 : decimals == 4 ? 10000 : 100000;
    uint64_t scaled = (uint64_t(w) * scale * 2 + kWeightOne) / (uint64_t(kWeightOne) * 2);
    std::snprintf(buf, sizeof buf, "%llu.%0*llu", (unsigned long long)(scaled / scale), decimals,
                  (unsigned long long)(scaled % scale));
    Weight back = 0;
    if (parse_fixed(buf, &back) && back == w) break;
  }
  return buf;
}

}  // namespace strata::placement
