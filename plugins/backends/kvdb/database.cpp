// Engine selection by name, the Database factory and what both engines share.
#include <filesystem>
#include <system_error>

#include "kvdb/engines.h"
#include "kvdb/key_encoding.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::kvdb {

Engine engine_from_name(std::string_view name) {
  if (name == "rocksdb") return Engine::rocksdb;
  if (name == "leveldb") return Engine::leveldb;
  throw sdk::Error(EINVAL,
                   "unknown kv engine '" + std::string(name) + "' (expected rocksdb or leveldb)");
}

const char *engine_name(Engine e) { return e == Engine::rocksdb ? "rocksdb" : "leveldb"; }

std::unique_ptr<Database> Database::open(const std::string &path, const OpenOptions &options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Both engines keep a CURRENT file; checking it first gives a clear ENOENT
  // instead of each engine's own wording for "does not exist".
  if (!options.create_if_missing && !fs::exists(fs::path(path) / "CURRENT", ec))
    detail::throw_db_error(ENOENT, options.engine, path, "open", "no database here");
  if (options.create_if_missing) {
    fs::create_directories(path, ec);
    if (ec) detail::throw_db_error(EIO, options.engine, path, "create directory", ec.message());
  }
  return options.engine == Engine::rocksdb ? detail::open_rocksdb(path, options)
                                           : detail::open_leveldb(path, options);
}

uint64_t Database::disk_bytes() const {
  namespace fs = std::filesystem;
  std::error_code ec;
  uint64_t total = 0;
  // Files appear and vanish under compaction: skip what cannot be sized.
  for (fs::recursive_directory_iterator it(path(), ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      uintmax_t n = it->file_size(size_ec);
      if (!size_ec) total += n;
    }
  }
  return total;
}

namespace detail {

std::string printable_key(std::string_view key) {
  std::string out;
  keys::append_printable(out, key, 48);
  return out;
}

void throw_db_error(int code, Engine engine, const std::string &path, std::string_view what,
                    std::string_view detail, const std::string_view *key) {
  std::string msg = std::string(engine_name(engine)) + " " + path + ": " + std::string(what);
  if (key) msg += " key '" + printable_key(*key) + "'";
  msg += ": ";
  msg += detail;
  throw sdk::Error(code, std::move(msg));
}

}  // namespace detail
}  // namespace strata::kvdb
