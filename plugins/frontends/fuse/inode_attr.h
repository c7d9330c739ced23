// The attributes of one inode as the fuse client keeps them: a plain copy
// of fsproto::Inode (sdk/proto/fs.capnp) that outlives the message it came
// in, and its translation to struct stat for the kernel.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace strata::fuse {

// fsproto::FileType values (wire numbers).
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
};

// "Now" for a file's times, from the clock the kernel stamps them with
// (the coarse clock, one tick's granularity, as ext4 and XFS do). With
// the writeback cache the kernel keeps a file's mtime and ctime itself and
// compares them with its own now on every write: a create stamped from the
// fine clock never matches, so the first write dirties the inode and costs
// a setattr of the times at the next close, chown or chmod; stamped from
// the coarse clock, a write in the same tick leaves them be.
Time time_now();

struct InodeAttr {
  uint64_t ino = 0;
  FileType type = FileType::kUnknown;
  uint32_t mode = 0;  // permission bits only (& 07777)
  uint32_t uid = 0, gid = 0, nlink = 0, rdev = 0;
  uint64_t size = 0, blocks = 0, version = 0;
  Time atime, mtime, ctime, btime;
  std::string symlink_target;
  uint32_t object_size = 4u << 20;
  int64_t data_pool = -1;
  std::vector<std::pair<std::string, std::string>> xattrs;  // name -> value
  // The file's bytes when they are inline (fs.capnp Inode.dataInline):
  // these, then zeros up to size. Null: the data objects hold them.
  std::shared_ptr<const std::string> inline_data;
};

// S_IFREG, S_IFDIR... for a type; 0 for unknown.
uint32_t type_bits(FileType t);

// A file's permission bits after Linux drops its set-id bits (chown, or a
// write or truncate by someone without CAP_FSETID): S_ISUID always,
// S_ISGID only with group execute (without it, S_ISGID marks mandatory
// locking). As the MDS does it (SetAttr.maskKillSuidgid).
uint32_t without_set_ids(uint32_t mode);
// The type of st_mode's S_IFMT bits.
FileType type_of_mode(uint32_t st_mode);

// struct stat for the kernel (st_blksize: the object size, so that
// `cp` and friends write whole objects).
struct stat to_stat(const InodeAttr &a);

}  // namespace strata::fuse
