// What one mount is asked to be: the plugin's options (the descriptor's
// strata_option_spec list, validated by the host) turned into settings.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "strata/plugin.h"

namespace strata::fuse {

struct MountSettings {
  std::string fs_name;                  // the filesystem (`strata fs new NAME`)
  std::string mountpoint;               // an existing directory
  std::string mount_root = "/";         // the subtree of the filesystem to mount
  bool allow_other = false;             // other users may use the mount (user_allow_other)
  bool default_permissions = false;     // the kernel checks modes (else the client does)
  bool writeback_cache = true;          // the kernel buffers writes (FUSE_CAP_WRITEBACK_CACHE)
  uint32_t max_write = 1u << 20;        // bytes per FUSE write (>= 1 MiB)
  uint32_t max_read = 1u << 20;         // bytes per FUSE read (>= 1 MiB)
  uint32_t max_threads = 16;            // FUSE worker threads at most
  uint32_t lease_margin_ms = 200;       // subtracted from every lease
  uint32_t connect_timeout_ms = 15000;  // for the MDS's Welcome at mount time
  bool async_metadata = true;           // changes under a dirWrite lease go out in batches
  uint32_t batch_delay_us = 2000;       // how long a batch waits for company
  bool prefetch_listings = true;        // a second lookup miss reads the whole directory
  bool sync_close = false;              // close(2) waits for the file's data
  uint32_t writeback_delay_ms = 1000;   // a closed file's data may wait this long here
  uint64_t dirty_limit = 128u << 20;    // past this many buffered bytes, it goes sooner
  bool killpriv_v2 = true;              // we drop set-id bits on write/truncate/chown
};

// The option specs the descriptor declares.
const strata_option_spec *mount_option_specs(size_t *n);

// From the host's validated options (every declared one present). Throws
// std::invalid_argument naming the option on a value out of range.
MountSettings parse_mount_settings(const std::vector<std::pair<std::string, std::string>> &kv);

}  // namespace strata::fuse
