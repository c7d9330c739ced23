#include "txn_builder.h"

#include <algorithm>

namespace strata::conformance {

namespace {
strata_slice as_slice(const std::string &s) { return {s.data(), s.size()}; }
}  // namespace

TxnBuilder &TxnBuilder::raw(uint32_t type, std::string_view coll, std::string_view oid,
                            std::string_view key, std::string_view value, uint64_t offset,
                            uint64_t length) {
  pending_.push_back({type, std::string(coll), std::string(oid), std::string(key),
                      std::string(value), offset, length});
  return *this;
}

TxnBuilder &TxnBuilder::mkcoll(std::string_view c) {
  return raw(STRATA_OP_MKCOLL, c, {}, {}, {}, 0, 0);
}
TxnBuilder &TxnBuilder::rmcoll(std::string_view c) {
  return raw(STRATA_OP_RMCOLL, c, {}, {}, {}, 0, 0);
}
TxnBuilder &TxnBuilder::touch(std::string_view c, std::string_view o) {
  return raw(STRATA_OP_TOUCH, c, o, {}, {}, 0, 0);
}
TxnBuilder &TxnBuilder::write(std::string_view c, std::string_view o, uint64_t off,
                              std::string_view data) {
  return raw(STRATA_OP_WRITE, c, o, {}, data, off, data.size());
}
TxnBuilder &TxnBuilder::write_full(std::string_view c, std::string_view o, std::string_view data) {
  return raw(STRATA_OP_WRITE_FULL, c, o, {}, data, 0, data.size());
}
TxnBuilder &TxnBuilder::truncate(std::string_view c, std::string_view o, uint64_t size) {
  return raw(STRATA_OP_TRUNCATE, c, o, {}, {}, size, 0);
}
TxnBuilder &TxnBuilder::zero(std::string_view c, std::string_view o, uint64_t off, uint64_t len) {
  return raw(STRATA_OP_ZERO, c, o, {}, {}, off, len);
}
TxnBuilder &TxnBuilder::remove(std::string_view c, std::string_view o) {
  return raw(STRATA_OP_REMOVE, c, o, {}, {}, 0, 0);
}
TxnBuilder &TxnBuilder::setxattr(std::string_view c, std::string_view o, std::string_view name,
                                 std::string_view value) {
  return raw(STRATA_OP_SETXATTR, c, o, name, value, 0, 0);
}
TxnBuilder &TxnBuilder::rmxattr(std::string_view c, std::string_view o, std::string_view name) {
  return raw(STRATA_OP_RMXATTR, c, o, name, {}, 0, 0);
}
TxnBuilder &TxnBuilder::omap_set(std::string_view c, std::string_view o, std::string_view key,
                                 std::string_view value) {
  return raw(STRATA_OP_OMAP_SET, c, o, key, value, 0, 0);
}
TxnBuilder &TxnBuilder::omap_rm(std::string_view c, std::string_view o, std::string_view key) {
  return raw(STRATA_OP_OMAP_RM, c, o, key, {}, 0, 0);
}
TxnBuilder &TxnBuilder::omap_clear(std::string_view c, std::string_view o) {
  return raw(STRATA_OP_OMAP_CLEAR, c, o, {}, {}, 0, 0);
}
TxnBuilder &TxnBuilder::omap_set_header(std::string_view c, std::string_view o,
                                        std::string_view header) {
  return raw(STRATA_OP_OMAP_SET_HEADER, c, o, {}, header, 0, 0);
}
TxnBuilder &TxnBuilder::omap_rm_range(std::string_view c, std::string_view o,
                                      std::string_view first, std::string_view end) {
  return raw(STRATA_OP_OMAP_RM_RANGE, c, o, first, end, 0, 0);
}
TxnBuilder &TxnBuilder::clone(std::string_view c, std::string_view src, std::string_view dst) {
  return raw(STRATA_OP_CLONE, c, src, {}, dst, 0, 0);
}
TxnBuilder &TxnBuilder::write_staged(std::string_view c, std::string_view o, uint64_t stage_id,
                                     uint64_t length) {
  return raw(STRATA_OP_WRITE_STAGED, c, o, {}, {}, stage_id, length);
}

TxnBuilder TxnBuilder::prefix(size_t n) const {
  TxnBuilder t(seq_);
  t.pending_.assign(pending_.begin(), pending_.begin() + std::min(n, pending_.size()));
  return t;
}

bool TxnBuilder::has_clone() const {
  for (const Pending &p : pending_)
    if (p.type == STRATA_OP_CLONE) return true;
  return false;
}

const std::vector<strata_op> &TxnBuilder::ops() const {
  ops_.clear();
  for (const Pending &p : pending_) {
    strata_op op{};
    op.type = p.type;
    op.collection = as_slice(p.coll);
    op.object = as_slice(p.oid);
    op.key = as_slice(p.key);
    op.value = as_slice(p.value);
    op.offset = p.offset;
    op.length = p.length;
    ops_.push_back(op);
  }
  return ops_;
}

strata_txn TxnBuilder::txn(uint64_t seq, uint32_t flags) const {
  const std::vector<strata_op> &o = ops();
  strata_txn t{};
  t.seq = seq;
  t.ops = o.data();
  t.n_ops = o.size();
  t.flags = flags;
  return t;
}

}  // namespace strata::conformance
