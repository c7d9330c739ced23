// The per-object record (onode): what the kv backend must know about an
// object without touching its payload. Its presence means the object exists.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::kv {

struct Onode {
  uint64_t size = 0;  // logical size; no chunk holds bytes at or past it
};

// Versioned encoding: a format byte, then the fields, so that fields can be
// appended later without rewriting every onode.
std::string encode_onode(const Onode &o);
// Throws Error(EUCLEAN) naming `what` (the object) if `bytes` is not an onode.
Onode decode_onode(std::string_view bytes, std::string_view what);

// Fixed-width integers for metadata values.
std::string encode_u64(uint64_t v);
// Throws Error(EUCLEAN) naming `what` if `bytes` is not 8 bytes.
uint64_t decode_u64(std::string_view bytes, std::string_view what);

}  // namespace strata::kv
