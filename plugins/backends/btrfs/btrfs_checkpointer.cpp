#include "btrfs_checkpointer.h"

#include <linux/magic.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

#include "btrfs_subvolume.h"
#include "filestore/fs_check.h"
#include "filestore/posix_file.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/objectstore.h"

namespace strata::btrfs {
namespace {

constexpr const char *kCurrent = "current";
constexpr std::string_view kSnapPrefix = "snap.";
// Checkpoint snapshots stay writable (nothing writes to them) so that a store
// directory can be removed with a plain `rm -rf`: files in a read-only
// snapshot cannot be unlinked, only the whole subvolume deleted by ioctl.
constexpr bool kSnapshotsReadOnly = false;

std::string snapshot_name(uint64_t seq) { return std::string(kSnapPrefix) + std::to_string(seq); }

std::optional<uint64_t> parse_snapshot_name(std::string_view name) {
  if (name.substr(0, kSnapPrefix.size()) != kSnapPrefix) return std::nullopt;
  name.remove_prefix(kSnapPrefix.size());
  uint64_t seq = 0;
  auto r = std::from_chars(name.data(), name.data() + name.size(), seq);
  if (name.empty() || r.ec != std::errc() || r.ptr != name.data() + name.size())
    return std::nullopt;
  return seq;
}

// Seqs of the snapshots in `root`, ascending.
std::vector<uint64_t> list_snapshots(const std::string &root) {
  std::vector<uint64_t> seqs;
  for (const std::string &name : filestore::list_dir(root))
    if (auto seq = parse_snapshot_name(name)) seqs.push_back(*seq);
  std::sort(seqs.begin(), seqs.end());
  return seqs;
}

void sync_root(const std::string &root) {
  filestore::UniqueFd fd = filestore::open_dir(root);
  filestore::sync_file_system(fd.get(), root);
}

}  // namespace

void BtrfsCheckpointer::check_file_system(const std::string &root) const {
  filestore::require_file_system(root, BTRFS_SUPER_MAGIC, "btrfs", "btrfs");
}

std::string BtrfsCheckpointer::create_live_area(const std::string &root) {
  root_ = root;
  std::string current = root + "/" + kCurrent;
  if (!filestore::path_exists(current))
    create_subvolume(root, kCurrent);
  else if (!is_subvolume(current))
    throw sdk::Error(EEXIST, current + " exists and is not a btrfs subvolume");
  return current;
}

void BtrfsCheckpointer::finish_mkfs(const std::string &root) {
  for (uint64_t seq : list_snapshots(root)) delete_subvolume(root, snapshot_name(seq));
  snapshot_subvolume(root + "/" + kCurrent, root, snapshot_name(0), kSnapshotsReadOnly);
  sync_root(root);
  last_snapshot_seq_ = 0;
}

std::string BtrfsCheckpointer::open_live_area(const std::string &root) {
  root_ = root;
  std::vector<uint64_t> seqs = list_snapshots(root);
  if (seqs.empty())
    throw sdk::Error(EUCLEAN, "btrfs store " + root + " has no snap.<seq> checkpoint to open");
  uint64_t newest = seqs.back();
  // Older snapshots are left over from a checkpoint interrupted before it
  // deleted its predecessor.
  for (uint64_t seq : seqs)
    if (seq != newest) delete_subvolume(root, snapshot_name(seq));

  // Roll back: whatever `current` holds beyond the checkpoint is dropped;
  // the host replays it from its journal.
  std::string current = root + "/" + kCurrent;
  if (filestore::path_exists(current)) delete_subvolume(root, kCurrent);
  snapshot_subvolume(root + "/" + snapshot_name(newest), root, kCurrent, /*read_only=*/false);
  sync_root(root);
  last_snapshot_seq_ = newest;
  return current;
}

void BtrfsCheckpointer::checkpoint(uint64_t seq, filestore::CheckpointSteps &steps) {
  if (seq == last_snapshot_seq_) return;  // nothing applied since
  if (seq < last_snapshot_seq_)
    throw sdk::make_error(EINVAL, "checkpoint seq %llu is older than the last checkpoint %llu",
                          static_cast<unsigned long long>(seq),
                          static_cast<unsigned long long>(last_snapshot_seq_));
  // The snapshot must hold a database that says `seq` and has every write
  // in its files (no WAL-less write left only in memory).
  steps.record_seq(seq, /*sync=*/false);
  steps.flush_metadata();
  steps.sync_files();
  snapshot_subvolume(root_ + "/" + kCurrent, root_, snapshot_name(seq), kSnapshotsReadOnly);
  sync_root(root_);
  // Only now is the older snapshot redundant.
  for (uint64_t old : list_snapshots(root_))
    if (old < seq) delete_subvolume(root_, snapshot_name(old));
  last_snapshot_seq_ = seq;
}

uint64_t BtrfsCheckpointer::capabilities(bool) const {
  return STRATA_OS_CAP_ROLLBACK_CHECKPOINT | STRATA_OS_CAP_EXACT_REPLAY |
         STRATA_OS_CAP_CHEAP_CLONE | STRATA_OS_CAP_STAGED_WRITES;
}

}  // namespace strata::btrfs
