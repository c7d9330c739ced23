#include "store/store_meta.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

#include "common/config.h"

namespace strata::store {

namespace {

Status write_file_durably(const std::string &dir, const std::string &name,
                          const std::string &content) {
  std::string tmp = dir + "/." + name + ".tmp";
  std::string path = dir + "/" + name;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error(errno, "cannot create " + tmp);
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) &&
            ::fsync(fd) == 0;
  int err = errno;
  ::close(fd);
  if (!ok) return Status::Error(err, "cannot write " + tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Status::Error(errno, "cannot rename to " + path);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::OK();
}

}  // namespace

std::string new_fsid() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  char buf[40];
  uint64_t a = gen(), b = gen();
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffull));
  return buf;
}

std::string StoreMeta::journal_location(const std::string &dir) const {
  if (journal_path.empty() || journal_path[0] == '/') return journal_path;
  return dir + "/" + journal_path;
}

Result<StoreMeta> StoreMeta::load(const std::string &dir) {
  std::string path = dir + "/" + kFileName;
  auto cfg = Config::load_file(path);
  if (!cfg.ok())
    return Status::Error(ENOENT, "no Strata store in " + dir + " (" + path +
                                     " missing; run `strata store mkfs` first)");
  StoreMeta m;
  for (const Config::Entry &e : cfg->entries()) {
    if (e.section == "store") {
      if (e.key == "fsid") m.fsid = e.value;
      else if (e.key == "backend") m.backend = e.value;
      else if (e.key == "journal") m.journal = e.value;
      else if (e.key == "journal_path") m.journal_path = e.value;
      else if (e.key == "journal_size") m.journal_size = std::stoull(e.value);
      else return Status::Error(EINVAL, e.origin + ": unknown store key '" + e.key + "'");
    } else if (e.section == "store.backend") {
      m.backend_options.emplace_back(e.key, e.value);
    } else if (e.section == "store.journal") {
      m.journal_options.emplace_back(e.key, e.value);
    }
  }
  if (m.backend.empty() || m.journal.empty() || m.fsid.empty())
    return Status::Error(EINVAL, path + ": incomplete (needs fsid, backend, journal)");
  return m;
}

Status StoreMeta::save(const std::string &dir) const {
  std::ostringstream o;
  o << "# Strata object store identity. Written by `strata store mkfs` and\n"
       "# `strata store journal-swap`; do not edit while the store is open.\n"
    << "[store]\nfsid = " << fsid << "\nbackend = " << backend << "\njournal = " << journal
    << "\njournal_path = " << journal_path << "\njournal_size = " << journal_size << "\n";
  o << "\n[store.backend]\n";
  for (const auto &[k, v] : backend_options) o << k << " = " << v << "\n";
  o << "\n[store.journal]\n";
  for (const auto &[k, v] : journal_options) o << k << " = " << v << "\n";
  return write_file_durably(dir, kFileName, o.str());
}

}  // namespace strata::store
