#include "placement/map_file.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "placement/binary_format.h"
#include "placement/text_format.h"

namespace strata::placement {

Result<PlacementMap> load_map(const std::string &path) {
  std::string bytes;
  if (path == "-") {
    bytes.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::Error(ENOENT, "cannot open map file " + path);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  Result<PlacementMap> m = looks_binary(bytes) ? decode_binary(bytes) : parse_text(bytes);
  if (!m.ok()) return m.status().Context(path);
  return m;
}

Status save_map(const std::string &path, const PlacementMap &map, bool binary) {
  std::string bytes = binary ? encode_binary(map) : format_text(map);
  if (path == "-") {
    std::cout << bytes << std::flush;
    return Status::OK();
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::Error(EIO, "cannot write " + tmp);
    out << bytes;
    if (!out.flush()) return Status::Error(EIO, "cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::Error(errno, "cannot rename " + tmp + " to " + path);
  return Status::OK();
}

}  // namespace strata::placement
