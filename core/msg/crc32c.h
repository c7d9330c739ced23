// CRC-32C (Castagnoli) for frame headers, payloads and data segments: the
// one implementation on ISA-L in plugins/support/checksum, which the plugins
// use for journal records and data blocks (core may link it; plugins may not
// link core, which is why it lives there).
#pragma once

#include "checksum/crc32c.h"

namespace strata::msg {

using checksum::crc32c;
using checksum::crc32c_extend;

}  // namespace strata::msg
