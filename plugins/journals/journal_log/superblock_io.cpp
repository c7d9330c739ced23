#include "journal_log/superblock_io.h"

#include <cerrno>
#include <random>

#include "journal_log/aligned_buffer.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::journal {

using sdk::make_error;

void check_block_size(uint64_t block_size) {
  bool power_of_two = block_size != 0 && (block_size & (block_size - 1)) == 0;
  if (!power_of_two || block_size < kMinBlockSize || block_size > kMaxBlockSize)
    throw make_error(EINVAL, "journal block size %llu is not a power of two in [%u, %u]",
                     static_cast<unsigned long long>(block_size), kMinBlockSize, kMaxBlockSize);
}

uint64_t medium_size_for(uint32_t block_size, uint64_t capacity) {
  return uint64_t{kSuperblockCopies} * block_size + capacity / block_size * block_size;
}

uint64_t capacity_for(uint32_t block_size, uint64_t medium_size) {
  uint64_t blocks = medium_size / block_size;
  return blocks > kSuperblockCopies ? (blocks - kSuperblockCopies) * block_size : 0;
}

Superblock load_superblock(Media &media) {
  // Copies sit at multiples of the block size, which we do not know yet; the
  // smallest block size is a multiple of any medium alignment we accept, so
  // read copy A from offset 0 and find copy B from A's block size, or scan the
  // possible block sizes when A is damaged.
  uint32_t align = media.alignment() > kMinBlockSize ? media.alignment() : kMinBlockSize;
  AlignedBuffer buf(align, align);
  auto read_copy = [&](uint64_t offset) -> std::optional<Superblock> {
    if (offset + align > media.size()) return std::nullopt;
    media.read(offset, buf.data(), align);
    return decode_superblock(buf.data());
  };

  std::optional<Superblock> a = read_copy(0);
  std::optional<Superblock> b;
  if (a) {
    b = read_copy(a->block_size);
  } else {
    for (uint64_t bs = kMinBlockSize; bs <= kMaxBlockSize && !b; bs *= 2) {
      if (bs < align) continue;
      b = read_copy(bs);
      if (b && b->block_size != bs) b.reset();
    }
  }
  if (!a && !b)
    throw make_error(EUCLEAN, "%s: no valid journal superblock at offset 0 or 1 block in",
                     media.name().c_str());
  Superblock sb = (a && (!b || a->write_count >= b->write_count)) ? *a : *b;

  if (sb.format_version != kFormatVersion)
    throw make_error(EINVAL, "%s: journal format version %u, this plugin reads version %u",
                     media.name().c_str(), sb.format_version, kFormatVersion);
  bool bs_ok = sb.block_size >= kMinBlockSize && sb.block_size <= kMaxBlockSize &&
               (sb.block_size & (sb.block_size - 1)) == 0 && sb.block_size % align == 0;
  bool geometry_ok = bs_ok && sb.capacity > 0 && sb.capacity % sb.block_size == 0 &&
                     sb.ring_offset == uint64_t{kSuperblockCopies} * sb.block_size &&
                     sb.ring_offset + sb.capacity <= media.size() &&
                     sb.trim_offset < sb.capacity && sb.trim_offset % sb.block_size == 0;
  if (!geometry_ok)
    throw make_error(EUCLEAN,
                     "%s: journal superblock (write %llu) has impossible geometry: block size "
                     "%u, ring at %llu + %llu bytes, trim offset %llu, medium %llu bytes",
                     media.name().c_str(), static_cast<unsigned long long>(sb.write_count),
                     sb.block_size, static_cast<unsigned long long>(sb.ring_offset),
                     static_cast<unsigned long long>(sb.capacity),
                     static_cast<unsigned long long>(sb.trim_offset),
                     static_cast<unsigned long long>(media.size()));
  return sb;
}

void store_superblock(Media &media, Superblock &sb) {
  ++sb.write_count;
  AlignedBuffer buf(sb.block_size, sb.block_size);
  encode_superblock(sb, buf.data());
  uint64_t offset = (sb.write_count % kSuperblockCopies) * sb.block_size;
  WriteRun run{offset, buf.data(), sb.block_size};
  media.write_durable({&run, 1});
}

Superblock format_journal(Media &media, uint32_t block_size, uint64_t capacity,
                          const JournalOwner &owner) {
  check_block_size(block_size);
  if (block_size % media.alignment() != 0)
    throw make_error(EINVAL, "%s: journal block size %u is not a multiple of the device's %u",
                     media.name().c_str(), block_size, media.alignment());
  Superblock sb;
  sb.block_size = block_size;
  sb.ring_offset = uint64_t{kSuperblockCopies} * block_size;
  sb.capacity = capacity / block_size * block_size;
  if (sb.capacity < 2ull * block_size)
    throw make_error(EINVAL, "%s: journal capacity %llu is below two blocks of %u bytes",
                     media.name().c_str(), static_cast<unsigned long long>(capacity),
                     block_size);
  if (sb.ring_offset + sb.capacity > media.size())
    throw make_error(ENOSPC, "%s: a journal of %llu bytes needs %llu bytes, the medium has %llu",
                     media.name().c_str(), static_cast<unsigned long long>(sb.capacity),
                     static_cast<unsigned long long>(sb.ring_offset + sb.capacity),
                     static_cast<unsigned long long>(media.size()));
  std::random_device rd;
  for (size_t i = 0; i < sb.uuid.size(); i += 4) {
    uint32_t r = rd();
    for (size_t k = 0; k < 4; ++k) sb.uuid[i + k] = static_cast<uint8_t>(r >> (8 * k));
  }
  sb.epoch = 1;
  sb.trim_offset = 0;
  sb.trim_seq = 0;
  // An empty log that ends at offset 0: the first open need not search the
  // (possibly never written) ring for evidence of corruption.
  sb.clean = true;
  sb.clean_tail_offset = 0;
  sb.clean_last_seq = 0;
  sb.owner_id = owner.id.substr(0, kOwnerIdMax);
  sb.owner_path = owner.path.substr(0, kOwnerPathMax);
  // Both copies, so a stale copy of an earlier journal cannot win later.
  sb.write_count = 0;
  store_superblock(media, sb);
  store_superblock(media, sb);
  return sb;
}

}  // namespace strata::journal
