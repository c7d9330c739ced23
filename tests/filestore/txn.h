// Building transactions for tests: owns the bytes its ops point to.
// No test framework here, so that the crash child process can use it too.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "strata/objectstore.h"

namespace strata::test {

// Builds one transaction. Strings are copied, so temporaries may be passed.
class Txn {
 public:
  explicit Txn(uint64_t seq) : seq_(seq) {}
  Txn(const Txn &) = delete;
  Txn(Txn &&) = default;

  Txn &mkcoll(std::string_view c);
  Txn &rmcoll(std::string_view c);
  Txn &touch(std::string_view c, std::string_view o);
  Txn &write(std::string_view c, std::string_view o, uint64_t off, std::string_view data);
  Txn &write_full(std::string_view c, std::string_view o, std::string_view data);
  Txn &truncate(std::string_view c, std::string_view o, uint64_t size);
  Txn &zero(std::string_view c, std::string_view o, uint64_t off, uint64_t len);
  Txn &remove(std::string_view c, std::string_view o);
  Txn &setxattr(std::string_view c, std::string_view o, std::string_view name,
                std::string_view value);
  Txn &rmxattr(std::string_view c, std::string_view o, std::string_view name);
  Txn &omap_set(std::string_view c, std::string_view o, std::string_view key,
                std::string_view value);
  Txn &omap_rm(std::string_view c, std::string_view o, std::string_view key);
  Txn &omap_clear(std::string_view c, std::string_view o);
  Txn &omap_set_header(std::string_view c, std::string_view o, std::string_view value);
  Txn &omap_rm_range(std::string_view c, std::string_view o, std::string_view begin,
                     std::string_view end);
  Txn &clone(std::string_view c, std::string_view o, std::string_view dst);
  Txn &write_staged(std::string_view c, std::string_view o, uint64_t stage_id, uint64_t len);

  // Any op, strings copied (used to rebuild transactions read from a file).
  Txn &add(uint32_t type, std::string_view c, std::string_view o, std::string_view key = {},
           std::string_view value = {}, uint64_t offset = 0, uint64_t length = 0);

  uint64_t seq() const { return seq_; }
  const std::vector<strata_op> &ops() const { return ops_; }
  // The first n ops only, same seq (a crash in the middle of apply).
  Txn prefix(size_t n) const;
  strata_txn view() const { return {seq_, ops_.data(), ops_.size(), 0, 0}; }

 private:
  strata_slice keep(std::string_view s);
  uint64_t seq_;
  std::deque<std::string> strings_;
  std::vector<strata_op> ops_;
};

}  // namespace strata::test
