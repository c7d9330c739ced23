#include "inode_attr.h"

#include <cstring>
#include <ctime>

namespace strata::fuse {

Time time_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return Time{int64_t(ts.tv_sec), uint32_t(ts.tv_nsec)};
}

uint32_t without_set_ids(uint32_t mode) {
  mode &= ~uint32_t(S_ISUID);
  if (mode & S_IXGRP) mode &= ~uint32_t(S_ISGID);
  return mode;
}

uint32_t type_bits(FileType t) {
  switch (t) {
    case FileType::kRegular:
      return S_IFREG;
    case FileType::kDirectory:
      return S_IFDIR;
    case FileType::kSymlink:
      return S_IFLNK;
    case FileType::kFifo:
      return S_IFIFO;
    case FileType::kSocket:
      return S_IFSOCK;
    case FileType::kCharDevice:
      return S_IFCHR;
    case FileType::kBlockDevice:
      return S_IFBLK;
    default:
      return 0;
  }
}

FileType type_of_mode(uint32_t st_mode) {
  switch (st_mode & S_IFMT) {
    case S_IFREG:
      return FileType::kRegular;
    case S_IFDIR:
      return FileType::kDirectory;
    case S_IFLNK:
      return FileType::kSymlink;
    case S_IFIFO:
      return FileType::kFifo;
    case S_IFSOCK:
      return FileType::kSocket;
    case S_IFCHR:
      return FileType::kCharDevice;
    case S_IFBLK:
      return FileType::kBlockDevice;
    default:
      return FileType::kUnknown;
  }
}

struct stat to_stat(const InodeAttr &a) {
  struct stat st;
  std::memset(&st, 0, sizeof st);
  st.st_ino = a.ino;
  st.st_mode = type_bits(a.type) | (a.mode & 07777);
  st.st_nlink = a.nlink;
  st.st_uid = a.uid;
  st.st_gid = a.gid;
  st.st_rdev = a.rdev;
  st.st_size = off_t(a.size);
  st.st_blocks = blkcnt_t(a.blocks);
  st.st_blksize = blksize_t(a.object_size ? a.object_size : 4096);
  st.st_atim = {a.atime.sec, long(a.atime.nsec)};
  st.st_mtim = {a.mtime.sec, long(a.mtime.nsec)};
  st.st_ctim = {a.ctime.sec, long(a.ctime.nsec)};
  return st;
}

}  // namespace strata::fuse
