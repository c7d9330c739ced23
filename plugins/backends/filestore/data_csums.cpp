#include "filestore/data_csums.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "checksum/block_checksums.h"
#include "checksum/crc32c.h"
#include "filestore/meta_schema.h"
#include "filestore/names.h"
#include "filestore/posix_file.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::filestore {
namespace {

using checksum::crc_at;
using checksum::kCrcBytes;

// Truncates and point-deletes up to this many groups; beyond, one range delete.
constexpr size_t kPointDeleteLimit = 64;

std::string empty_group(uint32_t zero_crc) {
  std::string g;
  g.reserve(kGroupBlocks * kCrcBytes);
  for (uint64_t i = 0; i < kGroupBlocks; ++i) checksum::append_crc(g, zero_crc);
  return g;
}

bool all_zero_blocks(const std::string &g, uint32_t zero_crc) {
  for (uint64_t i = 0; i < kGroupBlocks; ++i)
    if (crc_at(g, i) != zero_crc) return false;
  return true;
}

}  // namespace

CsumEditor::CsumEditor(kvdb::Transaction &meta, std::string_view coll, std::string_view oid,
                       const CsumPolicy &policy)
    : meta_(meta), coll_(coll), oid_(oid), policy_(policy) {}

std::string &CsumEditor::group(uint64_t index) {
  auto it = groups_.find(index);
  if (it != groups_.end()) return it->second;
  std::string bytes;
  if (index >= cleared_from_group_ || !meta_.get(schema::csum_key(coll_, oid_, index), &bytes) ||
      bytes.size() != kGroupBlocks * kCrcBytes)
    bytes = empty_group(policy_.zero_crc);
  return groups_.emplace(index, std::move(bytes)).first->second;
}

uint32_t CsumEditor::get(uint64_t block) {
  return crc_at(group(block / kGroupBlocks), block % kGroupBlocks);
}

void CsumEditor::set(uint64_t block, uint32_t crc) {
  uint64_t g = block / kGroupBlocks;
  checksum::set_crc_at(group(g), block % kGroupBlocks, crc);
  dirty_[g] = true;
}

void CsumEditor::clear_from(uint64_t first) {
  uint64_t g = first / kGroupBlocks;
  if (first % kGroupBlocks != 0) {
    std::string &part = group(g);
    for (uint64_t i = first % kGroupBlocks; i < kGroupBlocks; ++i)
      checksum::set_crc_at(part, i, policy_.zero_crc);
    dirty_[g] = true;
    ++g;
  }
  // Groups from g on are gone: forget what this editor holds of them, then
  // delete what the transaction has.
  groups_.erase(groups_.lower_bound(g), groups_.end());
  dirty_.erase(dirty_.lower_bound(g), dirty_.end());
  // Groups from an earlier clear point on are already deleted in the
  // transaction (or never existed: assume_empty); what was set since is
  // only in groups_, just dropped.
  if (g >= cleared_from_group_) return;
  cleared_from_group_ = g;
  std::string begin = schema::csum_key(coll_, oid_, g);
  std::string end = schema::csums_of(coll_, oid_).end;
  std::vector<std::string> keys;
  {
    auto it = meta_.iterate({begin, end});
    for (it->seek_to_first(); it->valid() && keys.size() <= kPointDeleteLimit; it->next())
      keys.emplace_back(it->key());
  }
  if (keys.size() > kPointDeleteLimit)
    meta_.delete_range(begin, end);
  else
    for (const std::string &k : keys) meta_.del(k);
}

void CsumEditor::flush() {
  for (const auto &[g, dirty] : dirty_) {
    if (!dirty) continue;
    const std::string &bytes = groups_.at(g);
    std::string key = schema::csum_key(coll_, oid_, g);
    if (all_zero_blocks(bytes, policy_.zero_crc))
      meta_.del(key);
    else
      meta_.put(key, bytes);
  }
  dirty_.clear();
  // The transaction now holds groups past any clear point: a later
  // clear_from must search it again.
  cleared_from_group_ = UINT64_MAX;
}

void load_csums(const kvdb::Database &db, std::string_view coll, std::string_view oid,
                const CsumPolicy &policy, uint64_t first, uint64_t n, uint32_t *out) {
  std::fill(out, out + n, policy.zero_crc);
  if (n == 0) return;
  const uint64_t g0 = first / kGroupBlocks, g1 = (first + n - 1) / kGroupBlocks;
  auto take = [&](uint64_t g, std::string_view bytes) {
    if (bytes.size() != kGroupBlocks * kCrcBytes)
      throw sdk::Error(EUCLEAN, "checksum group " + std::to_string(g) + " of " +
                                    describe_object(coll, oid) + " is damaged");
    for (uint64_t i = 0; i < kGroupBlocks; ++i) {
      uint64_t b = g * kGroupBlocks + i;
      if (b >= first && b < first + n) out[b - first] = crc_at(bytes, i);
    }
  };
  if (g0 == g1) {
    std::string bytes;
    if (db.get(schema::csum_key(coll, oid, g0), &bytes)) take(g0, bytes);
    return;
  }
  std::string begin = schema::csum_key(coll, oid, g0);
  const size_t prefix = begin.size() - 8;
  auto it = db.iterate({begin, schema::csum_key(coll, oid, g1 + 1)});
  for (it->seek_to_first(); it->valid(); it->next()) {
    std::string_view k = it->key();
    uint64_t g = 0;
    for (size_t i = prefix; i < k.size(); ++i) g = (g << 8) | static_cast<unsigned char>(k[i]);
    take(g, it->value());
  }
}

std::vector<uint32_t> compute_csums(const char *data, uint64_t len, uint64_t block) {
  std::vector<uint32_t> out;
  out.reserve(len / block + 1);
  for (uint64_t off = 0; off < len; off += block) {
    uint64_t n = std::min(block, len - off);
    out.push_back(checksum::padded_block_crc(data + off, n, block));
  }
  return out;
}

bool DataCsumUpdater::read_block(uint64_t index, uint64_t valid, char *buf) {
  const uint64_t B = p_.block;
  std::memset(buf, 0, B);
  size_t got = pread_full(fd_, buf, valid, index * B, path_);
  if (!p_.verify_old) return true;
  uint32_t stored = ed_.get(index);
  uint32_t actual = checksum::padded_block_crc(buf, got, B);
  if (got == valid && actual == stored) return true;
  p_.count_failure();
  if (p_.log)
    p_.log->log(STRATA_LOG_ERROR,
                "block %llu (bytes %llu..%llu) of %s in data file %s fails its checksum (stored "
                "%08x, found %08x%s) under a partial write: the block stays unreadable until it "
                "is rewritten whole",
                static_cast<unsigned long long>(index), static_cast<unsigned long long>(index * B),
                static_cast<unsigned long long>(index * B + valid), what_.c_str(), path_.c_str(),
                stored, actual, got < valid ? ", file too short" : "");
  return false;
}

// The checksum a block gets: its bytes' CRC, or, when the bytes it kept were
// already corrupt, a value that can never match them. The op is journaled
// (acknowledged) before it is applied, so apply cannot refuse it; poisoning
// keeps every later read of the block an EIO (which the OSD answers from a
// replica and repairs) instead of blessing bad bytes with a fresh checksum.
static uint32_t block_crc(const char *buf, uint64_t len, bool kept_bytes_ok) {
  uint32_t crc = checksum::crc32c(buf, len);
  return kept_bytes_ok ? crc : ~crc;
}

void DataCsumUpdater::write(uint64_t offset, const char *data, uint64_t len, uint64_t old_size) {
  if (len == 0) return;
  const uint64_t B = p_.block;
  const uint64_t end = offset + len;
  std::vector<char> buf;
  for (uint64_t k = offset / B; k <= (end - 1) / B; ++k) {
    const uint64_t bs = k * B, be = bs + B;
    const uint64_t from = std::max(offset, bs), to = std::min(end, be);
    if (from == bs && to == be) {
      ed_.set(k, data ? checksum::crc32c(data + (bs - offset), B) : p_.zero_crc);
      continue;
    }
    // Bytes of the block this op keeps: below the old size, outside [from, to).
    const uint64_t old_end = std::clamp(old_size, bs, be);
    buf.resize(B);
    bool ok = true;
    if (old_end > bs && (from > bs || to < old_end))
      ok = read_block(k, old_end - bs, buf.data());
    else
      std::memset(buf.data(), 0, B);
    if (data)
      std::memcpy(buf.data() + (from - bs), data + (from - offset), to - from);
    else
      std::memset(buf.data() + (from - bs), 0, to - from);
    ed_.set(k, block_crc(buf.data(), B, ok));
  }
}

void DataCsumUpdater::truncate(uint64_t old_size, uint64_t new_size) {
  if (new_size >= old_size) return;
  const uint64_t B = p_.block;
  if (uint64_t tail = new_size % B; tail != 0) {
    const uint64_t k = new_size / B;
    std::vector<char> buf(B);
    const bool ok = read_block(k, std::min(old_size - k * B, B), buf.data());
    const uint32_t crc = checksum::padded_block_crc(buf.data(), tail, B);
    ed_.set(k, ok ? crc : ~crc);
    ed_.clear_from(k + 1);
  } else {
    ed_.clear_from(new_size / B);
  }
}

void DataCsumUpdater::replace(const char *data, uint64_t len) {
  replace_with(compute_csums(data, len, p_.block).data(), len);
}

void DataCsumUpdater::fill_new(const char *data, uint64_t len) {
  ed_.assume_empty();
  replace(data, len);  // its clear_from(0) then has nothing to search
}

void DataCsumUpdater::replace_with(const uint32_t *crcs, uint64_t len) {
  const uint64_t B = p_.block;
  const uint64_t n = len / B + (len % B != 0);
  ed_.clear_from(0);
  for (uint64_t k = 0; k < n; ++k) ed_.set(k, crcs[k]);
}

}  // namespace strata::filestore
