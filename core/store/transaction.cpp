#include "store/transaction.h"

#include <cstring>

namespace strata::store {

namespace {

constexpr uint32_t kMagic = 0x31585453;  // "STX1"

void put_u32(std::string &out, uint32_t v) { out.append(reinterpret_cast<char *>(&v), 4); }
void put_u64(std::string &out, uint64_t v) { out.append(reinterpret_cast<char *>(&v), 8); }
void put_bytes(std::string &out, strata_slice s) {
  put_u32(out, static_cast<uint32_t>(s.len));
  out.append(s.data ? s.data : "", s.len);
}

// Bounds-checked reader: every short read is a decode error, never UB.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool u32(uint32_t &v) { return raw(&v, 4); }
  bool u64(uint64_t &v) { return raw(&v, 8); }
  bool bytes(std::string_view &v, uint32_t max) {
    uint32_t n;
    if (!u32(n) || n > max || n > b_.size() - pos_) return false;
    v = b_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }
  bool done() const { return pos_ == b_.size(); }

 private:
  bool raw(void *p, size_t n) {
    if (b_.size() - pos_ < n) return false;
    std::memcpy(p, b_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::string_view b_;
  size_t pos_ = 0;
};

}  // namespace

std::string_view Transaction::keep(std::string_view s) {
  if (s.empty()) return {};
  if (s.size() >= kAlignedValueMin) {
    // Aligned by hand inside a plain allocation: glibc serves a plain
    // allocation of a size it has seen freed from its heap, where
    // aligned_alloc of several MiB took a fresh mmap (page faults, zeroing,
    // munmap) for every transaction.
    size_t padded = (s.size() + kValueAlignment - 1) / kValueAlignment * kValueAlignment;
    auto &buf = aligned_.emplace_back(new char[padded + kValueAlignment]);
    char *p = buf.get();
    p += (kValueAlignment - reinterpret_cast<uintptr_t>(p) % kValueAlignment) % kValueAlignment;
    std::memcpy(p, s.data(), s.size());
    std::memset(p + s.size(), 0, padded - s.size());
    return {p, s.size()};
  }
  storage_.emplace_back(s);
  return storage_.back();
}

Transaction &Transaction::add(uint32_t type, std::string_view c, std::string_view o,
                              std::string_view k, std::string_view v, uint64_t offset,
                              uint64_t length) {
  push_op(type, keep(c), keep(o), keep(k), keep(v), offset, length);
  return *this;
}

void Transaction::push_op(uint32_t type, std::string_view c, std::string_view o,
                          std::string_view k, std::string_view v, uint64_t offset,
                          uint64_t length) {
  // An empty slice is always {nullptr, 0}, whatever view it came from.
  auto slice = [](std::string_view s) {
    return s.empty() ? strata_slice{nullptr, 0} : strata_slice{s.data(), s.size()};
  };
  strata_op op{};
  op.type = type;
  op.collection = slice(c);
  op.object = slice(o);
  op.key = slice(k);
  op.value = slice(v);
  op.offset = offset;
  op.length = length;
  ops_.push_back(op);
}

uint64_t Transaction::data_bytes() const {
  uint64_t n = 0;
  for (const strata_op &op : ops_) n += op.value.len + op.key.len;
  return n;
}

uint64_t Transaction::encoded_size() const {
  uint64_t n = 8;
  for (const strata_op &op : ops_)
    n += 36 + op.collection.len + op.object.len + op.key.len + op.value.len;
  return n;
}

std::string Transaction::encode() const {
  std::string out;
  out.reserve(encoded_size());
  put_u32(out, kMagic);
  put_u32(out, static_cast<uint32_t>(ops_.size()));
  for (const strata_op &op : ops_) {
    put_u32(out, op.type);
    put_u64(out, op.offset);
    put_u64(out, op.length);
    put_bytes(out, op.collection);
    put_bytes(out, op.object);
    put_bytes(out, op.key);
    put_bytes(out, op.value);
  }
  return out;
}

Result<Transaction> Transaction::decode(std::string_view bytes) {
  Transaction t;
  return decode_into(t, bytes, true);
}

Result<Transaction> Transaction::decode_adopting(std::string &&bytes) {
  Transaction t;
  // A deque element never moves, nor does a moved Transaction's: the ops
  // may point into it for the Transaction's whole life.
  std::string_view kept = t.storage_.emplace_back(std::move(bytes));
  return decode_into(t, kept, false);
}

Result<Transaction> Transaction::decode_into(Transaction &t, std::string_view bytes, bool copy) {
  Reader r(bytes);
  uint32_t magic, n;
  if (!r.u32(magic) || magic != kMagic)
    return Status::Error(EBADMSG, "transaction record: bad magic");
  if (!r.u32(n) || n > bytes.size() / 36 + 1)
    return Status::Error(EBADMSG, "transaction record: bad op count");
  t.ops_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t type;
    uint64_t off, len;
    std::string_view c, o, k, v;
    if (!r.u32(type) || !r.u64(off) || !r.u64(len) || !r.bytes(c, 4096) || !r.bytes(o, 65536) ||
        !r.bytes(k, 65536) || !r.bytes(v, UINT32_MAX))
      return Status::Error(EBADMSG, "transaction record: op " + std::to_string(i) +
                                        " truncated or oversized at byte " +
                                        std::to_string(r.pos()));
    if (copy)
      t.add(type, c, o, k, v, off, len);
    else
      t.push_op(type, c, o, k, v, off, len);  // the views point into t's own storage
  }
  if (!r.done()) return Status::Error(EBADMSG, "transaction record: trailing bytes");
  return std::move(t);
}

const char *op_name(uint32_t type) {
  return type == kOpAppend ? "APPEND" : strata_op_type_name(type);
}

}  // namespace strata::store
