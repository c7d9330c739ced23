// Internal to strata_kvdb: the engine implementations behind Database::open
// and the error helpers they share. Not for users of kvdb.h.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kvdb/kvdb.h"

namespace strata::kvdb::detail {

std::unique_ptr<Database> open_rocksdb(const std::string &path, const OpenOptions &options);
std::unique_ptr<Database> open_leveldb(const std::string &path, const OpenOptions &options);

// A key made printable for error messages: printable ASCII kept, other bytes
// as \xNN, cut after a few dozen bytes.
std::string printable_key(std::string_view key);

// Throws strata::sdk::Error(code, "<engine> <path>: <what>[ key <key>]: <detail>").
[[noreturn]] void throw_db_error(int code, Engine engine, const std::string &path,
                                 std::string_view what, std::string_view detail,
                                 const std::string_view *key = nullptr);

}  // namespace strata::kvdb::detail
