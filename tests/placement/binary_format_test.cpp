// The compact binary form carried in the cluster map: lossless, and any
// corruption or a newer format is refused with a clear reason.
#include "placement/binary_format.h"
#include "placement/text_format.h"
#include "placement_test_support.h"

using namespace placement_test;

namespace {

PlacementMap sample() {
  PlacementMap m = hosts_map(4, 3, {kWeightOne, 2 * kWeightOne});
  m.devices[2].device_class = "ssd";
  m.devices[3].reweight = kWeightOne / 2;
  m.devices[4].out = true;
  m.exceptions[PgId{2, 7}] = {{0, 5}, {1, 8}};
  m.tunables.choose_total_tries = 77;
  return m;
}

}  // namespace

TEST_CASE("a map encoded in binary decodes to the same map") {
  PlacementMap m = sample();
  auto back = decode_binary(encode_binary(m));
  INFO(back.status().message());
  REQUIRE(back.ok());
  CHECK(back.value() == m);
  CHECK(looks_binary(encode_binary(m)));
  CHECK_FALSE(looks_binary(format_text(m)));
}

TEST_CASE("the binary form is smaller than the text form") {
  PlacementMap m = hosts_map(10, 10);
  CHECK(encode_binary(m).size() < format_text(m).size());
}

TEST_CASE("a corrupted binary map is refused by its checksum") {
  std::string bytes = encode_binary(sample());
  bytes[bytes.size() / 2] ^= 0x40;
  auto r = decode_binary(bytes);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("checksum mismatch"));
}

TEST_CASE("a truncated binary map is refused") {
  std::string bytes = encode_binary(sample());
  auto r = decode_binary(bytes.substr(0, bytes.size() - 3));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("truncated"));
}

TEST_CASE("a binary map of a newer format version is refused") {
  std::string bytes = encode_binary(sample());
  bytes[4] = char(kBinaryFormatVersion + 1);
  auto r = decode_binary(bytes);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("newer"));
}
