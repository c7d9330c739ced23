#include "txn.h"

namespace strata::test {

strata_slice Txn::keep(std::string_view s) {
  strings_.emplace_back(s);
  return {strings_.back().data(), strings_.back().size()};
}

Txn &Txn::add(uint32_t type, std::string_view c, std::string_view o, std::string_view key,
              std::string_view value, uint64_t offset, uint64_t length) {
  strata_op op{};
  op.type = type;
  op.collection = keep(c);
  op.object = keep(o);
  op.key = keep(key);
  op.value = keep(value);
  op.offset = offset;
  op.length = length;
  ops_.push_back(op);
  return *this;
}

Txn &Txn::mkcoll(std::string_view c) { return add(STRATA_OP_MKCOLL, c, {}); }
Txn &Txn::rmcoll(std::string_view c) { return add(STRATA_OP_RMCOLL, c, {}); }
Txn &Txn::touch(std::string_view c, std::string_view o) { return add(STRATA_OP_TOUCH, c, o); }
Txn &Txn::write(std::string_view c, std::string_view o, uint64_t off, std::string_view data) {
  return add(STRATA_OP_WRITE, c, o, {}, data, off, data.size());
}
Txn &Txn::write_full(std::string_view c, std::string_view o, std::string_view data) {
  return add(STRATA_OP_WRITE_FULL, c, o, {}, data, 0, data.size());
}
Txn &Txn::truncate(std::string_view c, std::string_view o, uint64_t size) {
  return add(STRATA_OP_TRUNCATE, c, o, {}, {}, size);
}
Txn &Txn::zero(std::string_view c, std::string_view o, uint64_t off, uint64_t len) {
  return add(STRATA_OP_ZERO, c, o, {}, {}, off, len);
}
Txn &Txn::remove(std::string_view c, std::string_view o) { return add(STRATA_OP_REMOVE, c, o); }
Txn &Txn::setxattr(std::string_view c, std::string_view o, std::string_view name,
                   std::string_view value) {
  return add(STRATA_OP_SETXATTR, c, o, name, value);
}
Txn &Txn::rmxattr(std::string_view c, std::string_view o, std::string_view name) {
  return add(STRATA_OP_RMXATTR, c, o, name);
}
Txn &Txn::omap_set(std::string_view c, std::string_view o, std::string_view key,
                   std::string_view value) {
  return add(STRATA_OP_OMAP_SET, c, o, key, value);
}
Txn &Txn::omap_rm(std::string_view c, std::string_view o, std::string_view key) {
  return add(STRATA_OP_OMAP_RM, c, o, key);
}
Txn &Txn::omap_clear(std::string_view c, std::string_view o) {
  return add(STRATA_OP_OMAP_CLEAR, c, o);
}
Txn &Txn::omap_set_header(std::string_view c, std::string_view o, std::string_view value) {
  return add(STRATA_OP_OMAP_SET_HEADER, c, o, {}, value);
}
Txn &Txn::omap_rm_range(std::string_view c, std::string_view o, std::string_view begin,
                        std::string_view end) {
  return add(STRATA_OP_OMAP_RM_RANGE, c, o, begin, end);
}
Txn &Txn::clone(std::string_view c, std::string_view o, std::string_view dst) {
  return add(STRATA_OP_CLONE, c, o, {}, dst);
}
Txn &Txn::write_staged(std::string_view c, std::string_view o, uint64_t stage_id, uint64_t len) {
  return add(STRATA_OP_WRITE_STAGED, c, o, {}, {}, stage_id, len);
}

Txn Txn::prefix(size_t n) const {
  Txn t(seq_);
  for (size_t i = 0; i < n && i < ops_.size(); ++i) {
    const strata_op &op = ops_[i];
    auto v = [](strata_slice s) { return std::string_view(s.data ? s.data : "", s.len); };
    t.add(op.type, v(op.collection), v(op.object), v(op.key), v(op.value), op.offset, op.length);
  }
  return t;
}

}  // namespace strata::test
