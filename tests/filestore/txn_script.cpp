#include "txn_script.h"

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>

namespace strata::test {
namespace {

void put_u64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_bytes(std::string &out, strata_slice s) {
  put_u64(out, s.len);
  out.append(s.data ? s.data : "", s.len);
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool done() const { return in_.empty(); }
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(in_[i])} << (8 * i);
    in_.remove_prefix(8);
    return v;
  }
  std::string_view bytes() {
    uint64_t n = u64();
    need(n);
    std::string_view s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }
  char kind() {
    need(1);
    char c = in_[0];
    in_.remove_prefix(1);
    return c;
  }

 private:
  void need(uint64_t n) const {
    if (in_.size() < n) throw std::runtime_error("truncated txn script");
  }
  std::string_view in_;
};

}  // namespace

void ScriptWriter::apply(const Txn &txn) {
  bytes_.push_back('A');
  put_u64(bytes_, txn.seq());
  put_u64(bytes_, txn.ops().size());
  for (const strata_op &op : txn.ops()) {
    put_u64(bytes_, op.type);
    put_bytes(bytes_, op.collection);
    put_bytes(bytes_, op.object);
    put_bytes(bytes_, op.key);
    put_bytes(bytes_, op.value);
    put_u64(bytes_, op.offset);
    put_u64(bytes_, op.length);
  }
}

void ScriptWriter::checkpoint(uint64_t seq) {
  bytes_.push_back('K');
  put_u64(bytes_, seq);
}

void ScriptWriter::save(const std::string &path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
  if (!out) throw std::runtime_error("cannot write txn script " + path);
}

std::vector<ScriptStep> read_script(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open txn script " + path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Reader r(data);
  std::vector<ScriptStep> steps;
  while (!r.done()) {
    ScriptStep step;
    char kind = r.kind();
    if (kind == 'K') {
      step.checkpoint = r.u64();
    } else if (kind == 'A') {
      step.txn.emplace(r.u64());
      uint64_t n = r.u64();
      for (uint64_t i = 0; i < n; ++i) {
        auto type = static_cast<uint32_t>(r.u64());
        std::string_view c = r.bytes(), o = r.bytes(), k = r.bytes(), v = r.bytes();
        uint64_t offset = r.u64();
        uint64_t length = r.u64();
        step.txn->raw(type, c, o, k, v, offset, length);
      }
    } else {
      throw std::runtime_error("bad step kind in txn script " + path);
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace strata::test
