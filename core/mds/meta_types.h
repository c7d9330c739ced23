// The metadata server's in-memory forms of inodes, dentries and journaled
// changes (docs/FILESYSTEM.md). Shared by the store (meta_store.h, which
// encodes them into objects and journal entries) and the server (which
// caches them and turns requests into MetaUpdates).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata::mds {

using Ino = uint64_t;
inline constexpr Ino kRootIno = 1;
inline constexpr Ino kStrayIno = 0x100;
// The first inode number handed to files and directories (below it:
// reserved for the root, the stray directory and future system inodes).
inline constexpr Ino kFirstUserIno = 0x1000;

// Same values as fsproto::FileType (sdk/proto/fs.capnp).
enum class FileType : uint8_t {
  kUnknown = 0,
  kRegular = 1,
  kDirectory = 2,
  kSymlink = 3,
  kFifo = 4,
  kSocket = 5,
  kCharDevice = 6,
  kBlockDevice = 7,
};

struct Time {
  int64_t sec = 0;
  uint32_t nsec = 0;
  bool operator==(const Time &) const = default;
};

struct InodeRec {
  Ino ino = 0;
  FileType type = FileType::kUnknown;
  uint32_t mode = 0;  // permission bits and suid/sgid/sticky (& 07777)
  uint32_t uid = 0, gid = 0;
  uint32_t nlink = 1;
  uint64_t size = 0;
  uint64_t blocks = 0;  // 512-byte units, as the client reported
  Time atime, mtime, ctime, btime;
  uint32_t rdev = 0;
  std::string symlink_target;
  uint32_t object_size = 4u << 20;
  int64_t data_pool = -1;
  uint64_t version = 0;
  std::map<std::string, std::string> xattrs;
  // Inline data (fs.capnp Inode.dataInline): the file's bytes are
  // inline_data, then zeros up to size; its data objects do not matter.
  bool data_inline = false;
  std::string inline_data;
  bool operator==(const InodeRec &) const = default;
};

// The most inline data an inode may carry, whatever mds_inline_data_max
// says (a dentry is one omap value; a readdir page carries many).
inline constexpr uint64_t kInlineDataHardMax = 64u << 10;

// Roughly what a directory entry weighs in a readdir reply: readdir pages
// and the pages the MDS reads from a directory's objects stop near 1 MiB by
// it (inline data, symlink targets and xattrs make entries big).
inline size_t listing_entry_bytes(const std::string &name, const InodeRec &inode) {
  size_t n = 256 + name.size() + inode.inline_data.size() + inode.symlink_target.size();
  for (const auto &[k, v] : inode.xattrs) n += 32 + k.size() + v.size();
  return n;
}

// One name in a directory. A primary dentry holds its inode inline; a
// remote one (hard links) names an inode kept in the inode table (i.<ino>).
struct DentryRec {
  std::string name;
  Ino ino = 0;
  FileType type = FileType::kUnknown;
  bool remote = false;
  std::optional<InodeRec> inode;  // set for primary dentries
  bool operator==(const DentryRec &) const = default;
};

// A change of one directory entry: set (create, replace) or remove.
struct DentryChange {
  Ino dir = 0;
  std::string name;
  std::optional<DentryRec> dentry;  // nullopt: remove
};

// A change of one inode-table entry (hard-linked inodes and the root).
struct InodeChange {
  Ino ino = 0;
  std::optional<InodeRec> inode;  // nullopt: remove
};

// A client session's durable record.
struct SessionRec {
  uint64_t id = 0;
  std::string client_name;
  Ino delegated_first = 0;
  uint64_t delegated_count = 0;
  uint64_t committed_tid = 0;  // every request up to this tid is applied
  bool operator==(const SessionRec &) const = default;
};

struct SessionChange {
  uint64_t id = 0;
  std::optional<SessionRec> session;  // nullopt: the session ended
};

// A file whose data objects the MDS deletes in the background.
struct PurgeRec {
  Ino ino = 0;
  uint64_t size = 0;
  int64_t data_pool = -1;
  uint32_t object_size = 4u << 20;
};

// Everything one journal entry records: the MDS's changes for one request
// (or one batch), applied atomically on replay.
struct MetaUpdate {
  std::vector<DentryChange> dentries;
  std::vector<InodeChange> inodes;
  std::optional<Ino> ino_next;  // the allocator's new high-water mark
  std::vector<SessionChange> sessions;
  std::vector<PurgeRec> purges;
  // Directories that went away (rmdir, rename over one): the store removes
  // their fragment objects once the dentry removal is applied.
  std::vector<Ino> removed_dirs;
  // Inodes no primary dentry names any more (gone, or moved to the inode
  // table by a hard link): their back-pointers go, or the shards would grow
  // with every file ever created.
  std::vector<Ino> dropped_back_pointers;
  bool empty() const {
    return dentries.empty() && inodes.empty() && !ino_next && sessions.empty() && purges.empty() &&
           removed_dirs.empty() && dropped_back_pointers.empty();
  }
};

}  // namespace strata::mds
