#include "journal_log/format.h"

#include <algorithm>
#include <cstring>

#include "journal_log/crc32c.h"

namespace strata::journal {
namespace {

constexpr uint32_t kRecordMagic = 0x4352'4A53;              // "SJRC"
constexpr uint64_t kSuperblockMagic = 0x314C'4E52'4A52'5453;  // "STRJRNL1"
constexpr uint32_t kOwnerMagic = 0x574F'4A53;                 // "SJOW"

void put16(uint8_t *p, uint16_t v) {
  for (int i = 0; i < 2; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t get16(const uint8_t *p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t get32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Record header field offsets.
enum : size_t {
  kRhMagic = 0,
  kRhType = 4,
  kRhSize = 6,
  kRhJournalId = 8,
  kRhEpoch = 16,
  kRhSeq = 24,
  kRhDurableBelow = 32,
  kRhPayloadLen = 40,
  kRhPayloadCrc = 48,
  kRhHeaderCrc = 60,  // crc of bytes [0, 60)
};

// Superblock field offsets.
enum : size_t {
  kSbMagic = 0,
  kSbVersion = 8,
  kSbBlockSize = 12,
  kSbRingOffset = 16,
  kSbCapacity = 24,
  kSbUuid = 32,
  kSbWriteCount = 48,
  kSbEpoch = 56,
  kSbTrimOffset = 64,
  kSbTrimSeq = 72,
  kSbCleanFlag = 80,  // u32: 1 = closed cleanly
  kSbCleanTail = 88,
  kSbCleanLastSeq = 96,
  kSbTrimEpoch = 104,
  kSbCrc = 120,  // crc of bytes [0, 120); [112, 120) is reserved (zero)
  // The owner part (absent, all zeros, in journals made before ABI 1.3).
  kSbOwnerMagic = 128,
  kSbOwnerIdLen = 132,    // u16
  kSbOwnerPathLen = 134,  // u16
  kSbOwnerId = 136,
  kSbOwnerPath = kSbOwnerId + kOwnerIdMax,
  kSbOwnerCrc = kSbOwnerPath + kOwnerPathMax,  // crc of bytes [128, kSbOwnerCrc)
};
static_assert(kSbOwnerCrc + 4 <= kSuperblockEncodedSize);

}  // namespace

void encode_record_header(const RecordHeader &h, uint8_t *out) {
  std::memset(out, 0, kRecordHeaderSize);
  put32(out + kRhMagic, kRecordMagic);
  put16(out + kRhType, static_cast<uint16_t>(h.type));
  put16(out + kRhSize, kRecordHeaderSize);
  put64(out + kRhJournalId, h.journal_id);
  put64(out + kRhEpoch, h.epoch);
  put64(out + kRhSeq, h.seq);
  put64(out + kRhDurableBelow, h.durable_below);
  put64(out + kRhPayloadLen, h.payload_len);
  put32(out + kRhPayloadCrc, h.payload_crc);
  put32(out + kRhHeaderCrc, crc32c(out, kRhHeaderCrc));
}

bool has_record_magic(const uint8_t *in) { return get32(in + kRhMagic) == kRecordMagic; }

std::optional<RecordHeader> decode_record_header(const uint8_t *in) {
  if (!has_record_magic(in)) return std::nullopt;
  if (get32(in + kRhHeaderCrc) != crc32c(in, kRhHeaderCrc)) return std::nullopt;
  if (get16(in + kRhSize) != kRecordHeaderSize) return std::nullopt;
  uint16_t type = get16(in + kRhType);
  if (type != static_cast<uint16_t>(RecordType::kData) &&
      type != static_cast<uint16_t>(RecordType::kPad))
    return std::nullopt;
  RecordHeader h;
  h.type = static_cast<RecordType>(type);
  h.journal_id = get64(in + kRhJournalId);
  h.epoch = get64(in + kRhEpoch);
  h.seq = get64(in + kRhSeq);
  h.durable_below = get64(in + kRhDurableBelow);
  h.payload_len = get64(in + kRhPayloadLen);
  h.payload_crc = get32(in + kRhPayloadCrc);
  return h;
}

uint64_t Superblock::journal_id() const {
  uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id |= static_cast<uint64_t>(uuid[i] ^ uuid[8 + i]) << (8 * i);
  return id;
}

void encode_superblock(const Superblock &sb, uint8_t *out) {
  std::memset(out, 0, kSuperblockEncodedSize);
  put64(out + kSbMagic, kSuperblockMagic);
  put32(out + kSbVersion, sb.format_version);
  put32(out + kSbBlockSize, sb.block_size);
  put64(out + kSbRingOffset, sb.ring_offset);
  put64(out + kSbCapacity, sb.capacity);
  std::memcpy(out + kSbUuid, sb.uuid.data(), sb.uuid.size());
  put64(out + kSbWriteCount, sb.write_count);
  put64(out + kSbEpoch, sb.epoch);
  put64(out + kSbTrimOffset, sb.trim_offset);
  put64(out + kSbTrimSeq, sb.trim_seq);
  put32(out + kSbCleanFlag, sb.clean ? 1 : 0);
  put64(out + kSbCleanTail, sb.clean_tail_offset);
  put64(out + kSbCleanLastSeq, sb.clean_last_seq);
  put64(out + kSbTrimEpoch, sb.trim_epoch);
  put32(out + kSbCrc, crc32c(out, kSbCrc));
  if (sb.owner_id.empty()) return;
  const size_t id_len = std::min(sb.owner_id.size(), kOwnerIdMax);
  const size_t path_len = std::min(sb.owner_path.size(), kOwnerPathMax);
  put32(out + kSbOwnerMagic, kOwnerMagic);
  put16(out + kSbOwnerIdLen, static_cast<uint16_t>(id_len));
  put16(out + kSbOwnerPathLen, static_cast<uint16_t>(path_len));
  std::memcpy(out + kSbOwnerId, sb.owner_id.data(), id_len);
  std::memcpy(out + kSbOwnerPath, sb.owner_path.data(), path_len);
  put32(out + kSbOwnerCrc, crc32c(out + kSbOwnerMagic, kSbOwnerCrc - kSbOwnerMagic));
}

std::optional<Superblock> decode_superblock(const uint8_t *in) {
  if (get64(in + kSbMagic) != kSuperblockMagic) return std::nullopt;
  if (get32(in + kSbCrc) != crc32c(in, kSbCrc)) return std::nullopt;
  Superblock sb;
  sb.format_version = get32(in + kSbVersion);
  sb.block_size = get32(in + kSbBlockSize);
  sb.ring_offset = get64(in + kSbRingOffset);
  sb.capacity = get64(in + kSbCapacity);
  std::memcpy(sb.uuid.data(), in + kSbUuid, sb.uuid.size());
  sb.write_count = get64(in + kSbWriteCount);
  sb.epoch = get64(in + kSbEpoch);
  sb.trim_offset = get64(in + kSbTrimOffset);
  sb.trim_seq = get64(in + kSbTrimSeq);
  sb.clean = get32(in + kSbCleanFlag) == 1;
  sb.clean_tail_offset = get64(in + kSbCleanTail);
  sb.clean_last_seq = get64(in + kSbCleanLastSeq);
  sb.trim_epoch = get64(in + kSbTrimEpoch);
  if (get32(in + kSbOwnerMagic) == kOwnerMagic) {
    if (get32(in + kSbOwnerCrc) != crc32c(in + kSbOwnerMagic, kSbOwnerCrc - kSbOwnerMagic))
      return std::nullopt;  // torn: the other copy wins
    const size_t id_len = std::min<size_t>(get16(in + kSbOwnerIdLen), kOwnerIdMax);
    const size_t path_len = std::min<size_t>(get16(in + kSbOwnerPathLen), kOwnerPathMax);
    sb.owner_id.assign(reinterpret_cast<const char *>(in + kSbOwnerId), id_len);
    sb.owner_path.assign(reinterpret_cast<const char *>(in + kSbOwnerPath), path_len);
  }
  return sb;
}

}  // namespace strata::journal
