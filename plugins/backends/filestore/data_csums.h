// Checksums of object data (checksum/block_checksums.h) in the filestore.
//
// The checksums of an object's blocks live in the metadata database, in
// groups of kGroupBlocks consecutive blocks per key (schema::csum_key): a
// 4 KiB overwrite rewrites one small value, a 4 MiB write a few dozen, and a
// read fetches one value per group it spans. A group whose blocks all hold
// zeros is not stored. Checksum changes go into the transaction's metadata
// batch, so they commit together with the index record of the same ops.
//
// Every read verifies the blocks it touches (FileStore::read). Writes that
// cover a block only in part read the block's current bytes and verify them
// first: a block that fails its checksum is never given a fresh checksum over
// its corrupt bytes; it gets a poisoned one (the complement), so that it keeps
// reading as EIO until it is rewritten whole (the write itself cannot fail: it
// was acknowledged when it was journaled). The exception is
// replay after a crash of a store whose replay is not exact (xfs): its data
// files then hold a mixture of applied writes that the replayed ops settle,
// each recomputing the checksums of the blocks it touches.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kvdb/kvdb.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::filestore {

inline constexpr uint64_t kGroupBlocks = 32;

// How a store keeps checksums; shared by the apply thread and readers.
struct CsumPolicy {
  uint64_t block = 0;     // 0: a store made before checksums, nothing verified
  uint32_t zero_crc = 0;  // checksum of a block of zeros
  // Whether a partial-block write verifies the bytes it keeps (false only
  // while replaying after a crash without exact replay).
  bool verify_old = true;
  std::atomic<uint64_t> *failures = nullptr;  // checksum mismatches seen
  const sdk::Logger *log = nullptr;           // where mismatches under writes are reported

  bool enabled() const { return block != 0; }
  void count_failure() const {
    if (failures) failures->fetch_add(1, std::memory_order_relaxed);
  }
};

// One object's block checksums as a transaction sees and changes them.
class CsumEditor {
 public:
  CsumEditor(kvdb::Transaction &meta, std::string_view coll, std::string_view oid,
             const CsumPolicy &policy);

  uint32_t get(uint64_t block);
  void set(uint64_t block, uint32_t crc);
  // Blocks at and past `first` hold zeros from now on.
  void clear_from(uint64_t first);
  // The object was made by this transaction: it has no stored checksums,
  // so nothing is looked up or cleared (clear_from would search the
  // database for keys that cannot exist).
  void assume_empty() { cleared_from_group_ = 0; }
  // Puts every changed group into the transaction.
  void flush();

 private:
  std::string &group(uint64_t index);

  kvdb::Transaction &meta_;
  std::string coll_, oid_;
  const CsumPolicy &policy_;
  std::map<uint64_t, std::string> groups_;  // loaded or changed groups
  std::map<uint64_t, bool> dirty_;
  uint64_t cleared_from_group_ = UINT64_MAX;  // groups >= this are absent
};

// The stored checksums of blocks [first, first + n) from committed metadata.
void load_csums(const kvdb::Database &db, std::string_view coll, std::string_view oid,
                const CsumPolicy &policy, uint64_t first, uint64_t n, uint32_t *out);

// The checksum changes of ops on one object's data file (fd, path), made
// before the file changes: partial blocks are read (and verified) while they
// still hold their old bytes. `what` names the object for messages.
class DataCsumUpdater {
 public:
  DataCsumUpdater(CsumEditor &editor, const CsumPolicy &policy, int fd, std::string path,
                  std::string what)
      : ed_(editor), p_(policy), fd_(fd), path_(std::move(path)), what_(std::move(what)) {}

  // [offset, offset + len) becomes `data` (nullptr: zeros) in an object of
  // old_size bytes.
  void write(uint64_t offset, const char *data, uint64_t len, uint64_t old_size);
  // The object is cut from old_size to new_size bytes (growing changes
  // nothing: the new bytes are zeros, as the padding was).
  void truncate(uint64_t old_size, uint64_t new_size);
  // The object's whole data becomes [data, data + len).
  void replace(const char *data, uint64_t len);
  // The object's whole data becomes `len` bytes whose block checksums are
  // `crcs` (computed when they were staged).
  void replace_with(const uint32_t *crcs, uint64_t len);
  // As replace, for an object made by this transaction (no old checksums).
  void fill_new(const char *data, uint64_t len);

 private:
  // Block `index`'s current bytes [0, valid) into buf (zeros after); false
  // (logged and counted) when they fail their stored checksum.
  bool read_block(uint64_t index, uint64_t valid, char *buf);

  CsumEditor &ed_;
  const CsumPolicy &p_;
  int fd_;
  std::string path_;
  std::string what_;
};

// Block checksums of `len` bytes of data.
std::vector<uint32_t> compute_csums(const char *data, uint64_t len, uint64_t block);

}  // namespace strata::filestore
