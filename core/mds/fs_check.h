// `strata fs check`: walks a filesystem's objects from the root and reports
// what is inconsistent (docs/FILESYSTEM.md, "Objects of a filesystem"):
// dentries that do not decode, primary inodes whose ino differs from the
// dentry's, remote dentries without i.<ino>, link counts (names of a
// hard-linked inode; 2 + subdirectories of a directory), directories
// reached twice, orphan d./i. objects, data objects of no inode, and
// back-pointers (b.<shard>) that are stale, missing or wrong.
//
// It needs the journal applied (no MDS active for the filesystem, and the
// last one closed cleanly or its successor opened): with journal entries
// not yet applied it refuses (kJournalNotApplied) instead of reporting
// changes in flight as problems.
//
// repair fixes what is safe: link counts and back-pointers are rewritten,
// orphan objects (unreachable d./i. objects, data objects of no inode) and
// stale back-pointers are removed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "client/cluster_client.h"
#include "common/status.h"

namespace strata::mds {

struct FsProblem {
  std::string kind;    // bad_dentry, ino_mismatch, missing_inode, bad_nlink, dir_linked_twice,
                       // orphan_dir, orphan_inode, orphan_data, stale_data, stale_backptr,
                       // bad_backptr
  std::string object;  // the object it is about
  std::string detail;
  bool repaired = false;
};

struct FsCheckReport {
  uint64_t directories = 0, files = 0, data_objects = 0;
  std::vector<FsProblem> problems;
  size_t unrepaired() const {
    size_t n = 0;
    for (const auto &p : problems) n += p.repaired ? 0 : 1;
    return n;
  }
};

Result<FsCheckReport> fs_check(client::ClusterClient &cluster, uint32_t metadata_pool,
                               uint32_t data_pool, bool repair);

}  // namespace strata::mds
