// One running mount: the MDS session, the MDS client, the message worker,
// file data, the filesystem and its FUSE session, started and stopped in
// the order they depend on each other. plugin.cpp exports it through the
// SDK's frontend adapter (strata/cpp/frontend.hpp).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "file_data.h"
#include "filesystem.h"
#include "fuse_mount.h"
#include "mds_client.h"
#include "message_worker.h"
#include "mount_settings.h"
#include "session_transport.h"
#include "strata/cpp/frontend.hpp"

namespace strata::fuse {

class MountClient {
 public:
  // The plugin's start: the options parsed (std::invalid_argument for a bad
  // one), then mounted.
  static std::unique_ptr<MountClient> start(const strata_frontend_host *host,
                                            strata_cluster_t cluster,
                                            const strata::sdk::FrontendOptions &options);
  // Mounts; throws strata::sdk::Error with the reason on failure (having
  // undone what it began).
  MountClient(const strata_frontend_host *host, strata_cluster_t cluster,
              const MountSettings &settings);
  // Unmounts, writes out what is buffered, makes the session's changes
  // safe and says Goodbye. 0 or -errno with *why.
  int stop(std::string *why);
  ~MountClient();

  std::string status_line() const;
  std::string status_json() const;
  std::string metrics() const;

 private:
  void log(int level, const std::string &msg) const;
  void teardown();

  const strata_frontend_host *host_;
  const strata_client_api *strata_api;
  strata_cluster_t cluster_;
  MountSettings settings_;
  std::unique_ptr<FileData> data_;
  std::unique_ptr<SessionTransport> transport_;
  std::unique_ptr<MdsClient> mds_;
  std::unique_ptr<Filesystem> fs_;
  std::unique_ptr<MessageWorker> worker_;
  // Revokes not yet handled (handle_queued_revokes takes them all).
  std::mutex revokes_mu_;
  std::vector<std::shared_ptr<ReceivedMessage>> revokes_;
  void handle_queued_revokes();
  // Lease upkeep (Filesystem::maintain) every second until teardown.
  void upkeep_loop();
  std::thread upkeep_;
  std::mutex upkeep_mu_;
  std::condition_variable upkeep_cv_;
  bool upkeep_stop_ = false;
  std::unique_ptr<FuseMount> mount_;
  bool stopped_ = false;
};

}  // namespace strata::fuse
