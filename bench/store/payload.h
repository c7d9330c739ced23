// The bytes and names the workloads write: incompressible payloads sliced
// from one pool, and a hash for offsets that must depend on an index only
// (transactions are built on several submitting threads).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::store_bench {

inline constexpr uint64_t k4K = 4096;
inline constexpr uint64_t k4M = 4ull << 20;
inline constexpr double kMB = 1e6;  // MB/s as fio and disk vendors count

// `len` (<= 4 MiB) incompressible bytes; different for neighbouring i.
std::string_view payload(uint64_t i, uint64_t len);

// splitmix64's finaliser: a well-mixed 64-bit hash.
uint64_t mix(uint64_t x);

// prefix + decimal i, e.g. "obj.7".
std::string object_name(const char *prefix, uint64_t i);

}  // namespace strata::store_bench
