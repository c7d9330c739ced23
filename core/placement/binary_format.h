// The compact binary form of a placement map, as carried in the cluster map.
//
//   header  "STPM" | u16 format version | u16 flags (0) | u32 payload length
//           | u64 XXH64 of the payload
//   payload sections: u16 tag | u16 flags | u32 length | bytes
//
// Little-endian throughout; strings are u16 length + bytes. A reader skips
// sections it does not know unless their flags carry kSectionRequired, so a
// newer writer can add data older readers may ignore; anything that changes
// the meaning of existing sections bumps the format version instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "placement/placement_map.h"

namespace strata::placement {

constexpr uint16_t kBinaryFormatVersion = 1;
constexpr char kBinaryMagic[4] = {'S', 'T', 'P', 'M'};

std::string encode_binary(const PlacementMap &map);

// Decodes and validates. Errors name the problem: wrong magic, newer
// version, truncation, checksum mismatch, unknown required section, or what
// validate_map() finds.
Result<PlacementMap> decode_binary(std::string_view bytes);

// True when `bytes` starts with the binary magic.
bool looks_binary(std::string_view bytes);

}  // namespace strata::placement
