// Builds the ops of one strata_txn, owning the bytes their slices point to.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "strata/objectstore.h"

namespace strata::test {

class TxnBuilder {
 public:
  TxnBuilder &mkcoll(std::string_view c) { return add(STRATA_OP_MKCOLL, c, {}); }
  TxnBuilder &rmcoll(std::string_view c) { return add(STRATA_OP_RMCOLL, c, {}); }
  TxnBuilder &touch(std::string_view c, std::string_view o) { return add(STRATA_OP_TOUCH, c, o); }
  TxnBuilder &write(std::string_view c, std::string_view o, uint64_t off, std::string_view data) {
    return add(STRATA_OP_WRITE, c, o, {}, data, off);
  }
  TxnBuilder &write_full(std::string_view c, std::string_view o, std::string_view data) {
    return add(STRATA_OP_WRITE_FULL, c, o, {}, data);
  }
  TxnBuilder &truncate(std::string_view c, std::string_view o, uint64_t size) {
    return add(STRATA_OP_TRUNCATE, c, o, {}, {}, size);
  }
  TxnBuilder &zero(std::string_view c, std::string_view o, uint64_t off, uint64_t len) {
    return add(STRATA_OP_ZERO, c, o, {}, {}, off, len);
  }
  TxnBuilder &remove(std::string_view c, std::string_view o) { return add(STRATA_OP_REMOVE, c, o); }
  TxnBuilder &setxattr(std::string_view c, std::string_view o, std::string_view n,
                       std::string_view v) {
    return add(STRATA_OP_SETXATTR, c, o, n, v);
  }
  TxnBuilder &rmxattr(std::string_view c, std::string_view o, std::string_view n) {
    return add(STRATA_OP_RMXATTR, c, o, n);
  }
  TxnBuilder &omap_set(std::string_view c, std::string_view o, std::string_view k,
                       std::string_view v) {
    return add(STRATA_OP_OMAP_SET, c, o, k, v);
  }
  TxnBuilder &omap_rm(std::string_view c, std::string_view o, std::string_view k) {
    return add(STRATA_OP_OMAP_RM, c, o, k);
  }
  TxnBuilder &omap_clear(std::string_view c, std::string_view o) {
    return add(STRATA_OP_OMAP_CLEAR, c, o);
  }
  TxnBuilder &omap_set_header(std::string_view c, std::string_view o, std::string_view v) {
    return add(STRATA_OP_OMAP_SET_HEADER, c, o, {}, v);
  }
  TxnBuilder &omap_rm_range(std::string_view c, std::string_view o, std::string_view first,
                            std::string_view end) {
    return add(STRATA_OP_OMAP_RM_RANGE, c, o, first, end);
  }
  TxnBuilder &clone(std::string_view c, std::string_view src, std::string_view dest) {
    return add(STRATA_OP_CLONE, c, src, {}, dest);
  }

  const std::vector<strata_op> &ops() const { return ops_; }
  strata_txn txn(uint64_t seq, uint32_t flags = 0) const {
    return strata_txn{seq, ops_.data(), ops_.size(), flags, 0};
  }

 private:
  TxnBuilder &add(uint32_t type, std::string_view c, std::string_view o, std::string_view k = {},
                  std::string_view v = {}, uint64_t off = 0, uint64_t len = 0) {
    strata_op op{};
    op.type = type;
    op.collection = keep(c);
    op.object = keep(o);
    op.key = keep(k);
    op.value = keep(v);
    op.offset = off;
    op.length = len;
    ops_.push_back(op);
    return *this;
  }
  strata_slice keep(std::string_view s) {
    const std::string &kept = bytes_.emplace_back(s);  // deque: stable addresses
    return {kept.data(), kept.size()};
  }

  std::deque<std::string> bytes_;
  std::vector<strata_op> ops_;
};

}  // namespace strata::test
