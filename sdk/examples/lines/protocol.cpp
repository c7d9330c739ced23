#include "protocol.h"

#include <cerrno>
#include <cstring>

namespace lines {

namespace {

bool valid_name(const std::string &name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name)
    if (c <= ' ' || c > '~') return false;
  return true;
}

}  // namespace

Request parse_request(const std::string &raw) {
  std::string line = raw;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  Request r;
  size_t sp = line.find(' ');
  std::string verb = line.substr(0, sp);
  std::string rest = sp == std::string::npos ? "" : line.substr(sp + 1);
  if (verb == "QUIT") {
    r.command = rest.empty() ? Command::kQuit : Command::kInvalid;
    if (!rest.empty()) r.error = "QUIT takes no argument";
    return r;
  }
  Command c = verb == "PUT"   ? Command::kPut
              : verb == "GET" ? Command::kGet
              : verb == "DEL" ? Command::kDel
                              : Command::kInvalid;
  if (c == Command::kInvalid) {
    r.error = "unknown command '" + verb + "' (PUT, GET, DEL, QUIT)";
    return r;
  }
  size_t name_end = c == Command::kPut ? rest.find(' ') : std::string::npos;
  r.name = rest.substr(0, name_end);
  if (name_end != std::string::npos) r.value = rest.substr(name_end + 1);
  if (!valid_name(r.name)) {
    r.error = verb + " needs a name of 1..255 printable characters without spaces";
    return r;
  }
  r.command = c;
  return r;
}

std::string error_reply(int negative_errno, const std::string &message) {
  const char *name = strerrorname_np(-negative_errno);
  return std::string("ERR ") + (name ? name : "EIO") + " " + message;
}

std::string value_reply(const std::string &value) {
  return "VALUE " + std::to_string(value.size()) + " " + value;
}

const char *command_name(Command c) {
  switch (c) {
    case Command::kPut:
      return "put";
    case Command::kGet:
      return "get";
    case Command::kDel:
      return "del";
    case Command::kQuit:
      return "quit";
    default:
      return "invalid";
  }
}

}  // namespace lines
