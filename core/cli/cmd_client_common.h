// What the cluster commands of `strata` share (status, osd, pool, object,
// bench, pg, auth): the common options, a small argument list with flag
// extraction, output in plain text or JSON, and a connected session that
// goes through the public C API (strata/client.h) — the same library the
// frontends use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/output_format.h"
#include "common/status.h"
#include "strata/client.h"

namespace strata::cli {

// --conf/--config/-c F, --name/-n client.X, --keyring/-k F, --mon-addr A,
// --set key=value (repeatable), --format text|json|json-pretty,
// --timeout SECONDS (connecting, and each operation), --help/-h.
struct CommonOptions {
  std::string conf;
  std::string name;
  std::string keyring;
  std::string mon_addr;
  std::vector<std::string> sets;
  OutputFormat format = OutputFormat::kText;
  uint32_t timeout_ms = 10000;     // connecting
  uint32_t op_timeout_ms = 30000;  // one operation (client_op_timeout_ms)
  bool help = false;
};

// Arguments with flags taken out one by one; what remains is positional.
class ArgList {
 public:
  explicit ArgList(std::vector<std::string> args) : args_(std::move(args)) {}

  // Takes "--flag VALUE" or "--flag=VALUE" (or an alias); nullopt when
  // absent. A flag without its value is an error.
  Result<std::optional<std::string>> take(const std::string &flag, const std::string &alias = "");
  // Takes a boolean "--flag".
  bool take_flag(const std::string &flag, const std::string &alias = "");
  // What is left; an error names the first "--x" nobody took.
  Result<std::vector<std::string>> positional() const;

 private:
  std::vector<std::string> args_;
};

Result<CommonOptions> take_common_options(ArgList &args);
const char *common_options_help();

// "4K", "1M", "512" -> bytes; "10", "2.5s", "500ms" -> milliseconds.
Result<uint64_t> parse_bytes(const std::string &s);
Result<uint64_t> parse_duration_ms(const std::string &s);
// "1.2f" -> pool 1, seed 0x2f.
Result<std::pair<uint32_t, uint32_t>> parse_pgid(const std::string &s);

// A JSON string literal.
std::string json_quote(const std::string &s);

// A connected cluster handle, shut down on destruction.
class Session {
 public:
  static Result<std::unique_ptr<Session>> open(const CommonOptions &o);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  strata_cluster_t cluster() const { return cluster_; }
  // An ioctx for `pool`, owned by the session.
  Result<strata_ioctx_t> ioctx(const std::string &pool);

  // Runs a monitor command; prints its message (plain) or JSON. Exit code.
  int mon_command(const std::string &prefix,
                  const std::vector<std::pair<std::string, std::string>> &args,
                  OutputFormat f);

 private:
  Session() = default;
  strata_cluster_t cluster_ = nullptr;
  std::vector<std::pair<std::string, strata_ioctx_t>> ioctxs_;
};

// The failure of the last C API call in this thread as a Status.
Status api_error(int rc, const std::string &what);
// The same for an operation on object `oid`; a timeout also says what it
// was waiting for: the object's PG, the OSD serving it, the map epoch.
Status object_error(int rc, strata_ioctx_t io, const std::string &oid);
// Prints "strata <cmd>: <message>" and returns 1 (or 2 for usage errors).
int fail(const std::string &cmd, const Status &st);
int usage_error(const std::string &cmd, const std::string &msg, const char *usage);

}  // namespace strata::cli
