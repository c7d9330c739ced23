// Conversions between the cluster map and its Cap'n Proto form
// (wire::ClusterMap, wire::MapIncremental). For code that reads or builds
// messages holding maps (the monitor's MapUpdate, the MonClient); everyone
// else uses the byte-level functions of cluster_map.h.
//
// Readers come from the network: every function here may throw
// kj::Exception on a malformed message; callers run them inside
// msg::read_message (or catch) so that the exception becomes a Status.
#pragma once

#include <string_view>

#include "cluster/cluster_map.h"
#include "msg/schema/wire.capnp.h"

namespace strata::cluster {

void to_wire(const ClusterMap &m, wire::ClusterMap::Builder out);
Result<ClusterMap> from_wire(wire::ClusterMap::Reader in);

void to_wire(const OsdInfo &o, wire::OsdInfo::Builder out);
OsdInfo from_wire(wire::OsdInfo::Reader in);
void to_wire(const PoolInfo &p, wire::PoolInfo::Builder out);
PoolInfo from_wire(wire::PoolInfo::Reader in);
void to_wire(const FsInfo &f, wire::FsInfo::Builder out);
FsInfo from_wire(wire::FsInfo::Reader in);
void to_wire(const MdsInfo &d, wire::MdsInfo::Builder out);
MdsInfo from_wire(wire::MdsInfo::Reader in);

// Fills `out` with what changed from `from` to `to` (to.epoch must be
// from.epoch + 1).
void incremental_to_wire(const ClusterMap &from, const ClusterMap &to,
                         wire::MapIncremental::Builder out);
// `from` with `inc` applied; fails unless inc.epoch == from.epoch + 1 or
// when the placement map it carries does not decode.
Result<ClusterMap> apply_incremental(const ClusterMap &from, wire::MapIncremental::Reader inc);

}  // namespace strata::cluster
