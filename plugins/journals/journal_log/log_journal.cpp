#include "journal_log/log_journal.h"

#include <cerrno>

#include "journal_log/superblock_io.h"

namespace strata::journal {

LogOptions log_options_from(const sdk::OpenArgs &args) {
  LogOptions o;
  long long batch = args.option_int(kOptMaxBatchBytes, static_cast<long long>(o.max_batch_bytes));
  if (batch < 4096 || batch > (1ll << 30))
    throw sdk::make_error(EINVAL, "%s = %lld is outside [4K, 1G]", kOptMaxBatchBytes, batch);
  o.max_batch_bytes = static_cast<uint64_t>(batch);
  long long ms = args.option_int(kOptTrimPersistMs, o.trim_persist_interval.count());
  if (ms < 0 || ms > 3'600'000)
    throw sdk::make_error(EINVAL, "%s = %lld is outside [0, 3600000]", kOptTrimPersistMs, ms);
  o.trim_persist_interval = std::chrono::milliseconds(ms);
  return o;
}

uint32_t block_size_from(const sdk::OpenArgs &args) {
  long long bs = args.option_int(kOptBlockSize, kDefaultBlockSize);
  if (bs <= 0) throw sdk::make_error(EINVAL, "%s = %lld is not positive", kOptBlockSize, bs);
  check_block_size(static_cast<uint64_t>(bs));
  return static_cast<uint32_t>(bs);
}

LogJournal::LogJournal(std::unique_ptr<Media> media, const sdk::OpenArgs &args,
                       uint64_t capabilities)
    : caps_(capabilities | STRATA_JOURNAL_CAP_OWNER_CHECK),
      log_(std::move(media), log_options_from(args), sdk::Logger(args.host())) {
  log_.claim(owner_from(args));
}

JournalOwner owner_from(const sdk::OpenArgs &args) { return {args.owner_id(), args.owner_path()}; }

}  // namespace strata::journal
