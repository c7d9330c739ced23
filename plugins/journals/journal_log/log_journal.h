// The sdk::Journal both journal-media plugins export: a CircularLog over the
// plugin's Media, plus the options they share. A plugin class derives from
// LogJournal and adds the static create/open/destroy that
// STRATA_JOURNAL_PLUGIN needs.
#pragma once

#include <cstdint>
#include <memory>

#include "journal_log/circular_log.h"
#include "strata/cpp/journal.hpp"

namespace strata::journal {

// Option names shared by both plugins (each declares them in its specs).
inline constexpr const char *kOptJournalSize = "journal_size";
inline constexpr const char *kOptBlockSize = "journal_block_size";
inline constexpr const char *kOptMaxBatchBytes = "journal_max_batch_bytes";
inline constexpr const char *kOptTrimPersistMs = "journal_trim_persist_ms";

// LogOptions from the validated open arguments. Throws -EINVAL for values
// out of range.
LogOptions log_options_from(const sdk::OpenArgs &args);
// journal_block_size, checked (power of two in [512, 1 MiB]).
uint32_t block_size_from(const sdk::OpenArgs &args);
// The store the host says the journal belongs to (ABI 1.3; empty before).
JournalOwner owner_from(const sdk::OpenArgs &args);

class LogJournal : public sdk::Journal {
 public:
  // Checks the owner (CircularLog::claim); every LogJournal has
  // STRATA_JOURNAL_CAP_OWNER_CHECK.
  LogJournal(std::unique_ptr<Media> media, const sdk::OpenArgs &args, uint64_t capabilities);

  uint64_t capabilities() const override { return caps_; }
  strata_journal_replay_result replay(
      uint64_t after_seq,
      const std::function<int(uint64_t, const void *, size_t)> &visit) override {
    return log_.replay(after_seq, visit);
  }
  void append(uint64_t seq, const void *data, size_t len, strata_journal_done_cb cb,
              void *arg) override {
    log_.append(seq, data, len, cb, arg);
  }
  void trim(uint64_t upto_seq) override { log_.trim(upto_seq); }
  void flush() override { log_.flush(); }
  strata_journal_stat stat() override { return log_.stat(); }

 private:
  uint64_t caps_;
  CircularLog log_;
};

}  // namespace strata::journal
