// The on-media format of the shared journal log: checksums, record headers,
// superblocks, footprints.
#include <catch2/catch.hpp>
#include <cstring>

#include "journal_log/crc32c.h"
#include "journal_log/format.h"

using namespace strata::journal;

TEST_CASE("crc32c of the standard check string is 0xE3069283", "[journal_log]") {
  REQUIRE(crc32c("123456789", 9) == 0xE3069283u);
  REQUIRE(crc32c("", 0) == 0u);
}

TEST_CASE("a record header survives encoding, and any flipped bit invalidates it",
          "[journal_log]") {
  RecordHeader h;
  h.type = RecordType::kData;
  h.journal_id = 0x1122334455667788ull;
  h.epoch = 7;
  h.seq = 123456789;
  h.durable_below = 123456780;
  h.payload_len = 4000;
  h.payload_crc = 0xdeadbeef;
  uint8_t buf[kRecordHeaderSize];
  encode_record_header(h, buf);
  auto back = decode_record_header(buf);
  REQUIRE(back);
  CHECK(back->type == h.type);
  CHECK(back->journal_id == h.journal_id);
  CHECK(back->epoch == h.epoch);
  CHECK(back->seq == h.seq);
  CHECK(back->durable_below == h.durable_below);
  CHECK(back->payload_len == h.payload_len);
  CHECK(back->payload_crc == h.payload_crc);

  for (size_t bit = 0; bit < kRecordHeaderSize * 8; bit += 7) {
    uint8_t bad[kRecordHeaderSize];
    std::memcpy(bad, buf, sizeof bad);
    bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    INFO("flipped bit " << bit);
    CHECK_FALSE(decode_record_header(bad));
  }
}

TEST_CASE("a superblock survives encoding and a damaged one is rejected", "[journal_log]") {
  Superblock sb;
  sb.block_size = 8192;
  sb.ring_offset = 16384;
  sb.capacity = 1 << 20;
  for (size_t i = 0; i < sb.uuid.size(); ++i) sb.uuid[i] = static_cast<uint8_t>(i * 17 + 3);
  sb.write_count = 42;
  sb.epoch = 9;
  sb.trim_offset = 65536;
  sb.trim_seq = 1000;
  sb.trim_epoch = 8;
  sb.clean = true;
  sb.clean_tail_offset = 73728;
  sb.clean_last_seq = 1010;
  uint8_t buf[kSuperblockEncodedSize];
  encode_superblock(sb, buf);
  auto back = decode_superblock(buf);
  REQUIRE(back);
  CHECK(back->block_size == sb.block_size);
  CHECK(back->ring_offset == sb.ring_offset);
  CHECK(back->capacity == sb.capacity);
  CHECK(back->uuid == sb.uuid);
  CHECK(back->journal_id() == sb.journal_id());
  CHECK(back->write_count == sb.write_count);
  CHECK(back->epoch == sb.epoch);
  CHECK(back->trim_offset == sb.trim_offset);
  CHECK(back->trim_seq == sb.trim_seq);
  CHECK(back->trim_epoch == sb.trim_epoch);
  CHECK(back->clean == sb.clean);
  CHECK(back->clean_tail_offset == sb.clean_tail_offset);
  CHECK(back->clean_last_seq == sb.clean_last_seq);
  buf[70] ^= 0x10;
  CHECK_FALSE(decode_superblock(buf));
}

TEST_CASE("a record occupies whole blocks including its 64-byte header", "[journal_log]") {
  CHECK(record_footprint(0, 4096) == 4096);
  CHECK(record_footprint(4096 - 64, 4096) == 4096);
  CHECK(record_footprint(4096 - 63, 4096) == 8192);
  CHECK(record_footprint(100000, 512) == 100352);
}

TEST_CASE("a superblock keeps its owner, reads none from an older journal, rejects a torn one",
          "[journal_log]") {
  Superblock sb;
  sb.capacity = 1 << 20;
  sb.ring_offset = 8192;
  uint8_t old_format[kSuperblockEncodedSize];
  encode_superblock(sb, old_format);  // no owner: bytes past 128 stay zero
  for (size_t i = 128; i < kSuperblockEncodedSize; ++i) REQUIRE(old_format[i] == 0);
  auto none = decode_superblock(old_format);
  REQUIRE(none);
  CHECK(none->owner_id.empty());

  sb.owner_id = "0badc0de-0000-4000-8000-000000000001";
  sb.owner_path = "/var/lib/strata/osd.3/store";
  uint8_t buf[kSuperblockEncodedSize];
  encode_superblock(sb, buf);
  auto back = decode_superblock(buf);
  REQUIRE(back);
  CHECK(back->owner_id == sb.owner_id);
  CHECK(back->owner_path == sb.owner_path);
  buf[200] ^= 0x01;  // inside the owner path
  CHECK_FALSE(decode_superblock(buf));
}
