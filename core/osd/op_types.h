// A client operation as the OSD executes it: decoded from an OpRequest
// (wire.capnp) into plain structs that own their bytes, so the op can move
// between threads and be queued without the message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "osd/types.h"

namespace strata::osd {

// Mirrors wire::OpCode (checked in wire_convert.cpp).
enum class OpCode : uint16_t {
  kRead = 0, kStat, kWrite, kWriteFull, kAppend, kTruncate, kZero, kRemove, kCreate,
  kSetXattr, kRmXattr, kGetXattr, kGetXattrs, kOmapSet, kOmapRmKeys, kOmapRmRange,
  kOmapClear, kOmapSetHeader, kOmapGetHeader, kOmapGetByKeys, kOmapList, kCmpXattr,
  kAssertVersion, kAssertExists, kSnapContext, kSnapTrim, kSnapRollback, kSetSnap, kListSnaps,
};

// Mirrors wire::CmpMode.
enum class CmpMode : uint16_t { kEq = 0, kNe, kGt, kGe, kLt, kLe };

inline constexpr uint32_t kCreateExclusive = 1;

struct OsdOp {
  OpCode code = OpCode::kRead;
  uint64_t offset = 0, length = 0;
  std::string name, name2;
  std::string data;  // the op's data segment, if any
  std::vector<std::string> keys, values;
  uint64_t version = 0;
  CmpMode cmp = CmpMode::kEq;
  uint32_t flags = 0;
};

bool is_mutation(OpCode c);

struct OpResult {
  int32_t rc = 0;
  std::optional<std::string> data;
  std::vector<std::string> keys, values;
  uint64_t size = 0, mtime_ns = 0;
  bool more = false;
};

}  // namespace strata::osd
