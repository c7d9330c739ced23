#include "common/failpoints.h"

#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace strata {

namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// The errno names a test is likely to inject.
int errno_by_name(const std::string &name) {
  static const std::map<std::string, int> kNames = {
      {"EIO", EIO},       {"ENOSPC", ENOSPC}, {"ENOENT", ENOENT},         {"EAGAIN", EAGAIN},
      {"EINVAL", EINVAL}, {"ENOMEM", ENOMEM}, {"ETIMEDOUT", ETIMEDOUT},   {"EROFS", EROFS},
      {"EACCES", EACCES}, {"EBUSY", EBUSY},   {"ECONNRESET", ECONNRESET}, {"EDQUOT", EDQUOT}};
  auto it = kNames.find(name);
  if (it != kNames.end()) return it->second;
  char *end = nullptr;
  long v = std::strtol(name.c_str(), &end, 10);
  return !name.empty() && *end == '\0' && v > 0 && v < 4096 ? int(v) : 0;
}

// Whether `text` is NAME(ARG); ARG (trimmed) goes to *arg.
bool call_arg(const std::string &text, const std::string &name, std::string *arg) {
  if (text.size() < name.size() + 2 || text.compare(0, name.size(), name) != 0 ||
      text[name.size()] != '(' || text.back() != ')')
    return false;
  *arg = trim(std::string_view(text).substr(name.size() + 1, text.size() - name.size() - 2));
  return true;
}

Result<FailPoints::Spec> parse_action(const std::string &text) {
  FailPoints::Spec spec;
  std::string action = text, arg;
  if (size_t star = text.rfind('*'); star != std::string::npos) {
    action = trim(std::string_view(text).substr(0, star));
    std::string n = trim(std::string_view(text).substr(star + 1));
    char *end = nullptr;
    unsigned long long v = std::strtoull(n.c_str(), &end, 10);
    if (n.empty() || *end != '\0' || v == 0)
      return Status::Error(EINVAL, "'" + text + "': the count after '*' must be a positive number");
    spec.count = v;
  }
  if (action == "kill") {
    spec.action = FailPoints::Action::kKill;
  } else if (call_arg(action, "error", &arg)) {
    spec.action = FailPoints::Action::kError;
    spec.error = errno_by_name(arg);
    if (spec.error == 0)
      return Status::Error(EINVAL, "'" + text + "': error(" + arg +
                                       ") names no errno (EIO, ENOSPC, ... or a number)");
  } else if (call_arg(action, "pause", &arg)) {
    spec.action = FailPoints::Action::kPause;
    char *end = nullptr;
    spec.pause_ms = std::strtoull(arg.c_str(), &end, 10);
    if (arg.empty() || *end != '\0')
      return Status::Error(EINVAL, "'" + text + "': pause takes milliseconds, e.g. pause(200)");
  } else {
    return Status::Error(EINVAL, "'" + text + "': unknown action (error(E), kill or pause(MS))");
  }
  return spec;
}

std::string join(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

Result<std::vector<std::pair<std::string, FailPoints::Spec>>> FailPoints::parse(
    const std::string &text, const std::vector<std::string> &known) {
  std::vector<std::pair<std::string, Spec>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string entry = trim(std::string_view(text).substr(start, comma - start));
    start = comma + 1;
    if (entry.empty()) continue;
    size_t eq = entry.find('=');
    if (eq == std::string::npos)
      return Status::Error(EINVAL, "failpoint '" + entry + "': expected NAME[@SUBJECT]=ACTION");
    std::string name = trim(std::string_view(entry).substr(0, eq)), subject;
    if (size_t at = name.find('@'); at != std::string::npos) {
      subject = trim(std::string_view(name).substr(at + 1));
      name = trim(std::string_view(name).substr(0, at));
    }
    bool is_known = false;
    for (const std::string &k : known) is_known |= k == name;
    if (!is_known)
      return Status::Error(
          EINVAL, "unknown failpoint '" + name + "' (this program has: " + join(known) + ")");
    auto spec = parse_action(trim(std::string_view(entry).substr(eq + 1)));
    if (!spec.ok()) return spec.status().Context("failpoint " + name);
    spec->subject = subject;
    out.emplace_back(name, *spec);
  }
  return out;
}

Status FailPoints::arm_from(const std::string &text, const std::vector<std::string> &known) {
  auto specs = parse(text, known);
  if (!specs.ok()) return specs.status();
  for (auto &[name, spec] : *specs) arm(name, spec);
  return Status::OK();
}

void FailPoints::arm(const std::string &name, Spec spec) {
  std::lock_guard lk(mu_);
  Point &p = points_[name];
  if (!p.armed) armed_.fetch_add(1, std::memory_order_relaxed);
  p.spec = std::move(spec);
  p.armed = true;
}

void FailPoints::disarm(const std::string &name) {
  std::lock_guard lk(mu_);
  auto it = points_.find(name);
  if (it == points_.end() || !it->second.armed) return;
  it->second.armed = false;
  armed_.fetch_sub(1, std::memory_order_relaxed);
}

void FailPoints::set_announce(std::function<void(const std::string &)> announce) {
  std::lock_guard lk(mu_);
  announce_ = std::move(announce);
}

uint64_t FailPoints::fired(std::string_view name) const {
  std::lock_guard lk(mu_);
  auto it = points_.find(name);
  return it == points_.end() ? 0 : it->second.fired;
}

int FailPoints::hit_armed(std::string_view name, std::string_view subject) {
  Spec spec;
  std::string line;
  {
    std::lock_guard lk(mu_);
    auto it = points_.find(name);
    if (it == points_.end() || !it->second.armed) return 0;
    Point &p = it->second;
    if (!p.spec.subject.empty() && p.spec.subject != subject) return 0;
    p.fired++;
    if (p.spec.count && p.fired >= p.spec.count) {
      p.armed = false;
      armed_.fetch_sub(1, std::memory_order_relaxed);
    }
    spec = p.spec;
    if (announce_) {
      line = "failpoint " + std::string(name) +
             (subject.empty() ? "" : " (" + std::string(subject) + ")") + " fires: ";
      switch (spec.action) {
        case Action::kError:
          line += "error " + std::to_string(spec.error);
          break;
        case Action::kKill:
          line += "kill -9";
          break;
        case Action::kPause:
          line += "pause " + std::to_string(spec.pause_ms) + " ms";
          break;
      }
      announce_(line);
    }
  }
  switch (spec.action) {
    case Action::kError:
      return -spec.error;
    case Action::kKill:
      ::kill(::getpid(), SIGKILL);
      ::pause();
      return 0;
    case Action::kPause:
      clock_.sleep_for(std::chrono::milliseconds(spec.pause_ms));
      return 0;
  }
  return 0;
}

}  // namespace strata
