#include "msg/keyring.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "msg/base64.h"

namespace strata::msg {

namespace {

constexpr std::size_t kMinSecretBytes = 16;

std::string trim(const std::string &s) {
  std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool valid_entity(const std::string &e) {
  if (e.empty()) return false;
  for (char c : e)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_' || c == '-'))
      return false;
  return true;
}

Status write_all(int fd, const std::string &data, const std::string &path) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Error(errno, "writing keyring " + path + ": " + std::strerror(errno));
    }
    off += static_cast<std::size_t>(n);
  }
  return Status::OK();
}

}  // namespace

Result<Keyring> Keyring::load_file(const std::string &path) {
  std::ifstream in(path);
  if (!in) {
    int err = errno ? errno : ENOENT;
    return Status::Error(err, "reading keyring " + path + ": " + std::strerror(err));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Error(EIO, "reading keyring " + path + ": read error");
  return parse(ss.str(), path);
}

Result<Keyring> Keyring::parse(const std::string &text, const std::string &source_name) {
  Keyring kr;
  std::string section;        // current entity
  int section_line = 0;
  bool section_has_key = true;  // nothing open yet
  auto where = [&](int line) { return source_name + ":" + std::to_string(line) + ": "; };
  std::istringstream in(text);
  std::string raw;
  int lineno = 0;
  while (std::getline(in, raw)) {
    ++lineno;
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']')
        return Status::Error(EINVAL, where(lineno) + "section header without closing ']'");
      if (!section_has_key)
        return Status::Error(EINVAL, where(section_line) + "[" + section + "] has no key");
      section = trim(line.substr(1, line.size() - 2));
      if (!valid_entity(section))
        return Status::Error(EINVAL, where(lineno) + "bad entity name '" + section + "'");
      if (kr.keys_.count(section))
        return Status::Error(EINVAL, where(lineno) + "entity " + section + " appears twice");
      section_line = lineno;
      section_has_key = false;
      continue;
    }
    std::size_t eq = line.find('=');
    if (eq == std::string::npos)
      return Status::Error(EINVAL, where(lineno) + "expected 'key = <base64>', got '" + line + "'");
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (section.empty())
      return Status::Error(EINVAL, where(lineno) + "'" + key + "' outside any [entity] section");
    if (key != "key")
      return Status::Error(EINVAL, where(lineno) + "unknown setting '" + key + "' in [" +
                                       section + "] (only 'key' is allowed)");
    if (section_has_key)
      return Status::Error(EINVAL, where(lineno) + "second key for " + section);
    auto secret = base64_decode(value);
    if (!secret)
      return Status::Error(EINVAL, where(lineno) + "key of " + section + " is not valid base64");
    if (secret->size() < kMinSecretBytes)
      return Status::Error(EINVAL, where(lineno) + "key of " + section + " is " +
                                       std::to_string(secret->size()) + " bytes; at least " +
                                       std::to_string(kMinSecretBytes) + " are required");
    kr.keys_[section] = std::move(*secret);
    section_has_key = true;
  }
  if (!section_has_key)
    return Status::Error(EINVAL, where(section_line) + "[" + section + "] has no key");
  return kr;
}

std::optional<std::string> Keyring::secret(const std::string &entity) const {
  auto it = keys_.find(entity);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

void Keyring::set(const std::string &entity, std::string secret) {
  keys_[entity] = std::move(secret);
}

std::string Keyring::to_text() const {
  std::string out;
  for (const auto &[entity, secret] : keys_) {
    out += "[" + entity + "]\n";
    out += "key = " + base64_encode(secret) + "\n";
  }
  return out;
}

Status Keyring::write_file(const std::string &path) const {
  // Write a temporary file with mode 0600 and rename it over `path`, so a
  // reader never sees half a keyring and the secrets are never world-readable.
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Error(errno, "creating keyring " + tmp + ": " + std::strerror(errno));
  Status s = write_all(fd, to_text(), tmp);
  if (s.ok() && ::fchmod(fd, 0600) != 0)
    s = Status::Error(errno, "chmod 0600 " + tmp + ": " + std::strerror(errno));
  if (s.ok() && ::fsync(fd) != 0)
    s = Status::Error(errno, "syncing keyring " + tmp + ": " + std::strerror(errno));
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    s = Status::Error(errno, "renaming " + tmp + " to " + path + ": " + std::strerror(errno));
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

std::string Keyring::generate_secret() {
  std::string out(32, '\0');
  std::size_t off = 0;
  while (off < out.size()) {
    ssize_t n = ::getrandom(out.data() + off, out.size() - off, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // Only a kernel without getrandom(2) gets here. There is no way to
      // report an error from this signature, and a weak key is worse than
      // stopping.
      std::fprintf(stderr, "strata: getrandom failed: %s\n", std::strerror(errno));
      std::abort();
    }
    off += static_cast<std::size_t>(n);
  }
  return out;
}

}  // namespace strata::msg
