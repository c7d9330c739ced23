#include "nbd_device_picker.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <vector>

namespace strata::rbd {

namespace {

// N for "nbdN", or -1.
long nbd_index(const std::string &name) {
  if (name.size() < 4 || name.compare(0, 3, "nbd") != 0 || name.size() > 12) return -1;
  for (size_t i = 3; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return -1;
  return std::strtol(name.c_str() + 3, nullptr, 10);
}

// The indices of the nbdN entries of `dir`, ascending.
std::vector<long> nbd_indices(const std::string &dir) {
  std::vector<long> out;
  DIR *d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent *e = ::readdir(d)) {
    long n = nbd_index(e->d_name);
    if (n >= 0) out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool exists(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string nbd_device_name(const std::string &device) {
  std::string base = device.substr(device.rfind('/') + 1);
  return nbd_index(base) >= 0 ? base : "";
}

bool kernel_nbd_present(const std::string &dev_root) { return !nbd_indices(dev_root).empty(); }

long nbd_device_owner(const std::string &device, const std::string &sysfs_root) {
  std::string name = nbd_device_name(device);
  if (name.empty()) return -EINVAL;
  std::string dir = sysfs_root + "/block/" + name;
  if (!exists(dir)) return -ENODEV;
  std::ifstream in(dir + "/pid");
  if (!in) return 0;
  long pid = 0;
  // A pid file that cannot be parsed still means "in use".
  return in >> pid && pid > 0 ? pid : LONG_MAX;
}

std::string pick_free_nbd_device(const std::string &sysfs_root, const std::string &dev_root,
                                 std::string *why) {
  std::vector<long> all = nbd_indices(sysfs_root + "/block");
  if (all.empty()) {
    *why = "no nbd device in " + sysfs_root + "/block (is the nbd module loaded? modprobe nbd)";
    return "";
  }
  for (long n : all) {
    std::string name = "nbd" + std::to_string(n);
    if (!exists(sysfs_root + "/block/" + name + "/pid")) return dev_root + "/" + name;
  }
  *why = "all " + std::to_string(all.size()) + " nbd devices in " + sysfs_root +
         "/block are in use (modprobe nbd nbds_max=N for more)";
  return "";
}

}  // namespace strata::rbd
