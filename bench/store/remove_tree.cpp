#include "bench/store/remove_tree.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "bench/store/fs_info.h"
#include "common/subprocess.h"

namespace strata::store_bench {

namespace {

namespace fs = std::filesystem;

// A btrfs subvolume's root directory always has inode number 256.
constexpr ino_t kBtrfsSubvolumeRootIno = 256;

bool is_subvolume_root(const fs::path &p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_ino == kBtrfsSubvolumeRootIno;
}

// Subvolumes strictly below `dir`, deepest first.
std::vector<fs::path> subvolumes_below(const fs::path &dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec) && is_subvolume_root(it->path()))
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end(), [](const fs::path &a, const fs::path &b) {
    return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
  });
  return out;
}

}  // namespace

Status remove_tree(const std::string &dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!ec) return Status::OK();
  if (fs_type(dir) != "btrfs")
    return Status::Error(ec.value(), "removing " + dir + ": " + ec.message());
  // A read-only snapshot refuses unlink inside it (EROFS); deleting the
  // subvolume as a whole is the way out.
  std::string btrfs = find_program("btrfs");
  if (btrfs.empty())
    return Status::Error(ec.value(), "removing " + dir + ": " + ec.message() +
                                         " (btrfs subvolumes inside; install btrfs-progs)");
  for (const fs::path &sv : subvolumes_below(dir)) {
    auto out = run_process({btrfs, "subvolume", "delete", sv.string()});
    if (!out.ok()) return out.status().Context("deleting subvolume " + sv.string());
    if (out->exit_code != 0)
      return Status::Error(EIO, "btrfs subvolume delete " + sv.string() + ": " + out->err);
  }
  fs::remove_all(dir, ec);
  if (ec) return Status::Error(ec.value(), "removing " + dir + ": " + ec.message());
  return Status::OK();
}

}  // namespace strata::store_bench
