# The messages Strata daemons and clients exchange. One frame carries one
# message: the frame header's `type` (core/msg/message_types.h) names the
# root struct below, the payload is that struct as a Cap'n Proto flat
# array, and bulk bytes (object data, encoded transactions) travel as raw
# data segments after it, referenced by index (`...Seg` fields, -1 = none).
#
# Evolution: add fields at the end with new ordinals, never renumber or
# change a field's type; an older peer ignores fields it does not know and
# reads defaults for fields a newer peer omits. A change that older peers
# cannot ignore gets a new message type instead.
@0xae29d5d169489f76;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("strata::wire");

# ---------------------------------------------------------------------------
# Cluster map

struct OsdInfo {
  id @0 :Int32;
  addr @1 :Text;          # "127.0.0.1:6800"
  up @2 :Bool;
  in @3 :Bool;
  weight @4 :UInt32;      # 16.16 fixed point, 0x10000 = 1.0
  upFrom @5 :UInt64;      # epoch of the last boot
  downAt @6 :UInt64;      # epoch it was marked down (0 = never)
  host @7 :Text;
  downSinceMs @8 :UInt64; # unix ms when marked down, for the out timer
  fullness @9 :UInt8;     # cluster/fullness.h: 0 none, 1 nearfull, 2 backfillfull, 3 full
}

struct PoolInfo {
  id @0 :UInt32;
  name @1 :Text;
  size @2 :UInt32;
  minSize @3 :UInt32;
  pgNum @4 :UInt32;
  rule @5 :UInt32;
}

# A filesystem (docs/FILESYSTEM.md): its namespace lives in metadataPool,
# file data in dataPool.
struct FsInfo {
  id @0 :UInt32;
  name @1 :Text;
  metadataPool @2 :UInt32;
  dataPool @3 :UInt32;
  createdEpoch @4 :UInt64;
}

# A metadata server daemon as the monitor sees it.
struct MdsInfo {
  name @0 :Text;          # "a" for mds.a
  addr @1 :Text;          # where clients connect, "127.0.0.1:6900"
  state @2 :UInt8;        # cluster_map.h MdsState: 0 standby, 1 replay, 2 active
  fsId @3 :UInt32;        # the filesystem it serves (replay/active); 0 for a standby
  incarnation @4 :UInt64; # epoch at which it was given the fs: fences older actives
  upFrom @5 :UInt64;      # epoch of its first beacon
}

struct ClusterMap {
  epoch @0 :UInt64;
  fsid @1 :Text;
  osds @2 :List(OsdInfo);
  pools @3 :List(PoolInfo);
  placementPlugin @4 :Text;   # e.g. "crush"
  placementMap @5 :Data;      # core/placement binary format
  createdMs @6 :UInt64;
  modifiedMs @7 :UInt64;
  poolMax @8 :UInt32;         # highest pool id ever given out: ids are never reused
  filesystems @9 :List(FsInfo);
  mds @10 :List(MdsInfo);
  fsMax @11 :UInt32;          # highest fs id ever given out
}

# What changed from epoch-1 to epoch.
struct MapIncremental {
  epoch @0 :UInt64;
  osds @1 :List(OsdInfo);     # added or changed
  removedOsds @2 :List(Int32);
  pools @3 :List(PoolInfo);   # added or changed
  removedPools @4 :List(UInt32);
  placementMap @5 :Data;      # empty: unchanged
  modifiedMs @6 :UInt64;
  poolMax @7 :UInt32;         # only grows; 0: unchanged
  filesystems @8 :List(FsInfo); # added or changed
  removedFilesystems @9 :List(UInt32);
  mds @10 :List(MdsInfo);     # added or changed
  removedMds @11 :List(Text);
  fsMax @12 :UInt32;          # only grows; 0: unchanged
}

# mon -> subscriber: a full map, or the incrementals from the subscriber's
# epoch (applied in order). `full` wins when both are set.
struct MapUpdate {
  full @0 :ClusterMap;
  hasFull @1 :Bool;
  incrementals @2 :List(MapIncremental);
}

struct AuthEntry {
  entity @0 :Text;            # "client.admin", "osd.3"
  secret @1 :Data;
}

# mon -> daemons (osd, mon) only, never to clients: the keys a daemon
# needs to verify the entities that connect to it.
struct AuthUpdate {
  version @0 :UInt64;
  entries @1 :List(AuthEntry);
}

# ---------------------------------------------------------------------------
# Talking to the monitor

struct MonSubscribe {
  haveEpoch @0 :UInt64;       # 0: send the full map
  wantAuth @1 :Bool;          # daemons only; refused for clients
}

struct OsdBoot {
  id @0 :Int32;
  addr @1 :Text;
  host @2 :Text;
  fsid @3 :Text;              # the cluster fsid the OSD was made for
  storeFsid @4 :Text;         # the store's own id
  weight @5 :UInt32;
}

# mds -> mon, every mds_beacon_interval_ms: "I am alive, at this address,
# in this state". The monitor answers with map updates (the MDS subscribes):
# it assigns a standby to a filesystem without an active MDS (state replay),
# marks it active once it beacons `active` for that incarnation, and removes
# an MDS whose beacons stop for mds_beacon_grace_ms.
struct MdsBeacon {
  name @0 :Text;
  addr @1 :Text;
  state @2 :UInt8;            # the state it is in (MdsState)
  fsId @3 :UInt32;            # the fs it serves, or 0
  incarnation @4 :UInt64;     # the incarnation it is in, or 0
  fsid @5 :Text;              # the cluster fsid it was configured for
  wantFs @6 :Text;            # empty: any filesystem; else only this one (standby-for)
  # What `strata fs status` shows, as of this beacon.
  sessions @7 :UInt32;
  leases @8 :UInt64;
  cacheBytes @9 :UInt64;
  cacheLimitBytes @10 :UInt64;
  inodes @11 :UInt64;
  journalBytes @12 :UInt64;   # journaled, not yet applied to directory objects
  # Object writes since the MDS started serving (counters): what the
  # metadata costs the OSDs.
  requests @13 :UInt64;       # client requests served (a Batch counts each)
  journalWrites @14 :UInt64;  # writes (batches of entries) to the journal
  applyWrites @15 :UInt64;    # writes to directory, inode and table objects
  purgedObjects @16 :UInt64;  # data objects of deleted files removed
}

# An OSD reports a peer it could not reach (heartbeat grace exceeded).
struct OsdFailure {
  target @0 :Int32;
  reporter @1 :Int32;
  failedForMs @2 :UInt64;
  epoch @3 :UInt64;
  stillAlive @4 :Bool;        # retraction: the peer answers again
}

struct KeyValue {
  key @0 :Text;
  value @1 :Text;
}

# Administrative commands: "pool create", "pool set", "osd out", "status",
# "auth add", ... Arguments are named; the reply carries human text and
# JSON.
struct MonCommand {
  tid @0 :UInt64;
  prefix @1 :Text;
  args @2 :List(KeyValue);
}

struct MonCommandReply {
  tid @0 :UInt64;
  rc @1 :Int32;               # 0 or negative errno
  message @2 :Text;           # human-readable; the error text when rc < 0
  json @3 :Text;
  epoch @4 :UInt64;           # map epoch after the command
}

struct PgStat {
  pool @0 :UInt32;
  seed @1 :UInt32;
  state @2 :Text;             # "active+clean", "active+degraded", "peering", ...
  objects @3 :UInt64;
  bytes @4 :UInt64;
  lastUpdate @5 :UInt64;
  acting @6 :List(Int32);
  epoch @7 :UInt64;
  # Objects a scrub or a failed read found damaged (the first few), how
  # many in all, and the copies the primary replaced after a failed read.
  damaged @8 :List(DamagedObject);
  damagedTotal @9 :UInt64;
  readRepairs @10 :UInt64;
}

struct DamagedObject {
  oid @0 :Text;
  reason @1 :Text;
}

# osd -> mon, periodically and on PG state changes: the PGs it is
# primary for, and its disk usage.
struct OsdStats {
  id @0 :Int32;
  epoch @1 :UInt64;
  pgs @2 :List(PgStat);
  usedBytes @3 :UInt64;
  totalBytes @4 :UInt64;
  warnings @5 :List(Text);    # e.g. the volatile-journal warning
  # Its own check found its disk past osd_full_ratio (counting what it
  # had queued and the write it refused) since the last report: the map
  # marks it full, so that a refused writer's ENOSPC shows in health.
  refusedFull @6 :Bool;
}

# ---------------------------------------------------------------------------
# Client operations (client -> primary OSD)

enum OpCode {
  read @0;          # offset, length -> data segment
  stat @1;          # -> size, mtime, version
  write @2;         # offset, data
  writeFull @3;     # data
  append @4;        # data
  truncate @5;      # offset = new size
  zero @6;          # offset, length
  remove @7;
  create @8;        # flags bit 0: exclusive
  setXattr @9;      # name, data
  rmXattr @10;      # name
  getXattr @11;     # name -> data
  getXattrs @12;    # -> keys, values
  omapSet @13;      # keys, values
  omapRmKeys @14;   # keys
  omapRmRange @15;  # name = first, name2 = end (exclusive)
  omapClear @16;
  omapSetHeader @17; # data
  omapGetHeader @18; # -> data
  omapGetByKeys @19; # keys -> keys, values
  omapList @20;     # name = start after, name2 = end (empty = no end), length = max
  cmpXattr @21;     # guard: name, data, cmpMode; -ECANCELED when false
  assertVersion @22; # guard: version; -ERANGE when it differs
  assertExists @23; # guard: -ENOENT when the object is missing
  # Object snapshots (client API 1.3; docs/ARCHITECTURE.md "Object snapshots").
  snapContext @24;  # version = seq: preserve the object for snapshots <= seq first
  snapTrim @25;     # keys = live snapshot ids (8-byte big-endian): drop other clones
  snapRollback @26; # version = snapshot id: the object becomes what it was then
  setSnap @27;      # first step of a read: version = snapshot id the steps see
  listSnaps @28;    # -> size = seq; keys = clone ids, values = size + exists (BE)
}

enum CmpMode {
  eq @0;
  ne @1;
  gt @2;
  ge @3;
  lt @4;
  le @5;
}

struct OsdOp {
  code @0 :OpCode;
  offset @1 :UInt64;
  length @2 :UInt64;
  name @3 :Text;
  name2 @4 :Text;
  dataSeg @5 :Int32 = -1;
  keys @6 :List(Data);
  values @7 :List(Data);
  version @8 :UInt64;
  cmpMode @9 :CmpMode;
  flags @10 :UInt32;
}

struct OpRequest {
  tid @0 :UInt64;             # unique per client instance
  client @1 :Text;            # client instance: "client.admin.<nonce>"
  pool @2 :UInt32;
  seed @3 :UInt32;            # PG seed the client computed
  oid @4 :Text;
  mapEpoch @5 :UInt64;        # the client's map epoch
  ops @6 :List(OsdOp);
  isWrite @7 :Bool;
  # The caller's request id (strata_write_op_set_request_id), or empty. When
  # set, the OSDs deduplicate the write by it instead of by (client, tid),
  # so a retry from another client instance is applied at most once too.
  requestId @8 :Text;
  # Space-using steps go through while the cluster map marks an OSD of the
  # PG full (not past an OSD's failsafe ratio): the metadata server's
  # writes, whose journaled unlinks are how a full filesystem gets space
  # back. Clients' data writes never set it.
  fullTry @9 :Bool;
}

struct OpResult {
  rc @0 :Int32;
  dataSeg @1 :Int32 = -1;
  keys @2 :List(Data);
  values @3 :List(Data);
  size @4 :UInt64;
  mtimeNs @5 :UInt64;
  more @6 :Bool;              # omapList: more keys after these
}

struct OpReply {
  tid @0 :UInt64;
  rc @1 :Int32;               # first failing op's rc, or 0
  version @2 :UInt64;         # object version after a write / as read
  results @3 :List(OpResult);
  # Non-zero: this OSD is not the primary for that PG at that epoch (or is
  # behind); get map `retryEpoch` or newer and resend.
  retryEpoch @4 :UInt64;
  replayed @5 :Bool;          # a resent write found in the PG log
  message @6 :Text;           # context for an error (e.g. which copies failed)
}

# List the objects of one PG (the client walks every PG of a pool).
struct PgListRequest {
  tid @0 :UInt64;
  pool @1 :UInt32;
  seed @2 :UInt32;
  startAfter @3 :Text;
  limit @4 :UInt32;
  mapEpoch @5 :UInt64;
}

struct PgListReply {
  tid @0 :UInt64;
  rc @1 :Int32;
  names @2 :List(Text);
  more @3 :Bool;
  retryEpoch @4 :UInt64;
}

# `strata pg scrub|repair`: client -> the PG's primary OSD.
struct PgCommand {
  tid @0 :UInt64;
  pool @1 :UInt32;
  seed @2 :UInt32;
  deep @3 :Bool;
  repair @4 :Bool;
  mapEpoch @5 :UInt64;
}

struct PgCommandReply {
  tid @0 :UInt64;
  rc @1 :Int32;
  message @2 :Text;
  json @3 :Text;
  retryEpoch @4 :UInt64;
}

# ---------------------------------------------------------------------------
# Between OSDs. The OSD owns everything below this line and extends it
# (peering, recovery, scrub) following the evolution rules above.

struct Heartbeat {
  from @0 :Int32;
  epoch @1 :UInt64;
  stampNs @2 :UInt64;
  isReply @3 :Bool;
  failsafeFull @4 :Bool;  # the sender's disk is past osd_failsafe_full_ratio
  full @5 :Bool;          # the sender's disk is past osd_full_ratio
}

# Replication, peering, recovery and scrub (OSD <-> OSD, types 49..60).
#
# Every PG-addressed message carries `mapEpoch`, the sender's map epoch when
# it sent it: a receiver with an older map waits for that epoch first. A
# primary stamps requests with `intervalEpoch` (the epoch its current
# interval of the PG began); replies echo it, so that answers to a previous
# interval are recognised and dropped.

# A version in a PG: the map epoch the primary wrote it under, and a counter
# increasing by one per write in the PG. Ordered by (epoch, version).
struct EVersion {
  epoch @0 :UInt64;
  version @1 :UInt64;
}

struct PgLogEntry {
  version @0 :EVersion;
  oid @1 :Text;
  op @2 :UInt8;             # 1 = modify, 2 = delete
  client @3 :Text;          # reqid: the client instance ("" = none)
  tid @4 :UInt64;           # reqid: the client's tid
  rc @5 :Int32;
  mtimeNs @6 :UInt64;
}

struct PastInterval {
  first @0 :UInt64;
  last @1 :UInt64;
  acting @2 :List(Int32);
  primary @3 :Int32;
  maybeWentRw @4 :Bool;     # acting reached min_size: writes may have happened
}

struct PgInfo {
  pool @0 :UInt32;
  seed @1 :UInt32;
  lastUpdate @2 :EVersion;
  logTail @3 :EVersion;     # the log holds the entries after this version
  lastEpochStarted @4 :UInt64;
  backfillComplete @5 :Bool; # false while being backfilled: not a source
  pastIntervals @6 :List(PastInterval);
}

struct MissingItem {
  oid @0 :Text;
  need @1 :EVersion;
  isDelete @2 :Bool;
}

# primary -> replica: one client write. The transaction (store Transaction
# encoding, object ops only) is data segment `txnSeg`; the replica adds the
# log entry itself. txnSeg = -1: log the entry only (the object is beyond a
# backfill target's progress and will be copied later).
struct RepOp {
  pool @0 :UInt32;
  seed @1 :UInt32;
  mapEpoch @2 :UInt64;
  intervalEpoch @3 :UInt64;
  repTid @4 :UInt64;
  entry @5 :PgLogEntry;
  txnSeg @6 :Int32 = -1;
}

# replica -> primary: the write is durable on the replica (rc = 0).
struct RepOpReply {
  pool @0 :UInt32;
  seed @1 :UInt32;
  intervalEpoch @2 :UInt64;
  repTid @3 :UInt64;
  from @4 :Int32;
  rc @5 :Int32;
  failsafeFull @6 :Bool;  # the replica's disk is past osd_failsafe_full_ratio
  full @7 :Bool;          # the replica's disk is past osd_full_ratio
}

# primary -> any OSD that may hold the PG: send your info, log and missing.
struct PgQuery {
  pool @0 :UInt32;
  seed @1 :UInt32;
  mapEpoch @2 :UInt64;
  intervalEpoch @3 :UInt64;
  from @4 :Int32;
}

struct PgNotify {
  pool @0 :UInt32;
  seed @1 :UInt32;
  mapEpoch @2 :UInt64;
  intervalEpoch @3 :UInt64;   # echoed from the query
  from @4 :Int32;
  hasPg @5 :Bool;
  info @6 :PgInfo;
  log @7 :List(PgLogEntry);
  missing @8 :List(MissingItem);
}

# primary -> replica: peering is done, the PG is active in this interval.
# A log-recovered replica drops its log entries newer than `rewindTo`
# (divergent ones), appends `entries` and adds `missing`. A backfill target
# (`backfill`) replaces its whole log with `entries` and is incomplete until
# PgBackfillDone.
struct PgActivate {
  pool @0 :UInt32;
  seed @1 :UInt32;
  mapEpoch @2 :UInt64;
  intervalEpoch @3 :UInt64;
  from @4 :Int32;
  lastEpochStarted @5 :UInt64;
  backfill @6 :Bool;
  rewindTo @7 :EVersion;
  entries @8 :List(PgLogEntry);
  missing @9 :List(MissingItem);
  logTail @10 :EVersion;
}

# One object's whole state (recovery, backfill, repair): `txnSeg` is a
# store Transaction that rebuilds it; isDelete: the object must not exist.
# Sent by the primary to a replica, or by a peer to the primary answering
# a PgPull (rc < 0: the peer could not read it).
struct PgPush {
  pool @0 :UInt32;
  seed @1 :UInt32;
  mapEpoch @2 :UInt64;
  intervalEpoch @3 :UInt64;
  tid @4 :UInt64;
  from @5 :Int32;
  oid @6 :Text;
  version @7 :EVersion;
  isDelete @8 :Bool;
  txnSeg @9 :Int32 = -1;
  rc @10 :Int32;
}

struct PgPushReply {
  pool @0 :UInt32;
  seed @1 :UInt32;
  intervalEpoch @2 :UInt64;
  tid @3 :UInt64;
  from @4 :Int32;
  oid @5 :Text;
  rc @6 :Int32;
}

# primary -> a peer holding a good copy: push `oid` to me.
struct PgPull {
  pool @0 :UInt32;
  seed @1 :UInt32;
  mapEpoch @2 :UInt64;
  intervalEpoch @3 :UInt64;
  tid @4 :UInt64;
  from @5 :Int32;
  oid @6 :Text;
}

# primary -> peer: list objects after `startAfter` up to `end` (inclusive,
# "" = no end), at most `limit`, with versions; `deep` adds a digest of each
# object's data, xattrs and omap (deep scrub).
struct PgScan {
  pool @0 :UInt32;
  seed @1 :UInt32;
  mapEpoch @2 :UInt64;
  intervalEpoch @3 :UInt64;
  tid @4 :UInt64;
  from @5 :Int32;
  startAfter @6 :Text;
  end @7 :Text;
  limit @8 :UInt32;
  deep @9 :Bool;
}

struct ScanItem {
  oid @0 :Text;
  version @1 :EVersion;
  size @2 :UInt64;
  digest @3 :UInt64;
  rc @4 :Int32;               # a read error while digesting
}

struct PgScanReply {
  pool @0 :UInt32;
  seed @1 :UInt32;
  intervalEpoch @2 :UInt64;
  tid @3 :UInt64;
  from @4 :Int32;
  rc @5 :Int32;
  items @6 :List(ScanItem);
  more @7 :Bool;
}

# primary -> backfill target: every object has been copied; the target is
# a complete replica again.
struct PgBackfillDone {
  pool @0 :UInt32;
  seed @1 :UInt32;
  mapEpoch @2 :UInt64;
  intervalEpoch @3 :UInt64;
  from @4 :Int32;
}

# primary -> an OSD outside the acting set still holding the PG, once the
# PG is clean: delete your copy.
struct PgRemove {
  pool @0 :UInt32;
  seed @1 :UInt32;
  mapEpoch @2 :UInt64;
  from @3 :Int32;
}
