// The line protocol: one request per line, one reply line per request.
//
//   PUT <name> <value>   stores <value> (the rest of the line, may be empty)
//                        as object <name>'s data -> "OK <object version>"
//   GET <name>           -> "VALUE <length> <value>"
//   DEL <name>           -> "OK"
//   QUIT                 -> "BYE", then the server closes the connection
//
// A failure answers "ERR <errno name> <message>". Names are 1..255 bytes of
// printable ASCII without spaces. Pure functions: no I/O here.
#pragma once

#include <string>

namespace lines {

enum class Command { kPut, kGet, kDel, kQuit, kInvalid };

struct Request {
  Command command = Command::kInvalid;
  std::string name;
  std::string value;
  std::string error;  // why the line is kInvalid
};

// Parses one line (without its '\n'; a trailing '\r' is dropped).
Request parse_request(const std::string &line);

// "ERR ENOENT object 'x' not found" from a negative errno and a message.
std::string error_reply(int negative_errno, const std::string &message);

// "VALUE 5 hello".
std::string value_reply(const std::string &value);

const char *command_name(Command c);  // "put", "get", ... (metric labels)

}  // namespace lines
