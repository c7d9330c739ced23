// Reading and writing map files in either form. Readers tell the forms
// apart by the binary magic, so every command takes either.
#pragma once

#include <string>

#include "common/status.h"
#include "placement/placement_map.h"

namespace strata::placement {

// "-" reads standard input.
Result<PlacementMap> load_map(const std::string &path);

// "-" writes standard output. binary: the compact form, else the text form.
Status save_map(const std::string &path, const PlacementMap &map, bool binary);

}  // namespace strata::placement
