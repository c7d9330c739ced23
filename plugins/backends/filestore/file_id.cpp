#include "filestore/file_id.h"

#include <charconv>
#include <cstdio>

namespace strata::filestore {

std::string fan_out_dir(FileId id) {
  // Multiplicative hashing: consecutive seqs land in different directories.
  uint64_t mixed = (id.seq * 0x9E3779B97F4A7C15ull) ^ (uint64_t{id.op} * 0xC2B2AE3D27D4EB4Full);
  char buf[3];
  std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>((mixed >> 56) % kFanOut));
  return buf;
}

std::string file_name(FileId id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx.%x", static_cast<unsigned long long>(id.seq), id.op);
  return buf;
}

std::optional<FileId> parse_file_name(std::string_view name) {
  size_t dot = name.find('.');
  if (dot != 16 || name.size() < 18) return std::nullopt;
  FileId id;
  const char *begin = name.data();
  const char *end = name.data() + name.size();
  auto seq = std::from_chars(begin, begin + dot, id.seq, 16);
  if (seq.ec != std::errc() || seq.ptr != begin + dot) return std::nullopt;
  auto op = std::from_chars(begin + dot + 1, end, id.op, 16);
  if (op.ec != std::errc() || op.ptr != end) return std::nullopt;
  if (file_name(id) != name) return std::nullopt;  // reject non-canonical spellings
  return id;
}

std::string relative_path(FileId id) { return fan_out_dir(id) + "/" + file_name(id); }

}  // namespace strata::filestore
