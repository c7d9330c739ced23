// kv backend, checksums of data at rest: a chunk whose stored bytes were
// changed behind the store's back (through the database itself) reads as
// EIO naming the object and the block, never as the changed bytes.
#include <catch2/catch.hpp>

#include "kv/chunk_image.h"
#include "kv/key_layout.h"
#include "kv/store_dir.h"
#include "kv_harness.h"
#include "kvdb/kvdb.h"

using namespace strata;
using namespace strata::test;

namespace {

std::string pattern(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((seed * 131 + i * 7) % 251 + 1);
  return s;
}

// With the store closed: overwrites `len` bytes at `offset` of the stored
// value of chunk `index` of c/o, in place (same value length).
void scribble_chunk(const KvHarness &h, std::string_view o, uint64_t index, size_t offset,
                    size_t len) {
  kvdb::OpenOptions opts;
  opts.engine = *kv::read_engine_marker(h.path());
  auto db = kvdb::Database::open(kv::database_dir(h.path()), opts);
  std::string key = kv::ObjectKeys("c", o).chunk(index);
  std::string value;
  REQUIRE(db->get(key, &value));
  REQUIRE(offset + len <= value.size());
  for (size_t i = 0; i < len; ++i) value[offset + i] = static_cast<char>(value[offset + i] ^ 0x5a);
  kvdb::Batch b;
  b.put(key, value);
  db->write(b, {.sync = true});
}

bool logged(const KvHarness &h, std::string_view text) {
  for (const std::string &line : h.log_lines())
    if (line.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the kv backend advertises data checksums", "[kv][checksum]") {
  KvHarness h("rocksdb");
  CHECK((h.ops().capabilities(h.os()) & STRATA_OS_CAP_DATA_CHECKSUMS) != 0);
}

TEST_CASE("bytes changed in a stored chunk read as EIO, other blocks and objects fine",
          "[kv][checksum]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  const size_t size = GENERATE(size_t{64} << 10, size_t{2} << 20);
  const std::string victim = pattern(size, 1), bystander = pattern(size, 2);
  h.apply(1, TxnBuilder()
                 .mkcoll("c")
                 .write("c", "victim", 0, victim)
                 .write("c", "bystander", 0, bystander));
  h.checkpoint(1);
  h.close();
  scribble_chunk(h, "victim", 0, 5000, 19);  // inside block 1 of chunk 0
  h.open();

  // ABI 1.3: the count the log reports, asked through the control call.
  auto failures = [&] {
    uint64_t n = UINT64_MAX;
    strata_err err{};
    REQUIRE(h.ops().control(h.os(), STRATA_OS_CTL_CHECKSUM_FAILURES, &n, &err) == 0);
    return n;
  };
  CHECK(failures() == 0);
  std::string out;
  CHECK(h.read_rc("c", "victim", 0, size, &out) == -EIO);
  CHECK(failures() == 1);
  INFO(h.last_error());
  CHECK(h.last_error().find("victim") != std::string::npos);
  CHECK(h.last_error().find("block 1 (bytes 4096..8192)") != std::string::npos);
  CHECK(h.read_rc("c", "victim", 4999, 1, &out) == -EIO);
  CHECK(logged(h, "1 checksum failure"));
  CHECK(h.read("c", "victim", 0, 4096) == victim.substr(0, 4096));
  CHECK(h.read("c", "victim", 8192, size - 8192) == victim.substr(8192));
  CHECK(h.read("c", "bystander", 0, size) == bystander);
  CHECK(failures() == 2);
}

TEST_CASE("a read never hands out the bytes of a kv block that failed its checksum",
          "[kv][checksum]") {
  KvHarness h("rocksdb");
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", 0, pattern(16384, 3)));
  h.checkpoint(1);
  h.close();
  scribble_chunk(h, "o", 0, 4096, 19);
  h.open();
  std::string out;
  CHECK(h.read_rc("c", "o", 0, 16384, &out) == -EIO);
  CHECK(out.empty());
}

TEST_CASE("a kv write into part of a corrupt block is applied but never blesses the bad bytes",
          "[kv][checksum]") {
  KvHarness h("rocksdb");
  const std::string data = pattern(16384, 4);
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", 0, data));
  h.checkpoint(1);
  h.close();
  scribble_chunk(h, "o", 0, 4100, 19);
  h.open();
  // Acknowledged when journaled: applying it must not fail (that would stop
  // the store), and the block it touched in part must stay unreadable.
  CHECK(h.try_apply(2, TxnBuilder().write("c", "o", 4096 + 1000, "partial")) == 0);
  std::string out;
  CHECK(h.read_rc("c", "o", 4096 + 1000, 7, &out) == -EIO);
  CHECK(h.read("c", "o", 0, 4096) == data.substr(0, 4096));
  // A write of the whole block replaces the bad bytes and repairs it.
  h.apply(3, TxnBuilder().write("c", "o", 4096, data.substr(4096, 4096)));
  CHECK(h.read("c", "o", 0, data.size()) == data);
}

TEST_CASE("every kind of kv data change keeps the checksums right", "[kv][checksum]") {
  KvHarness h("rocksdb");
  std::string model = pattern(10000, 5);
  h.apply(1, TxnBuilder().mkcoll("c").write_full("c", "o", model));
  h.apply(2, TxnBuilder()
                 .write("c", "o", 4000, pattern(300, 6))
                 .write("c", "o", 10000, pattern(70000, 7)));
  model.replace(4000, 300, pattern(300, 6));
  model += pattern(70000, 7);
  h.apply(
      3,
      TxnBuilder().truncate("c", "o", 66001).zero("c", "o", 3000, 2000).truncate("c", "o", 90000));
  model.resize(66001);
  model.replace(3000, 2000, std::string(2000, '\0'));
  model.resize(90000, '\0');
  h.apply(4, TxnBuilder().write("c", "o", 70000, "tail").clone("c", "o", "copy"));
  model.replace(70000, 4, "tail");
  const std::string copy = model;
  h.apply(5, TxnBuilder().write("c", "o", 1, "after the clone"));
  model.replace(1, 15, "after the clone");
  h.checkpoint(5);

  CHECK(h.read("c", "o", 0, model.size()) == model);
  CHECK(h.read("c", "copy", 0, copy.size()) == copy);
  CHECK(h.read("c", "o", 65530, 10) == model.substr(65530, 10));
  CHECK(h.fsck() == 0);
}

TEST_CASE("kv fsck names the objects whose blocks fail their checksum", "[kv][checksum]") {
  KvHarness h("rocksdb");
  h.apply(1, TxnBuilder()
                 .mkcoll("c")
                 .write("c", "victim", 0, pattern(40000, 8))
                 .write("c", "fine", 0, pattern(40000, 9)));
  h.checkpoint(1);
  h.close();
  scribble_chunk(h, "victim", 0, 33000, 19);
  h.open();
  CHECK(h.fsck() == 1);
  CHECK(logged(h, "victim"));
  CHECK(logged(h, "block 8 (bytes 32768..36864)"));
}

TEST_CASE("a chunk of any length keeps its bytes and checksums through encode and decode",
          "[kv][checksum]") {
  constexpr uint64_t kBlock = 4096;
  for (uint64_t len : {uint64_t{1}, uint64_t{4095}, uint64_t{4096}, uint64_t{4097}, uint64_t{8191},
                       uint64_t{12288}, uint64_t{65535}, uint64_t{65536}}) {
    INFO("length " << len);
    kv::ChunkImage image(std::string(), kBlock, 0);
    image.overwrite(0, pattern(len, 10));
    std::string stored = std::move(image).encode();
    CHECK(stored.size() == len + 4 * ((len + kBlock - 1) / kBlock));
    CHECK(kv::verified_chunk_bytes(stored, kBlock, 0, 0, len) == pattern(len, 10));
  }
}
