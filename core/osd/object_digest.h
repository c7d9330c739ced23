// A digest of everything an object holds — data, xattrs (the OSD's object
// info included), omap header and omap entries — for deep scrub: two
// copies with the same digest hold the same object.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "store/store.h"

namespace strata::osd {

// `data_crc`, when given, receives the CRC-32C of the object's data (to
// check against the object info's data digest on the way).
Result<uint64_t> object_digest(store::Store &store, std::string_view coll, std::string_view oid,
                               uint32_t *data_crc = nullptr);

}  // namespace strata::osd
