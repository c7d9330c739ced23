#include "export_settings.h"

#include <stdexcept>

#include "strata/cpp/frontend.hpp"

namespace strata::rbd {

namespace {

const strata_option_spec kOptions[] = {
    {"image", STRATA_OPT_STRING, "", nullptr,
     "the image to export: POOL/NAME, or POOL/NAME@SNAP (read-only)"},
    {"export", STRATA_OPT_ENUM, "nbd", "nbd|file|kernel",
     "nbd: serve the NBD protocol on socket or listen; file: one file over FUSE at `at`; "
     "kernel: the block device `device` through the kernel's NBD client"},
    {"read_only", STRATA_OPT_BOOL, "false", nullptr,
     "export read-only (no exclusive lock is taken)"},
    {"socket", STRATA_OPT_STRING, "", nullptr, "NBD: a Unix socket path to listen on"},
    {"listen", STRATA_OPT_STRING, "", nullptr, "NBD: HOST:PORT to listen on (TCP)"},
    {"export_name", STRATA_OPT_STRING, "", nullptr,
     "NBD: the export's name (default: POOL/NAME; clients asking for \"\" get it too)"},
    {"max_payload", STRATA_OPT_INT, "32M", nullptr, "NBD: largest read or write accepted"},
    {"max_connections", STRATA_OPT_INT, "256", nullptr, "NBD: connections at most"},
    {"at", STRATA_OPT_STRING, "", nullptr, "file: the directory to mount the image's file on"},
    {"file_name", STRATA_OPT_STRING, "", nullptr, "file: the file's name (default: the image's)"},
    {"allow_other", STRATA_OPT_BOOL, "false", nullptr, "file: let other users open the file"},
    {"device", STRATA_OPT_STRING, "auto", nullptr,
     "kernel: /dev/nbdN, or auto (the free one with the lowest N)"},
    {"nbd_timeout", STRATA_OPT_INT, "0", nullptr,
     "kernel: seconds before the driver fails a request (0: it waits for the cluster)"},
    {"readahead_max_bytes", STRATA_OPT_INT, "8M", nullptr,
     "how far ahead sequential readers are served (0: no read-ahead)"},
    {"max_inflight_ops", STRATA_OPT_INT, "128", nullptr, "object operations in flight at most"},
    {"writeback_max_bytes", STRATA_OPT_INT, "32M", nullptr,
     "writes without FUA are answered once issued, this many bytes in flight at most; a flush "
     "waits for them (0: answer writes when durable on every replica)"},
    {"lock_lease_ms", STRATA_OPT_INT, "30000", nullptr,
     "the exclusive lock's lease: a dead server's lock frees itself after this"},
};

uint64_t to_number(const std::string &key, const std::string &v) {
  return sdk::parse_option_number(key, v);
}

bool to_bool(const std::string &v) { return sdk::parse_option_flag(v); }

}  // namespace

const strata_option_spec *export_option_specs(size_t *n) {
  if (n) *n = sizeof kOptions / sizeof kOptions[0];
  return kOptions;
}

ExportSettings parse_export_settings(
    const std::vector<std::pair<std::string, std::string>> &kv) {
  ExportSettings s;
  std::string image;
  for (const auto &[k, v] : kv) {
    if (k == "image") image = v;
    else if (k == "export")
      s.kind = v == "file" ? ExportKind::kFile : v == "kernel" ? ExportKind::kKernelNbd : ExportKind::kNbd;
    else if (k == "read_only") s.read_only = to_bool(v);
    else if (k == "socket") s.socket = v;
    else if (k == "listen") s.listen = v;
    else if (k == "export_name") s.export_name = v;
    else if (k == "max_payload") s.max_payload = to_number(k, v);
    else if (k == "max_connections") s.max_connections = to_number(k, v);
    else if (k == "at") s.at = v;
    else if (k == "file_name") s.file_name = v;
    else if (k == "allow_other") s.allow_other = to_bool(v);
    else if (k == "device") s.device = v;
    else if (k == "nbd_timeout") s.nbd_timeout_s = to_number(k, v);
    else if (k == "readahead_max_bytes") s.readahead_max_bytes = to_number(k, v);
    else if (k == "max_inflight_ops") s.max_inflight_ops = to_number(k, v);
    else if (k == "writeback_max_bytes") s.writeback_max_bytes = to_number(k, v);
    else if (k == "lock_lease_ms") s.lock_lease_ms = to_number(k, v);
  }
  std::string why;
  auto spec = parse_image_spec(image, true, &why);
  if (!spec) throw std::invalid_argument("image: " + (image.empty() ? "missing" : why));
  s.image = *spec;
  if (!s.image.snap.empty()) s.read_only = true;
  if (s.kind == ExportKind::kNbd) {
    if (s.socket.empty() == s.listen.empty())
      throw std::invalid_argument("export nbd needs exactly one of socket and listen");
    if (s.max_payload < 4096 || s.max_payload > (64u << 20))
      throw std::invalid_argument("max_payload: between 4K and 64M");
    if (s.export_name.empty()) s.export_name = s.image.text();
  } else if (s.kind == ExportKind::kKernelNbd) {
    if (s.device.empty()) throw std::invalid_argument("export kernel needs `device` (/dev/nbdN or auto)");
    if (s.nbd_timeout_s > 86400) throw std::invalid_argument("nbd_timeout: at most 86400 seconds");
  } else {
    if (s.at.empty()) throw std::invalid_argument("export file needs `at` (a directory)");
    if (s.file_name.empty()) s.file_name = s.image.name + (s.image.snap.empty() ? "" : "@" + s.image.snap);
    if (s.file_name.find('/') != std::string::npos)
      throw std::invalid_argument("file_name: no '/' allowed");
  }
  if (s.max_inflight_ops == 0 || s.max_connections == 0)
    throw std::invalid_argument("max_inflight_ops and max_connections must be > 0");
  if (s.lock_lease_ms < 2000) throw std::invalid_argument("lock_lease_ms: at least 2000");
  return s;
}

}  // namespace strata::rbd
