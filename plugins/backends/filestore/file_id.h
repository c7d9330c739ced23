// Identity of an object's data file.
//
// Object names are arbitrary bytes up to 4096 long, so they cannot be file
// names. Each data file is instead named by the (transaction seq, op index)
// of the op that created it. That makes file ids deterministic: when the host
// replays a transaction after a crash, an op that re-creates an object gets
// the very same file, so replay converges instead of leaking a second copy.
// Seqs strictly increase, so a file id is never reused for another object.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace strata::filestore {

struct FileId {
  uint64_t seq = 0;
  uint32_t op = 0;

  friend bool operator==(const FileId &, const FileId &) = default;
};

// Data files are spread over this many sub-directories so that no directory
// grows huge.
inline constexpr unsigned kFanOut = 256;

// The fan-out directory name ("00".."ff") a file id lives in.
std::string fan_out_dir(FileId id);
// The file name inside that directory: "<seq as 16 hex>.<op as hex>".
std::string file_name(FileId id);
// Inverse of file_name; nullopt for names that are not data files.
std::optional<FileId> parse_file_name(std::string_view name);
// "<fan_out_dir>/<file_name>", relative to the data directory.
std::string relative_path(FileId id);

struct FileIdHash {
  size_t operator()(const FileId &id) const noexcept {
    return std::hash<uint64_t>()(id.seq * 0x9E3779B97F4A7C15ull ^ id.op);
  }
};

}  // namespace strata::filestore
