// Between the MDS's records (meta_types.h) and the protocol's structs
// (sdk/proto/fs.capnp).
#pragma once

#include "mds/meta_types.h"
#include "proto/fs.capnp.h"

namespace strata::mds {

void inode_to_proto(const InodeRec &in, fsproto::Inode::Builder out);
InodeRec inode_from_proto(fsproto::Inode::Reader in);
Time time_from_proto(fsproto::Timespec::Reader t);
void time_to_proto(const Time &t, fsproto::Timespec::Builder out);

}  // namespace strata::mds
