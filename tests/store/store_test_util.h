// Helpers shared by the store engine tests: the "writer" child process that
// writes generated transactions and exits without closing the store, and
// locating transaction records inside a journal file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "txn_gen.h"

namespace strata::testing {

// Child-mode parameters of the "writer" child: writes txn(from) .. txn(to)
// of a TxnGenerator with writer_gen_config(large_pct, clone_pct), at queue depth 8, reporting each
// acknowledged k; then, if tail_bytes > 0, one more transaction, tail_txn()
// (reported as to + 1); then exits with 0 WITHOUT closing the store (an
// unclean stop: nothing is checkpointed or trimmed).
struct WriterRun {
  std::string dir;
  uint64_t from = 1, to = 0;
  uint64_t checkpoint_interval_ms = 3'600'000;  // >= 1'000'000: never checkpoint
  uint32_t large_pct = 3;
  // 0 keeps backends without exact replay from checkpointing after clones, so
  // every record stays in the journal (nothing is trimmed).
  uint32_t clone_pct = 3;
  uint64_t tail_bytes = 0;
};

// Runs the writer to completion; REQUIRE()s that it exits 0 and that every
// transaction was acknowledged. Returns the acknowledged ks.
std::vector<uint64_t> run_writer(const WriterRun &w);

GenConfig writer_gen_config(uint32_t large_pct, uint32_t clone_pct = 3);

// The writer's tail transaction: one omap key kTailKey of `bytes` bytes on
// the counter object. It has no clone (so a backend without exact replay
// has not checkpointed it), creates no object and writes no data file.
inline constexpr const char *kTailKey = "tail";
store::Transaction tail_txn(uint64_t bytes);

// Byte offsets in a journal file where an encoded store::Transaction starts
// (magic "STX1" followed by a plausible op count and op type), in file order.
std::vector<uint64_t> find_txn_records(const std::string &file_bytes);

std::string read_file(const std::string &path);
void write_file_at(const std::string &path, uint64_t offset, const std::string &bytes);

}  // namespace strata::testing
