// The rbd frontend plugin's options (its strata_option_spec list) and their
// parsed form: which image, and how it is exported (NBD on a socket,
// /dev/nbdN through the kernel's NBD client, or one file over FUSE).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "image_spec.h"
#include "strata/plugin.h"

namespace strata::rbd {

enum class ExportKind { kNbd, kFile, kKernelNbd };

struct ExportSettings {
  ImageSpec image;
  ExportKind kind = ExportKind::kNbd;
  bool read_only = false;
  // NBD
  std::string socket;  // unix socket path, or
  std::string listen;  // HOST:PORT
  std::string export_name;
  uint64_t max_payload = 32u << 20;
  uint64_t max_connections = 256;
  // file
  std::string at;         // mount point
  std::string file_name;  // default: the image's name
  bool allow_other = false;
  // kernel
  std::string device = "auto";  // /dev/nbdN or "auto"
  uint64_t nbd_timeout_s = 0;
  // the image
  uint64_t readahead_max_bytes = 8u << 20;
  uint64_t max_inflight_ops = 128;
  uint64_t writeback_max_bytes = 32u << 20;
  uint64_t lock_lease_ms = 30000;
};

const strata_option_spec *export_option_specs(size_t *n);

// From the host's validated options (every declared key present). Throws
// std::invalid_argument naming the option when values do not fit together.
ExportSettings parse_export_settings(const std::vector<std::pair<std::string, std::string>> &kv);

}  // namespace strata::rbd
