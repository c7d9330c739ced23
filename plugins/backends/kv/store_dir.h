// The files of a kv store directory:
//   <path>/kv_engine   which engine made the database ("rocksdb\n"), written
//                      last by mkfs, so its presence means mkfs completed
//   <path>/db/         the database
#pragma once

#include <optional>
#include <string>

#include "kvdb/kvdb.h"

namespace strata::kv {

std::string database_dir(const std::string &store_path);

// The engine recorded by mkfs, or nullopt if there is no marker.
// Throws Error(EUCLEAN) if the marker names no known engine.
std::optional<kvdb::Engine> read_engine_marker(const std::string &store_path);

// Writes the marker durably (temp file, fsync, rename, fsync of the directory).
void write_engine_marker(const std::string &store_path, kvdb::Engine engine);

}  // namespace strata::kv
