// A file of steps (apply this transaction, checkpoint at that seq) that the
// crash child process runs against a store before dying without closing it,
// the way an OSD dies with a journal full of applied transactions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "txn.h"

namespace strata::test {

struct ScriptStep {
  std::optional<Txn> txn;   // apply this, or
  uint64_t checkpoint = 0;  // checkpoint at this seq when txn is empty
};

class ScriptWriter {
 public:
  void apply(const Txn &txn);
  void checkpoint(uint64_t seq);
  // Writes the steps to `path`; throws std::runtime_error on failure.
  void save(const std::string &path) const;

 private:
  std::string bytes_;
};

// Throws std::runtime_error for a file it cannot read or parse.
std::vector<ScriptStep> read_script(const std::string &path);

}  // namespace strata::test
