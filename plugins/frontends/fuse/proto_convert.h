// fs.capnp readers -> the client's own types (inode_attr.h, lease_cache.h).
#pragma once

#include "file_data.h"
#include "inode_attr.h"
#include "lease_cache.h"
#include "proto/fs.capnp.h"

namespace strata::fuse {

InodeAttr to_attr(fsproto::Inode::Reader in);
// A lease in the caller's clock: granted at local time sent_ms (before
// the request left), the MDS's expiresMs relative to its nowMs, minus
// margin_ms.
LeaseGrant to_grant(fsproto::Lease::Reader l, uint64_t mds_now_ms, int64_t sent_ms,
                    uint32_t margin_ms);
void fill_time(fsproto::Timespec::Builder b, const Time &t);
// Where a file's data is, as its attributes say.
FileLayout layout_of(const InodeAttr &a);
// Where a fileWrite holder says its file's data now is (SetAttr.maskInline).
struct DataReport {
  enum Where : uint8_t { kUnchanged, kInline, kObjects } where = kUnchanged;
  std::shared_ptr<const std::string> bytes;  // kInline: the file's bytes
};
void fill_data_report(fsproto::SetAttr::Builder a, const DataReport &data);
// A setattr reporting what a fileWrite holder changed locally: size,
// mtime, ctime, st_blocks when known (blocks >= 0), and where its data is.
void fill_size_report(fsproto::Request::Builder r, uint64_t ino, uint64_t size, const Time &mtime,
                      const Time &ctime, int64_t blocks, const DataReport &data = {});

}  // namespace strata::fuse
