// CRC-32C (Castagnoli), the checksum of every journal record and superblock:
// the plugins' shared one (plugins/support/checksum).
#pragma once

#include "checksum/crc32c.h"

namespace strata::journal {

using checksum::crc32c;

}  // namespace strata::journal
