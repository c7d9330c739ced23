# The filesystem protocol: what a filesystem client (plugins/frontends/fuse,
# or any third-party client) and the metadata server (`strata mds`, core/mds)
# exchange over a service session (strata_session_* in strata/client.h).
# docs/FILESYSTEM.md explains the model (leases, unsafe/safe replies,
# delegated inode numbers); this file is the wire contract.
#
# Every message travels as one messenger frame whose type is one of the
# MessageType numbers below (the service range, 1024..2047) and whose
# payload is the named root struct as a Cap'n Proto flat array. Bulk data
# never travels here: file data goes straight to the data pool's objects.
#
# Evolution as in core/msg/schema/wire.capnp: append fields with new
# ordinals; never renumber or retype; a change an older peer cannot ignore
# gets a new message type.
@0xef9d4ef30dfb76f9;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("strata::fsproto");

# Frame types (uint16 on the wire). Numbers are wire format.
const msgHello :UInt16 = 1024;        # client -> mds: Hello
const msgWelcome :UInt16 = 1025;      # mds -> client: Welcome
const msgRequest :UInt16 = 1026;      # client -> mds: Request
const msgReply :UInt16 = 1027;        # mds -> client: Reply
const msgRevoke :UInt16 = 1028;       # mds -> client: Revoke
const msgRelease :UInt16 = 1029;      # client -> mds: Release (answers a Revoke, or gives up leases)
const msgBatch :UInt16 = 1030;        # client -> mds: Batch (asynchronous metadata; answered by Replies)
const msgBatchReply :UInt16 = 1031;   # reserved: BatchReply is never sent (each request gets its Reply)
const msgLockGranted :UInt16 = 1032;  # mds -> client: LockGranted (a waiting lock was granted)
const msgGoodbye :UInt16 = 1033;      # client -> mds: Goodbye (clean unmount)

# ---------------------------------------------------------------------------
# Inodes

enum FileType {
  unknown @0;
  regular @1;
  directory @2;
  symlink @3;
  fifo @4;
  socket @5;
  charDevice @6;
  blockDevice @7;
}

struct Timespec {
  sec @0 :Int64;
  nsec @1 :UInt32;
}

# How a file's data is striped over data objects: object n of inode i is
# "<i as 16 lowercase hex>.<n as 8 lowercase hex>" in pool dataPool. Byte
# offset o lives in object o / objectSize at o % objectSize.
struct Layout {
  objectSize @0 :UInt32 = 4194304;
  dataPool @1 :Int64;
}

struct Inode {
  ino @0 :UInt64;
  type @1 :FileType;
  mode @2 :UInt32;            # permission bits and suid/sgid/sticky (st_mode & 07777)
  uid @3 :UInt32;
  gid @4 :UInt32;
  nlink @5 :UInt32;
  size @6 :UInt64;
  atime @7 :Timespec;
  mtime @8 :Timespec;
  ctime @9 :Timespec;
  btime @10 :Timespec;
  rdev @11 :UInt32;
  symlinkTarget @12 :Text;
  layout @13 :Layout;
  version @14 :UInt64;        # bumped by every change the MDS applies
  xattrs @15 :List(Xattr);    # user.*, security.*, trusted.* (small; the MDS caps the total)
  blocks @16 :UInt64;         # 512-byte blocks, as the client last reported (st_blocks)
  # Inline data (docs/FILESYSTEM.md, "Inline data"): when set, the file's
  # bytes are inlineData followed by zeros up to `size`, and no data
  # object of it matters (a fresh file of a client that supportsInline
  # starts so, empty). Clear: the data objects hold the file.
  dataInline @17 :Bool;
  inlineData @18 :Data;
}

struct Xattr {
  name @0 :Text;
  value @1 :Data;
}

# ---------------------------------------------------------------------------
# Leases. A lease lets a client answer from its cache until `expiresMs`
# (milliseconds on the MDS's clock from the Reply's `nowMs`; the client
# subtracts the round trip and keeps a safety margin). The MDS revokes a
# lease before another client's change would make the holder's cache wrong,
# and waits for the Release (or for the lease to expire, whichever comes
# first) before applying that change.

enum LeaseKind {
  none @0;
  # On a directory: its entries (names -> ino, type) and the inodes inline
  # in them may be cached; with `complete` the client may answer negative
  # lookups and readdir from its cache.
  dirRead @1;
  # On a directory, exclusive: as dirRead, and the client may create,
  # unlink and rename inside it asynchronously (Batch), with inode numbers
  # from its delegated range.
  dirWrite @2;
  # On a file: attributes and data may be cached (shared among readers).
  fileRead @3;
  # On a file, exclusive: the client may buffer writes and change size and
  # mtime locally; it reports them in Release or a setattr before giving
  # the lease up.
  fileWrite @4;
}

struct Lease {
  ino @0 :UInt64;
  kind @1 :LeaseKind;
  seq @2 :UInt64;             # increases per grant on this ino; Revoke/Release name it
  expiresMs @3 :UInt64;
  complete @4 :Bool;          # dir leases: the client has been sent every entry
}

# ---------------------------------------------------------------------------
# Session

struct Hello {
  clientName @0 :Text;        # the client's instance id (strata_cluster_instance_id) + mount point
  sessionId @1 :UInt64;       # 0: new session; else the session being resumed after a failover
  mountRoot @2 :Text;         # "/" or a subdirectory the client mounts
  fsName @3 :Text;
  supportsAsync @4 :Bool;
  # The client reads and writes inline data (Inode.dataInline): its new
  # files start inline. A session without it gets -EOPNOTSUPP opening
  # or truncating an inline file.
  supportsInline @5 :Bool;
}

struct InoRange {
  first @0 :UInt64;
  count @1 :UInt64;           # 0: none
}

struct Welcome {
  sessionId @0 :UInt64;
  incarnation @1 :UInt64;     # the active MDS's incarnation; requests are replayed across changes
  root @2 :Inode;             # the mounted root's inode
  leaseMs @3 :UInt32;         # how long leases last unless renewed
  delegated @4 :InoRange;     # inode numbers this client may use for asynchronous creates
  nowMs @5 :UInt64;
  error @6 :Int32;            # 0, or -errno (e.g. -ENOENT: no such fs or mount root)
  message @7 :Text;
  metadataPool @8 :Int64;
  dataPool @9 :Int64;
  maxFileSize @10 :UInt64;
  # The last request id of this session the MDS has committed: on resume,
  # the client replays every unsafe request after it, in order.
  committedTid @11 :UInt64;
  # Files up to this many bytes should be kept inline (0: none; set only
  # for a session that supportsInline). The MDS takes inline data up to
  # 64 KiB whatever this says (another MDS may have said more).
  inlineMax @12 :UInt32;
  # The MDS applies Create.then: a client may fold the setattrs it queued
  # right after an asynchronous create into that create.
  createThen @13 :Bool;
}

# ---------------------------------------------------------------------------
# Requests

struct SetAttr {
  # Which fields apply (bit mask).
  const maskMode :UInt32 = 1;
  const maskUid :UInt32 = 2;
  const maskGid :UInt32 = 4;
  const maskSize :UInt32 = 8;
  const maskAtime :UInt32 = 16;
  const maskMtime :UInt32 = 32;
  const maskAtimeNow :UInt32 = 64;
  const maskMtimeNow :UInt32 = 128;
  const maskCtime :UInt32 = 256;
  const maskBlocks :UInt32 = 512;
  # Where the file's data is, from its fileWrite holder: inline
  # (dataInline, inlineData: the bytes, at most 64 KiB) or in its data
  # objects (dataInline false: sent only after the client wrote every
  # byte to them). A file whose data is in objects never becomes inline
  # again (-EINVAL): the MDS would lose track of its objects.
  const maskInline :UInt32 = 1024;
  # Clear S_ISUID, and S_ISGID if the group may execute or the caller is
  # not in the file's group (what Linux does to a file written or
  # truncated by someone without CAP_FSETID): applied after the mode, and
  # allowed to anyone the rest of the request allows (a writer need not
  # own the file).
  const maskKillSuidgid :UInt32 = 2048;
  mask @0 :UInt32;
  mode @1 :UInt32;
  uid @2 :UInt32;
  gid @3 :UInt32;
  size @4 :UInt64;
  atime @5 :Timespec;
  mtime @6 :Timespec;
  ctime @7 :Timespec;
  blocks @8 :UInt64;
  dataInline @9 :Bool;
  inlineData @10 :Data;
}

struct Caller {
  uid @0 :UInt32;
  gid @1 :UInt32;
  groups @2 :List(UInt32);
  pid @3 :UInt32;
}

struct LockRange {
  # fcntl (POSIX) or flock (whole file) locks, owned by `owner` (the
  # client's lock owner from FUSE, unique within the session).
  kind @0 :LockKind;
  type @1 :LockType;
  start @2 :UInt64;
  length @3 :UInt64;          # 0: to the end of file (and beyond)
  owner @4 :UInt64;
  pid @5 :UInt32;
}

enum LockKind {
  posix @0;
  flock @1;
}

enum LockType {
  read @0;
  write @1;
  unlock @2;
}

struct Request {
  tid @0 :UInt64;             # per session, increasing; a replayed request keeps its tid
  caller @1 :Caller;
  replay @2 :Bool;            # resent after a failover: the MDS answers from its completed table if it has it
  union {
    lookup @3 :Lookup;
    getattr @4 :Getattr;
    setattr @5 :SetattrReq;
    create @6 :Create;        # regular files, fifos, sockets, devices (mknod) and mkdir, symlink
    link @7 :Link;
    unlink @8 :Unlink;        # unlink and rmdir
    rename @9 :Rename;
    readdir @10 :Readdir;
    setxattr @11 :SetXattr;
    removexattr @12 :RemoveXattr;
    open @13 :Open;           # asks for a file lease (read or write) and checks access
    statfs @14 :Statfs;
    setlock @15 :SetLock;
    getlock @16 :GetLock;
    fsync @17 :Fsync;         # waits until every earlier request of the session is safe
    lookupIno @18 :LookupIno; # by inode number (NFS-style handles, hard links)
    renewLeases @19 :RenewLeases;
  }
  # A request the client already answered (asynchronous, in a Batch)
  # carries the time it told the application: the MDS stamps what the
  # request changes (a new inode's times, the parents' mtime and ctime,
  # a changed inode's ctime) with it instead of its own clock, so that
  # the attributes the client showed are the ones that stay. Unset (sec
  # and nsec 0): the MDS's clock.
  time @20 :Timespec;
}

struct Lookup {
  parent @0 :UInt64;
  name @1 :Data;              # any bytes but '/' and NUL, at most 255
}
struct Getattr {
  ino @0 :UInt64;
}
struct SetattrReq {
  ino @0 :UInt64;
  attr @1 :SetAttr;
}
struct Create {
  parent @0 :UInt64;
  name @1 :Data;
  type @2 :FileType;
  mode @3 :UInt32;
  rdev @4 :UInt32;
  symlinkTarget @5 :Text;
  exclusive @6 :Bool;         # O_EXCL (always for mkdir/mknod/symlink)
  ino @7 :UInt64;             # 0: the MDS picks; else from the client's delegated range
  layout @8 :Layout;          # objectSize 0: the directory's/fs default
  wantLease @9 :LeaseKind;    # e.g. fileWrite for a create-and-open
  umask @10 :UInt32;
  dataInline @11 :Bool;       # a regular file starts inline (empty): the client keeps it so
                              # while small (Welcome.inlineMax); ignored without supportsInline
  # Set (mask != 0): a setattr of the new inode by the same caller, applied
  # right after the create as if it had come next (exclusive creates only;
  # no "now" times; a size report and inline bytes as SetAttr has them;
  # Welcome.createThen says the MDS knows it).
  then @12 :SetAttr;
}
struct Link {
  ino @0 :UInt64;
  newParent @1 :UInt64;
  newName @2 :Data;
}
struct Unlink {
  parent @0 :UInt64;
  name @1 :Data;
  directory @2 :Bool;         # rmdir
  closed @3 :Bool;            # the caller has the file closed, its data written out and its
                              # size reported: the caller's file lease ends with the link, so
                              # the data can go at once instead of when the lease runs out
}
struct Rename {
  parent @0 :UInt64;
  name @1 :Data;
  newParent @2 :UInt64;
  newName @3 :Data;
  flags @4 :UInt32;           # RENAME_NOREPLACE (1), RENAME_EXCHANGE (2)
}
struct Readdir {
  ino @0 :UInt64;
  after @1 :Data;             # continue after this name; empty: from the start
  maxEntries @2 :UInt32;
}
struct SetXattr {
  ino @0 :UInt64;
  name @1 :Text;
  value @2 :Data;
  flags @3 :UInt32;           # XATTR_CREATE (1), XATTR_REPLACE (2)
}
struct RemoveXattr {
  ino @0 :UInt64;
  name @1 :Text;
}
struct Open {
  ino @0 :UInt64;
  flags @1 :UInt32;           # open(2) flags (O_ACCMODE, O_TRUNC...)
  wantLease @2 :LeaseKind;
}
struct Statfs {
  ino @0 :UInt64;
}
struct SetLock {
  ino @0 :UInt64;
  lock @1 :LockRange;
  wait @2 :Bool;              # F_SETLKW / LOCK_EX without LOCK_NB: reply EAGAIN-free later via LockGranted
}
struct GetLock {
  ino @0 :UInt64;
  lock @1 :LockRange;
}
struct Fsync {
  ino @0 :UInt64;             # 0: the whole session (syncfs)
}
struct LookupIno {
  ino @0 :UInt64;
}
struct RenewLeases {
  inos @0 :List(UInt64);
}

# ---------------------------------------------------------------------------
# Replies. The MDS answers each request twice at most: an `unsafe` reply as
# soon as the change is applied in its memory (the client may return to the
# application), then `safe` once it is in the journal (durable). A request
# that changes nothing (lookup, getattr, readdir...) gets one reply with
# safe set. The client keeps every request without a safe reply and replays
# it after a failover.

struct Dentry {
  name @0 :Data;
  inode @1 :Inode;
  lease @2 :Lease;            # the inode's own lease, if granted
}

struct Reply {
  tid @0 :UInt64;
  result @1 :Int32;           # 0 or -errno
  safe @2 :Bool;
  unsafe @3 :Bool;
  message @4 :Text;           # context for errors
  nowMs @5 :UInt64;
  # What the request produced, per kind: the looked-up/created inode; the
  # changed inode(s); a readdir's entries. Leases granted with them.
  inode @6 :Inode;
  parent @7 :Inode;           # the parent directory after the change (mtime, nlink)
  otherParent @8 :Inode;      # rename: the other directory
  entries @9 :List(Dentry);   # readdir
  end @10 :Bool;              # readdir: no more entries
  leases @11 :List(Lease);
  statfs @12 :StatfsResult;
  lock @13 :LockRange;        # getlock: the conflicting lock (type unlock: none)
  replaced @14 :Inode;        # rename/unlink: the inode whose link went away (its nlink after)
  delegated @15 :InoRange;    # a fresh range, when the client's is running low
  # The cluster is full: the MDS refuses with ENOSPC what would take space
  # (new entries, links, xattrs, growing inline data) until it clears, so
  # a client decides such changes synchronously meanwhile.
  clusterFull @16 :Bool;
}

struct StatfsResult {
  totalBytes @0 :UInt64;
  freeBytes @1 :UInt64;
  availBytes @2 :UInt64;
  files @3 :UInt64;
  filesFree @4 :UInt64;
  nameMax @5 :UInt32 = 255;
  blockSize @6 :UInt32 = 4096;
}

# ---------------------------------------------------------------------------
# Lease revocation

struct Revoke {
  leases @0 :List(Lease);     # ino + kind + seq to give up (or downgrade to `kind` in downgradeTo)
  downgradeTo @1 :LeaseKind;  # none: give up entirely
}

struct Release {
  leases @0 :List(Lease);     # the leases given up (ino + seq)
  # For fileWrite leases: the attributes the client changed locally
  # (size, mtime, ctime, blocks), applied by the MDS before the release.
  flushed @1 :List(FlushedAttr);
}

struct FlushedAttr {
  ino @0 :UInt64;
  attr @1 :SetAttr;
}

# ---------------------------------------------------------------------------
# Asynchronous metadata: requests the client already answered locally
# (inside a dirWrite lease, with delegated inode numbers), sent in order.
# The MDS applies them in order exactly as if each had come as a Request
# (same dedup by tid, same queueing behind a waiting request) and answers
# each with an ordinary Reply (msgReply): a request that changes something
# gets no unsafe reply, only its safe one once durable; one that fails or
# changes nothing gets its Reply (safe) at once. At most 4096 requests per
# Batch (beyond: every request fails with -E2BIG); a request the MDS cannot
# decode fails with -EBADMSG.
#
# The MDS may hold a change a few milliseconds (mds_journal_delay_ms) so
# that others share its journal write. A client that waits for changes to
# be safe (fsync, syncfs, a lease it is giving back, unmount) sets `urgent`:
# everything it sent before, and the requests of this Batch, are journaled
# at once. A Batch may hold no requests and only say `urgent`.

struct Batch {
  requests @0 :List(Request);
  urgent @1 :Bool;
}

# Reserved, never sent: the replies to a Batch are Replies (see Batch).
struct BatchReply {
  replies @0 :List(Reply);
}

struct LockGranted {
  ino @0 :UInt64;
  lock @1 :LockRange;
  tid @2 :UInt64;             # the SetLock request that waited
}

struct Goodbye {
  reason @0 :Text;
}
