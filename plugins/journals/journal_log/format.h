// The on-media format of a Strata journal (format version 1).
//
// Layout of the medium (a file or a block device), in blocks of block_size
// bytes (4096 by default, a power of two >= 512):
//
//   block 0          superblock copy A
//   block 1          superblock copy B
//   block 2 ...      the ring: `capacity` bytes of records, used circularly
//
// Superblock: the two copies are written alternately (copy = write_count % 2)
// so that a torn superblock write leaves the other, older copy intact; the
// valid copy with the higher write_count wins. It holds the geometry, the
// journal's identity (uuid; journal_id is derived from it and stamped on
// every record, so records of an earlier journal on the same device are never
// taken for ours), the epoch, and the trim point: the ring offset where replay
// starts and the lowest seq a record found there may have. A clean close also
// records where the log ends, which spares the next replay a search of the
// whole ring.
//
// Record: a 64-byte header followed by the payload, padded with zeros to a
// multiple of block_size so that records can be written with O_DIRECT. A
// record never straddles the end of the ring: when it does not fit, a pad
// record (a header alone, with the seq of the record that follows) marks the
// rest of the ring as skipped and the record starts at ring offset 0.
//
// What makes a record valid in the chain that replay walks from the trim
// point (see log_scan.h): magic and header crc, journal_id, payload crc, a seq
// greater than the previous record's, and an epoch not lower than the
// previous record's and not higher than the superblock's. Each open that goes
// on to append bumps the epoch, so records left beyond a torn tail by an
// earlier run can never be chained behind records written after it.
//
// durable_below: every record with a smaller seq was durable when this record
// was written. A valid record found beyond the end of the chain with
// durable_below past the chain's end proves that the record at the end of the
// chain had been acknowledged, so its loss is corruption, not a torn tail.
//
// Owner (since ABI 1.3): the superblock's second part, at byte 128 with its
// own magic and crc, names the store the journal belongs to (its fsid and,
// for messages, its directory). Journals made before have zeros there and
// no owner. A copy whose owner part does not check out is torn and invalid.
//
// All integers are little-endian.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace strata::journal {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kDefaultBlockSize = 4096;
inline constexpr uint32_t kMinBlockSize = 512;
inline constexpr uint32_t kMaxBlockSize = 1u << 20;
inline constexpr uint32_t kSuperblockCopies = 2;
inline constexpr uint32_t kRecordHeaderSize = 64;
inline constexpr uint32_t kSuperblockEncodedSize = 512;  // = kMinBlockSize
inline constexpr size_t kOwnerIdMax = 64;     // bytes of owner id kept
inline constexpr size_t kOwnerPathMax = 256;  // bytes of owner path kept (for messages)

enum class RecordType : uint16_t { kData = 1, kPad = 2 };

struct RecordHeader {
  RecordType type = RecordType::kData;
  uint64_t journal_id = 0;
  uint64_t epoch = 0;
  uint64_t seq = 0;
  uint64_t durable_below = 0;
  uint64_t payload_len = 0;
  uint32_t payload_crc = 0;
};

// Writes the 64-byte header (including its own crc) to `out`.
void encode_record_header(const RecordHeader &h, uint8_t *out);
// The header at `in`, or nullopt when the magic, the header crc or the type
// is wrong (not a header, or a torn one).
std::optional<RecordHeader> decode_record_header(const uint8_t *in);
// True when the bytes at `in` start with the record magic (a header was at
// least partly written there).
bool has_record_magic(const uint8_t *in);

// Bytes a record with this payload occupies in the ring.
inline uint64_t record_footprint(uint64_t payload_len, uint32_t block_size) {
  uint64_t raw = kRecordHeaderSize + payload_len;
  return (raw + block_size - 1) / block_size * block_size;
}

// The store a journal belongs to (strata_open_args owner_id/owner_path).
struct JournalOwner {
  std::string id;    // empty: unknown (nothing recorded, nothing checked)
  std::string path;  // for messages only
};

struct Superblock {
  uint32_t format_version = kFormatVersion;
  uint32_t block_size = kDefaultBlockSize;
  uint64_t ring_offset = 0;  // byte offset of the ring in the medium
  uint64_t capacity = 0;     // ring bytes, a multiple of block_size
  std::array<uint8_t, 16> uuid{};
  uint64_t write_count = 0;  // bumped by every superblock write
  uint64_t epoch = 0;        // highest epoch any record may carry
  uint64_t trim_offset = 0;  // ring offset where replay starts
  uint64_t trim_seq = 0;     // lowest seq of the first record at trim_offset
  uint64_t trim_epoch = 0;   // lowest epoch of the first record at trim_offset
  // Written by a clean close: the log then ends exactly at clean_tail_offset
  // with seq clean_last_seq, and replay need not search the rest of the ring
  // for evidence of corruption. Cleared (clean = false) by the next open.
  bool clean = false;
  uint64_t clean_tail_offset = 0;
  uint64_t clean_last_seq = 0;
  // The store this journal belongs to; empty when none was recorded.
  std::string owner_id;    // at most kOwnerIdMax bytes
  std::string owner_path;  // at most kOwnerPathMax bytes

  uint64_t journal_id() const;
};

// Writes the superblock (with its crc) to `out`, kSuperblockEncodedSize bytes.
void encode_superblock(const Superblock &sb, uint8_t *out);
// nullopt when the magic or the crc is wrong.
std::optional<Superblock> decode_superblock(const uint8_t *in);

}  // namespace strata::journal
