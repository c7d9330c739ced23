// FileExport: an ImageFile served by an ExportSession, and the order of
// stopping them (unmount and join the loop, wait for the device's last
// Done, only then free the session the Done replies on).
#include "file_export.h"

#include <cerrno>
#include <string>
#include <utility>

#include "export_session.h"
#include "image_file.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::rbd {

namespace {

// FUSE workers: they only start device requests and copy a write's data,
// so a few suffice; more let reads and writes start while one copies.
constexpr unsigned kMaxThreads = 8;

// fuse_opt splits -o lists at commas: a device name with one keeps it.
std::string escape_option(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == ',' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string mount_options(const BlockDevice &device, const FileExportOptions &opts) {
  std::string o = "fsname=" + escape_option("strata:" + device.describe()) +
                  ",subtype=strata-image,default_permissions,max_read=" +
                  std::to_string(opts.max_write);
  if (opts.allow_other) o += ",allow_other";
  return o;
}

class FileExportImpl : public FileExport {
 public:
  FileExportImpl(std::shared_ptr<BlockDevice> device, FileExportOptions opts)
      : opts_(std::move(opts)), file_(std::move(device), opts_.file_name, opts_.max_write, opts_.log) {}
  ~FileExportImpl() override { stop(); }

  void start(const std::string &options) {
    std::string why;
    int rc = session_.mount(ImageFile::ops(), &file_, opts_.mountpoint, options, &why);
    if (rc < 0) throw strata::sdk::Error(rc, "cannot map onto " + opts_.mountpoint + ": " + why);
    session_.serve(kMaxThreads, [this](int result) {
      file_.log(STRATA_LOG_INFO, opts_.mountpoint + ": unmounted from outside");
      if (opts_.on_unmounted) {
        opts_.on_unmounted(result < 0 ? result : 0,
                           result < 0 ? "the FUSE session failed" : "unmounted");
      }
    });
    file_.log(STRATA_LOG_INFO, "mapped as " + opts_.mountpoint + "/" + opts_.file_name);
  }

  void stop() override {
    if (stopped_) return;
    stopped_ = true;
    session_.end([this](const std::string &line) { file_.log(STRATA_LOG_WARN, line); });
    file_.wait_idle();
    session_.destroy();
  }

  FileExportStats stats() const override { return file_.stats(); }

 private:
  const FileExportOptions opts_;
  ImageFile file_;
  ExportSession session_;
  bool stopped_ = false;
};

}  // namespace

std::unique_ptr<FileExport> FileExport::start(std::shared_ptr<BlockDevice> device,
                                              FileExportOptions opts) {
  if (!device) throw strata::sdk::Error(-EINVAL, "no device to map onto " + opts.mountpoint);
  if (opts.file_name.empty() || opts.file_name.find('/') != std::string::npos ||
      opts.file_name == "." || opts.file_name == "..") {
    throw strata::sdk::Error(-EINVAL, "cannot map onto " + opts.mountpoint + ": bad file name '" +
                                          opts.file_name + "'");
  }
  if (opts.max_write < 4096) opts.max_write = 4096;
  std::string options = mount_options(*device, opts);
  auto e = std::make_unique<FileExportImpl>(std::move(device), std::move(opts));
  e->start(options);
  return e;
}

}  // namespace strata::rbd
