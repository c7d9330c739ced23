#include "mount_settings.h"

#include <stdexcept>

#include "strata/cpp/frontend.hpp"

namespace strata::fuse {

namespace {

const strata_option_spec kOptions[] = {
    {"fs", STRATA_OPT_STRING, "", nullptr, "the filesystem to mount (`strata fs ls`)"},
    {"mountpoint", STRATA_OPT_STRING, "", nullptr, "the directory to mount it on"},
    {"root", STRATA_OPT_STRING, "/", nullptr, "the subdirectory of the filesystem to mount"},
    {"allow_other", STRATA_OPT_BOOL, "false", nullptr,
     "let other users use the mount (needs user_allow_other in /etc/fuse.conf unless root)"},
    {"default_permissions", STRATA_OPT_BOOL, "false", nullptr,
     "the kernel checks permission bits (off: the client checks them as the MDS does, and "
     "the kernel need not fetch a directory's attributes again after each change in it; "
     "off with allow_other, the kernel keeps no directory entries, as it walks cached ones "
     "unchecked)"},
    {"writeback_cache", STRATA_OPT_BOOL, "true", nullptr, "the kernel buffers writes"},
    {"max_write", STRATA_OPT_INT, "1M", nullptr, "bytes per FUSE write request (at least 1M)"},
    {"max_read", STRATA_OPT_INT, "1M", nullptr, "bytes per FUSE read request (at least 1M)"},
    {"max_threads", STRATA_OPT_INT, "16", nullptr, "FUSE worker threads at most"},
    {"lease_margin_ms", STRATA_OPT_INT, "200", nullptr,
     "milliseconds taken off every lease (clock drift, delays)"},
    {"connect_timeout_ms", STRATA_OPT_INT, "15000", nullptr,
     "how long the mount waits for the active MDS"},
    {"async_metadata", STRATA_OPT_BOOL, "true", nullptr,
     "creates, unlinks, renames and setattrs in a directory no other client uses return at "
     "once and go to the MDS in batches (fsync and unmount wait for them)"},
    {"sync_close", STRATA_OPT_BOOL, "false", nullptr,
     "close(2) waits until the file's data is in the cluster (off: it is written in the "
     "background under the file's lease; fsync, unmount and other clients' opens wait "
     "for it, and fsync reports a failed write-out)"},
    {"prefetch_listings", STRATA_OPT_BOOL, "true", nullptr,
     "a directory this client holds alone and has not listed is read whole (up to 4,096 "
     "entries) at its second lookup miss, so later lookups, creates and unlinks in it are "
     "answered locally"},
    {"batch_delay_us", STRATA_OPT_INT, "10000", nullptr,
     "how long an asynchronous change may wait for others to share its batch"},
    {"writeback_delay_ms", STRATA_OPT_INT, "1000", nullptr,
     "how long a closed file's data may stay buffered in the client before it is written "
     "out, as a local filesystem's dirty pages (fsync, unmount, other clients' opens and "
     "dirty_limit write it sooner; a file deleted first is never written; 0: at close; "
     "sync(1) does not reach a FUSE server)"},
    {"killpriv_v2", STRATA_OPT_BOOL, "true", nullptr,
     "negotiate FUSE_HANDLE_KILLPRIV_V2: the client drops set-id bits on write, truncate and "
     "chown, and the kernel stops asking for security.capability before every write and for "
     "the attributes before every chown"},
    {"dirty_limit", STRATA_OPT_INT, "128M", nullptr,
     "buffered bytes of closed files past which the oldest are written out before their "
     "writeback_delay_ms"},
};

uint64_t to_number(const std::string &key, const std::string &v) {
  return sdk::parse_option_number(key, v);
}

bool to_bool(const std::string &v) { return sdk::parse_option_flag(v); }

}  // namespace

const strata_option_spec *mount_option_specs(size_t *n) {
  if (n) *n = sizeof kOptions / sizeof kOptions[0];
  return kOptions;
}

MountSettings parse_mount_settings(const std::vector<std::pair<std::string, std::string>> &kv) {
  MountSettings s;
  for (const auto &[k, v] : kv) {
    if (k == "fs")
      s.fs_name = v;
    else if (k == "mountpoint")
      s.mountpoint = v;
    else if (k == "root")
      s.mount_root = v.empty() ? "/" : v;
    else if (k == "allow_other")
      s.allow_other = to_bool(v);
    else if (k == "default_permissions")
      s.default_permissions = to_bool(v);
    else if (k == "writeback_cache")
      s.writeback_cache = to_bool(v);
    else if (k == "max_write")
      s.max_write = uint32_t(to_number(k, v));
    else if (k == "max_read")
      s.max_read = uint32_t(to_number(k, v));
    else if (k == "max_threads")
      s.max_threads = uint32_t(to_number(k, v));
    else if (k == "lease_margin_ms")
      s.lease_margin_ms = uint32_t(to_number(k, v));
    else if (k == "connect_timeout_ms")
      s.connect_timeout_ms = uint32_t(to_number(k, v));
    else if (k == "async_metadata")
      s.async_metadata = to_bool(v);
    else if (k == "sync_close")
      s.sync_close = to_bool(v);
    else if (k == "prefetch_listings")
      s.prefetch_listings = to_bool(v);
    else if (k == "batch_delay_us")
      s.batch_delay_us = uint32_t(to_number(k, v));
    else if (k == "writeback_delay_ms")
      s.writeback_delay_ms = uint32_t(to_number(k, v));
    else if (k == "dirty_limit")
      s.dirty_limit = to_number(k, v);
    else if (k == "killpriv_v2")
      s.killpriv_v2 = to_bool(v);
  }
  if (s.fs_name.empty()) throw std::invalid_argument("fs: the filesystem's name is required");
  if (s.mountpoint.empty()) throw std::invalid_argument("mountpoint: required");
  if (s.max_write < (1u << 20)) throw std::invalid_argument("max_write: at least 1M");
  if (s.max_read < (1u << 20)) throw std::invalid_argument("max_read: at least 1M");
  if (s.max_threads < 2) throw std::invalid_argument("max_threads: at least 2");
  return s;
}

}  // namespace strata::fuse
