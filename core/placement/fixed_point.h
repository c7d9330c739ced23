// 16.16 fixed-point weights written as decimals ("4", "0.8", "1.250").
// Decimal text is what people review; 16.16 is what every machine computes
// with, so the conversion is exact integer arithmetic in both directions.
#pragma once

#include <string>

#include "placement/placement_map.h"

namespace strata::placement {

// Parses a non-negative decimal into 16.16, rounding to the nearest step.
// False for anything else: a sign, letters, or a value above 65535.99998.
bool parse_fixed(const std::string &text, Weight *out);

// The shortest decimal with 3 to 5 fractional digits that parses back to
// exactly `w` ("1.000", "0.800", "0.00002").
std::string format_fixed(Weight w);

inline double fixed_to_double(uint64_t w) { return double(w) / kWeightOne; }

}  // namespace strata::placement
