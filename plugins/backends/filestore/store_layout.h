// Where things live in a filestore directory:
//
//   <root>/strata_filestore   marker written last by mkfs: backend, meta engine
//   <root>/lock               flock'ed while a process has the store open
//   <root>/stage/             staged-write files (outside any snapshot)
//   <live>/data/xx/...        object data files (data_files.h)
//   <live>/meta/              metadata database (meta_schema.h)
//
// <live> is <root> itself for xfs and the `current` subvolume for btrfs
// (Checkpointer::create_live_area / open_live_area).
#pragma once

#include <optional>
#include <string>

#include "filestore/posix_file.h"

namespace strata::filestore::layout {

std::string marker_path(const std::string &root);
std::string lock_path(const std::string &root);
std::string stage_dir(const std::string &root);
std::string data_dir(const std::string &live);
std::string meta_dir(const std::string &live);

// What mkfs records about a store.
struct Marker {
  std::string backend;      // "xfs", "btrfs"
  std::string meta_engine;  // "rocksdb", "leveldb"
};

// Takes an exclusive flock on lock_path(root), held while the returned
// descriptor is open. Throws Error(EBUSY) if another open store holds it
// (in this or another process): two instances would corrupt each other, and
// a btrfs open would delete the subvolume under the first.
UniqueFd lock_store(const std::string &root);

// Writes the marker durably and atomically (temporary file, fsync, rename,
// directory fsync).
void write_marker(const std::string &root, const Marker &marker);
// The marker, or nullopt when `root` holds no store. Throws Error(EUCLEAN)
// for a marker it cannot parse.
std::optional<Marker> read_marker(const std::string &root);

}  // namespace strata::filestore::layout
