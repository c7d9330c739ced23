#include "image_export.h"

#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "file_export.h"
#include "image.h"
#include "kernel_nbd_export.h"
#include "nbd_server.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::rbd {

namespace {

std::string json_escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// Prometheus text: one counter or gauge with the image's label.
void metric(std::ostringstream &o, const std::string &image, const char *name, const char *type,
            const char *help, uint64_t value) {
  o << "# HELP strata_rbd_" << name << ' ' << help << '\n'
    << "# TYPE strata_rbd_" << name << ' ' << type << '\n'
    << "strata_rbd_" << name << "{image=\"" << image << "\"} " << value << '\n';
}

}  // namespace

std::unique_ptr<ImageExport> ImageExport::start(const strata_frontend_host *host,
                                               strata_cluster_t cluster,
                                               const strata::sdk::FrontendOptions &options) {
  return std::make_unique<ImageExport>(host, cluster, parse_export_settings(options.pairs()));
}

ImageExport::ImageExport(const strata_frontend_host *host, strata_cluster_t cluster,
                         ExportSettings s)
    : host_(host), settings_(std::move(s)) {
  OpenOptions open;
  open.read_only = settings_.read_only;
  open.snap = settings_.image.snap;
  open.readahead_max_bytes = settings_.readahead_max_bytes;
  open.max_inflight_ops = uint32_t(settings_.max_inflight_ops);
  open.writeback_max_bytes = settings_.writeback_max_bytes;
  open.lock_lease_ms = uint32_t(settings_.lock_lease_ms);
  open.lock_renew_ms = uint32_t(settings_.lock_lease_ms / 6);
  open.lock_description = settings_.kind == ExportKind::kNbd ? "nbd serve" : "image map";
  image_ = Image::open(host_->client, cluster, settings_.image.pool, settings_.image.name, open);
  auto logger = [this](int level, const std::string &line) { log(level, line); };
  try {
    if (settings_.kind == ExportKind::kNbd) {
      NbdServerOptions o;
      o.unix_path = settings_.socket;
      o.tcp_listen = settings_.listen;
      o.read_only = settings_.read_only;
      o.max_payload = uint32_t(settings_.max_payload);
      o.max_connections = uint32_t(settings_.max_connections);
      o.log = logger;
      NbdExport e;
      e.name = settings_.export_name;
      e.description = "strata image " + settings_.image.text();
      e.device = image_;
      nbd_ = NbdServer::start({e}, o);
      where_ = nbd_->bound_address();
    } else if (settings_.kind == ExportKind::kKernelNbd) {
      KernelNbdExportOptions o;
      o.device = settings_.device;
      o.description = "strata image " + settings_.image.text();
      o.read_only = settings_.read_only;
      o.timeout_s = uint32_t(settings_.nbd_timeout_s);
      o.log = logger;
      o.on_ended = [this](int result, const std::string &reason) {
        host_->request_stop(host_->ctx, result, reason.c_str());
      };
      kernel_ = KernelNbdExport::start(image_, o);
      where_ = kernel_->device();
    } else {
      FileExportOptions o;
      o.mountpoint = settings_.at;
      o.file_name = settings_.file_name;
      o.allow_other = settings_.allow_other;
      o.log = logger;
      o.on_unmounted = [this](int result, const std::string &reason) {
        host_->request_stop(host_->ctx, result, reason.empty() ? nullptr : reason.c_str());
      };
      file_ = FileExport::start(image_, o);
      where_ = settings_.at + "/" + settings_.file_name;
    }
  } catch (...) {
    image_->close();
    throw;
  }
}

ImageExport::~ImageExport() {
  if (!stopped_) {
    std::string why;
    stop(&why);
  }
}

int ImageExport::stop(std::string *why) {
  if (stopped_) return 0;
  stopped_ = true;
  if (nbd_) nbd_->stop();
  if (file_) file_->stop();
  if (kernel_) {
    // The device's own error (it had ended on its own) is only reported:
    // what decides the result is whether the image took every write.
    std::string kwhy;
    if (kernel_->stop(&kwhy) < 0) log(STRATA_LOG_WARN, settings_.image.text() + ": " + kwhy);
  }
  int rc = image_->close();
  if (rc < 0) *why = settings_.image.text() + ": " + image_->last_error();
  return rc;
}

void ImageExport::log(int level, const std::string &line) const {
  host_->log(host_->ctx, level, line.c_str());
}

std::string ImageExport::status_line() const {
  ImageInfo info = image_->info();
  std::ostringstream o;
  o << "serving " << settings_.image.text() << " (" << (info.size >> 20) << " MiB"
    << (settings_.read_only ? ", read-only" : "") << ") ";
  if (nbd_) {
    auto st = nbd_->stats();
    o << "over NBD on " << where_ << ", " << st.connections_open << " connection"
      << (st.connections_open == 1 ? "" : "s");
  } else if (kernel_) {
    o << "as " << where_ << " (kernel NBD)";
  } else {
    o << "as the file " << where_;
  }
  return o.str();
}

std::string ImageExport::status_json() const {
  ImageInfo info = image_->info();
  ImageStats st = image_->stats();
  std::ostringstream o;
  o << "{\"image\":\"" << json_escape(settings_.image.text()) << "\",\"size\":" << info.size
    << ",\"object_size\":" << info.object_size
    << ",\"read_only\":" << (settings_.read_only ? "true" : "false") << ",\"export\":\""
    << (nbd_ ? "nbd" : kernel_ ? "kernel" : "file") << "\",\"address\":\"" << json_escape(where_) << "\"";
  if (nbd_) o << ",\"connections\":" << nbd_->stats().connections_open;
  o << ",\"reads\":" << st.reads << ",\"writes\":" << st.writes << ",\"errors\":" << st.errors
    << "}";
  return o.str();
}

std::string ImageExport::metrics() const {
  const std::string img = settings_.image.text();
  ImageStats st = image_->stats();
  std::ostringstream o;
  metric(o, img, "reads_total", "counter", "Read requests.", st.reads);
  metric(o, img, "writes_total", "counter", "Write requests.", st.writes);
  metric(o, img, "discards_total", "counter", "Discard requests.", st.discards);
  metric(o, img, "write_zeroes_total", "counter", "Write-zeroes requests.", st.zeroes);
  metric(o, img, "flushes_total", "counter", "Flush requests.", st.flushes);
  metric(o, img, "read_bytes_total", "counter", "Bytes read.", st.bytes_read);
  metric(o, img, "written_bytes_total", "counter", "Bytes written.", st.bytes_written);
  metric(o, img, "object_reads_total", "counter", "Object reads issued.", st.object_reads);
  metric(o, img, "object_writes_total", "counter", "Object writes issued.", st.object_writes);
  metric(o, img, "object_removes_total", "counter", "Objects removed.", st.object_removes);
  metric(o, img, "readahead_hits_total", "counter", "Reads served from read-ahead.",
         st.readahead_hits);
  metric(o, img, "readahead_bytes_total", "counter", "Bytes read ahead.", st.readahead_bytes);
  metric(o, img, "cow_copies_total", "counter", "Objects preserved for a snapshot.",
         st.cow_copies);
  metric(o, img, "copy_ups_total", "counter", "Objects copied up from a clone's parent.",
         st.copy_ups);
  metric(o, img, "errors_total", "counter", "Requests that failed.", st.errors);
  metric(o, img, "writeback_bytes", "gauge",
         "Bytes of writes answered before landing, still in flight.", st.writeback_bytes);
  if (nbd_ || kernel_) {
    auto n = nbd_ ? nbd_->stats() : kernel_->stats();
    metric(o, img, "nbd_connections", "gauge", "NBD connections open.", n.connections_open);
    metric(o, img, "nbd_connections_total", "counter", "NBD connections accepted.",
           n.connections_total);
    metric(o, img, "nbd_requests_total", "counter", "NBD requests.", n.requests);
    metric(o, img, "nbd_protocol_errors_total", "counter",
           "NBD connections closed for bad protocol.", n.protocol_errors);
  }
  return o.str();
}

}  // namespace strata::rbd
