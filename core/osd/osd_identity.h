// The OSD identity file, <store_dir>/strata_osd.ini, written by
// `strata osd --mkfs`: which OSD id and which cluster the store belongs to.
// An OSD refuses to start on a store made for another id or cluster, so
// that a config mix-up cannot serve one OSD's data as another's.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace strata::osd {

struct OsdIdentity {
  static constexpr const char *kFileName = "strata_osd.ini";
  int32_t osd_id = -1;
  std::string cluster_fsid;

  static Result<OsdIdentity> load(const std::string &store_dir);
  // Written atomically (temp file, fsync, rename, directory fsync).
  Status save(const std::string &store_dir) const;
  // OK when the store matches osd.<id> of cluster `fsid` (an empty fsid,
  // in the config or in the file, matches any cluster).
  Status check(int32_t id, const std::string &fsid, const std::string &store_dir) const;
};

}  // namespace strata::osd
