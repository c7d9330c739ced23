// One running instance of the rbd frontend: an open image (or snapshot)
// served over NBD, as /dev/nbdN through the kernel's NBD client, or as one
// file over FUSE, with its status and metrics.
#pragma once

#include <memory>
#include <string>

#include "export_settings.h"
#include "strata/cpp/frontend.hpp"

namespace strata::rbd {

class Image;
class NbdServer;
class FileExport;
class KernelNbdExport;

class ImageExport {
 public:
  // The plugin's start (strata/cpp/frontend.hpp): the options parsed, the
  // image opened and served. Throws std::invalid_argument for options that
  // do not fit together, strata::sdk::Error naming the image, socket or
  // mount point on other failures (nothing is left running then).
  static std::unique_ptr<ImageExport> start(const strata_frontend_host *host,
                                            strata_cluster_t cluster,
                                            const strata::sdk::FrontendOptions &options);
  ImageExport(const strata_frontend_host *host, strata_cluster_t cluster, ExportSettings s);
  ~ImageExport();

  // Stops serving (a kernel device is disconnected first), waits for
  // requests in flight, closes the image (which releases its lock). 0, or
  // -errno with *why when a write had failed.
  int stop(std::string *why);

  std::string status_line() const;
  std::string status_json() const;
  std::string metrics() const;

 private:
  void log(int level, const std::string &line) const;

  const strata_frontend_host *host_;
  ExportSettings settings_;
  std::shared_ptr<Image> image_;
  std::unique_ptr<NbdServer> nbd_;
  std::unique_ptr<FileExport> file_;
  std::unique_ptr<KernelNbdExport> kernel_;
  std::string where_;  // "unix:/path", "127.0.0.1:10809", the file's path, or /dev/nbdN
  bool stopped_ = false;
};

}  // namespace strata::rbd
