// A transaction: ops on objects applied atomically by the store. Owns its
// bytes; `ops()` exposes them as the C strata_op array a backend receives.
// Serialised (encode/decode) into journal records.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "strata/objectstore.h"

namespace strata::store {

// Host-only op (in the range objectstore.h reserves for the host, never
// passed to a plugin): resolved into STRATA_OP_WRITE at the object's size
// before the transaction is journaled, so that replay is idempotent.
inline constexpr uint32_t kOpAppend = STRATA_OP_HOST_MIN;

class Transaction {
 public:
  Transaction() = default;
  Transaction(Transaction &&) = default;
  Transaction &operator=(Transaction &&) = default;
  Transaction(const Transaction &) = delete;

  Transaction &mkcoll(std::string_view c) { return add(STRATA_OP_MKCOLL, c, {}, {}, {}, 0, 0); }
  Transaction &rmcoll(std::string_view c) { return add(STRATA_OP_RMCOLL, c, {}, {}, {}, 0, 0); }
  Transaction &touch(std::string_view c, std::string_view o) {
    return add(STRATA_OP_TOUCH, c, o, {}, {}, 0, 0);
  }
  Transaction &write(std::string_view c, std::string_view o, uint64_t off, std::string_view d) {
    return add(STRATA_OP_WRITE, c, o, {}, d, off, d.size());
  }
  Transaction &write_full(std::string_view c, std::string_view o, std::string_view d) {
    return add(STRATA_OP_WRITE_FULL, c, o, {}, d, 0, d.size());
  }
  Transaction &append(std::string_view c, std::string_view o, std::string_view d) {
    return add(kOpAppend, c, o, {}, d, 0, d.size());
  }
  Transaction &truncate(std::string_view c, std::string_view o, uint64_t size) {
    return add(STRATA_OP_TRUNCATE, c, o, {}, {}, size, 0);
  }
  Transaction &zero(std::string_view c, std::string_view o, uint64_t off, uint64_t len) {
    return add(STRATA_OP_ZERO, c, o, {}, {}, off, len);
  }
  Transaction &remove(std::string_view c, std::string_view o) {
    return add(STRATA_OP_REMOVE, c, o, {}, {}, 0, 0);
  }
  Transaction &setxattr(std::string_view c, std::string_view o, std::string_view n,
                        std::string_view v) {
    return add(STRATA_OP_SETXATTR, c, o, n, v, 0, 0);
  }
  Transaction &rmxattr(std::string_view c, std::string_view o, std::string_view n) {
    return add(STRATA_OP_RMXATTR, c, o, n, {}, 0, 0);
  }
  Transaction &omap_set(std::string_view c, std::string_view o, std::string_view k,
                        std::string_view v) {
    return add(STRATA_OP_OMAP_SET, c, o, k, v, 0, 0);
  }
  Transaction &omap_rm(std::string_view c, std::string_view o, std::string_view k) {
    return add(STRATA_OP_OMAP_RM, c, o, k, {}, 0, 0);
  }
  Transaction &omap_clear(std::string_view c, std::string_view o) {
    return add(STRATA_OP_OMAP_CLEAR, c, o, {}, {}, 0, 0);
  }
  Transaction &omap_set_header(std::string_view c, std::string_view o, std::string_view v) {
    return add(STRATA_OP_OMAP_SET_HEADER, c, o, {}, v, 0, 0);
  }
  Transaction &omap_rm_range(std::string_view c, std::string_view o, std::string_view first,
                             std::string_view end) {
    return add(STRATA_OP_OMAP_RM_RANGE, c, o, first, end, 0, 0);
  }
  Transaction &clone(std::string_view c, std::string_view src, std::string_view dst) {
    return add(STRATA_OP_CLONE, c, src, {}, dst, 0, 0);
  }
  Transaction &write_staged(std::string_view c, std::string_view o, uint64_t stage_id,
                            uint64_t len) {
    return add(STRATA_OP_WRITE_STAGED, c, o, {}, {}, stage_id, len);
  }

  // Low-level: append any op (copies the bytes).
  Transaction &add(uint32_t type, std::string_view c, std::string_view o, std::string_view k,
                   std::string_view v, uint64_t offset, uint64_t length);

  size_t size() const { return ops_.size(); }
  bool empty() const { return ops_.empty(); }
  const std::vector<strata_op> &ops() const { return ops_; }
  std::vector<strata_op> &mutable_ops() { return ops_; }
  // Bytes of payload (values), for throttling and statistics.
  uint64_t data_bytes() const;

  // Journal record form. Format (little endian): u32 magic "STX1", u32 n_ops,
  // then per op: u32 type, u64 offset, u64 length, and u32-length-prefixed
  // collection, object, key, value.
  std::string encode() const;
  // encode().size(), without encoding.
  uint64_t encoded_size() const;
  static Result<Transaction> decode(std::string_view bytes);
  // The same, keeping `bytes` and pointing the ops into it instead of
  // copying every value (a replica's transaction arrives as one message
  // segment, megabytes for a large write). Values are then not 4 KiB
  // aligned: a backend staging one writes it through a bounce buffer.
  static Result<Transaction> decode_adopting(std::string &&bytes);

  // Values of at least this many bytes are kept 4 KiB-aligned (their
  // allocation rounded up to whole 4 KiB blocks, the padding zeroed), so
  // that a backend staging them can write them with O_DIRECT straight from
  // the transaction instead of copying them into a bounce buffer first.
  static constexpr size_t kAlignedValueMin = 64 * 1024;
  static constexpr size_t kValueAlignment = 4096;

 private:
  std::string_view keep(std::string_view s);
  // Appends an op over views that live as long as this transaction.
  void push_op(uint32_t type, std::string_view c, std::string_view o, std::string_view k,
               std::string_view v, uint64_t offset, uint64_t length);
  static Result<Transaction> decode_into(Transaction &t, std::string_view bytes, bool copy);
  std::deque<std::string> storage_;  // stable addresses for the slices
  std::vector<std::unique_ptr<char[]>> aligned_;  // large values, aligned inside
  std::vector<strata_op> ops_;
};

const char *op_name(uint32_t type);

}  // namespace strata::store
