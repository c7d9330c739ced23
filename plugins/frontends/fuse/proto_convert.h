// fs.capnp readers -> the client's own types (inode_attr.h, lease_cache.h).
#pragma once

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
// A setattr reporting what a fileWrite holder changed locally: size,
// mtime, ctime, and st_blocks when known (blocks >= 0).
void fill_size_report(fsproto::Request::Builder r, uint64_t ino, uint64_t size, const Time &mtime,
                      const Time &ctime, int64_t blocks);

}  // namespace strata::fuse
