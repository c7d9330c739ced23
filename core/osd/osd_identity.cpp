#include "osd/osd_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace strata::osd {

namespace {

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

Status fsync_path(const std::string &path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Status::Error(errno, "open " + path + ": " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Status::Error(err, "fsync " + path + ": " + std::strerror(err));
  return Status::OK();
}

}  // namespace

Result<OsdIdentity> OsdIdentity::load(const std::string &store_dir) {
  std::string path = store_dir + "/" + kFileName;
  std::ifstream in(path);
  if (!in)
    return Status::Error(ENOENT, "no OSD identity file " + path +
                                     " (make the store with `strata osd --mkfs`)");
  OsdIdentity id;
  std::string line;
  bool have_id = false;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) return Status::Error(EUCLEAN, path + ": bad line '" + line + "'");
    std::string k = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
    if (k == "osd_id") {
      auto r = std::from_chars(v.data(), v.data() + v.size(), id.osd_id);
      if (r.ec != std::errc() || r.ptr != v.data() + v.size() || id.osd_id < 0)
        return Status::Error(EUCLEAN, path + ": bad osd_id '" + v + "'");
      have_id = true;
    } else if (k == "fsid") {
      id.cluster_fsid = v;
    }
  }
  if (!have_id) return Status::Error(EUCLEAN, path + ": no osd_id");
  return id;
}

Status OsdIdentity::save(const std::string &store_dir) const {
  std::string path = store_dir + "/" + kFileName, tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::Error(errno ? errno : EIO, "create " + tmp);
    out << "# written by strata osd --mkfs: the store belongs to this OSD of this cluster\n"
        << "osd_id = " << osd_id << "\n"
        << "fsid = " << cluster_fsid << "\n";
    out.flush();
    if (!out) return Status::Error(EIO, "write " + tmp);
  }
  if (Status st = fsync_path(tmp, O_RDONLY); !st.ok()) return st;
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::Error(errno, "rename " + tmp + ": " + std::strerror(errno));
  return fsync_path(store_dir, O_RDONLY | O_DIRECTORY);
}

Status OsdIdentity::check(int32_t id, const std::string &fsid, const std::string &store_dir) const {
  if (osd_id != id)
    return Status::Error(EINVAL, "store " + store_dir + " belongs to osd." +
                                     std::to_string(osd_id) + ", not osd." + std::to_string(id));
  if (!fsid.empty() && !cluster_fsid.empty() && fsid != cluster_fsid)
    return Status::Error(EINVAL, "store " + store_dir + " belongs to cluster " + cluster_fsid +
                                     ", not " + fsid);
  return Status::OK();
}

}  // namespace strata::osd
