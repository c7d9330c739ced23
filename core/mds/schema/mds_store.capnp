# The MDS's on-disk encoding in the metadata pool (docs/FILESYSTEM.md,
# "Objects of a filesystem" and "The metadata journal"). Decoded only by
# store_codec.cpp, which checks every read. Field numbers are forever:
# add fields, never renumber.
@0xc1eef13b16f3272d;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("strata::mds::disk");

struct Time {
  sec @0 :Int64;
  nsec @1 :UInt32;
}

struct Xattr {
  name @0 :Data;
  value @1 :Data;
}

struct Inode {
  ino @0 :UInt64;
  type @1 :UInt8;
  mode @2 :UInt32;
  uid @3 :UInt32;
  gid @4 :UInt32;
  nlink @5 :UInt32;
  size @6 :UInt64;
  blocks @7 :UInt64;
  atime @8 :Time;
  mtime @9 :Time;
  ctime @10 :Time;
  btime @11 :Time;
  rdev @12 :UInt32;
  symlinkTarget @13 :Data;
  objectSize @14 :UInt32;
  dataPool @15 :Int64;
  version @16 :UInt64;
  xattrs @17 :List(Xattr);
  dataInline @18 :Bool;       # the file's bytes are inlineData (zeros after it up to size)
  inlineData @19 :Data;
}

# The value of a name in a directory object (d.<ino>[.<frag>]).
struct Dentry {
  name @0 :Data;
  ino @1 :UInt64;
  type @2 :UInt8;
  remote @3 :Bool;
  hasInode @4 :Bool;   # primary dentries carry their inode inline
  inode @5 :Inode;
}

# The omap header of d.<ino>: the fragment table. A directory has
# 2^fragBits fragments; a name lives in fragment xxh64(name) & (2^bits - 1).
struct DirHeader {
  fragBits @0 :UInt8;
}

# The omap header of mds.fsmeta.
struct FsMeta {
  formatVersion @0 :UInt32;
  inoNext @1 :UInt64;
}

# The omap header of mds.journal.
struct JournalHead {
  headSegment @0 :UInt64;   # the first live segment
  headOffset @1 :UInt64;    # entries before it are applied
  tailSegment @2 :UInt64;   # the segment appends go to
  appliedSeq @3 :UInt64;    # the last applied entry's sequence number
}

struct Session {
  id @0 :UInt64;
  clientName @1 :Text;
  delegatedFirst @2 :UInt64;
  delegatedCount @3 :UInt64;
  committedTid @4 :UInt64;
}

struct Purge {
  ino @0 :UInt64;
  size @1 :UInt64;
  dataPool @2 :Int64;
  objectSize @3 :UInt32;
}

struct DentryChange {
  dir @0 :UInt64;
  name @1 :Data;
  hasDentry @2 :Bool;   # false: remove
  dentry @3 :Dentry;
}

struct InodeChange {
  ino @0 :UInt64;
  hasInode @1 :Bool;
  inode @2 :Inode;
}

struct SessionChange {
  id @0 :UInt64;
  hasSession @1 :Bool;
  session @2 :Session;
}

# A journal entry's payload.
struct MetaUpdate {
  dentries @0 :List(DentryChange);
  inodes @1 :List(InodeChange);
  hasInoNext @2 :Bool;
  inoNext @3 :UInt64;
  sessions @4 :List(SessionChange);
  purges @5 :List(Purge);
  removedDirs @6 :List(UInt64);   # directories whose d.<ino> objects go
  droppedBackPointers @7 :List(UInt64);  # inodes whose b.<shard> entries go
}
