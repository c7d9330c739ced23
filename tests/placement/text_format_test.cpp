// The text form: what operators edit and review must read back to the same
// map, and every mistake must be reported with its line.
#include "placement/fixed_point.h"
#include "placement/text_format.h"
#include "placement_test_support.h"

using namespace placement_test;

namespace {

const char *kRichMap = R"(# two racks, two classes
tunable choose_total_tries 40
type 0 device
type 1 host
type 2 rack
type 10 root

device 0 osd.0 weight 4 class hdd
device 1 osd.1 weight 2.5 class ssd reweight 0.8
device 2 osd.2 weight 1.0 class hdd out
device 3 osd.3 weight 0.00002 class ssd
device 4 osd.4 weight 1 class hdd
device 5 osd.5 weight 1 class ssd

rack r1 {          # ids left out: assigned
  h1
  h2
}
host h1 id -10 {
  osd.0
  osd.1
}
host h2{
  osd.2
  osd.3
}
rack r2 {
  h3
}
host h3 {
  osd.4
  osd.5
}
root default id -1 {
  r1
  r2
}

rule fast {
  take default class ssd
  chooseleaf firstn 0 type host
  emit
}
rule spread id 7 {
  take default
  choose firstn 2 type rack
  chooseleaf firstn 1 type host
  emit
}
exception 1.2f osd.0 -> osd.4
exception 1.2f osd.1 -> osd.5
exception 3.0 osd.2 -> osd.0
)";

// The error parse_text reports for `text`.
std::string error_of(const std::string &text) {
  auto m = parse_text(text);
  REQUIRE_FALSE(m.ok());
  return m.status().message();
}

const char *kHeader = "type 0 device\ntype 1 host\ntype 2 root\n";  // lines 1-3

}  // namespace

TEST_CASE("a map written as text reads back as the same map") {
  PlacementMap m = parse_ok(kRichMap);
  std::string text = format_text(m);
  PlacementMap again = parse_ok(text);
  CHECK(again == m);
  CHECK(format_text(again) == text);
}

TEST_CASE("the text reader keeps what was written and fills in missing ids") {
  PlacementMap m = parse_ok(kRichMap);
  CHECK(m.tunables.choose_total_tries == 40);
  REQUIRE(m.device(1));
  CHECK(m.device(1)->device_class == "ssd");
  CHECK(m.device(1)->reweight == parse_ok(kRichMap).device(1)->reweight);
  CHECK(m.device(2)->out);
  CHECK(m.device(2)->effective_reweight() == 0);
  CHECK(m.device(0)->weight == 4 * kWeightOne);
  CHECK(m.device(3)->weight == 1);  // 0.00002 rounds to one 16.16 step
  int32_t h1 = 0, r1 = 0;
  REQUIRE(m.item_by_name("h1", &h1));
  REQUIRE(m.item_by_name("r1", &r1));
  CHECK(h1 == -10);
  CHECK(r1 == -2);  // lowest free negative id in order of appearance
  REQUIRE(m.rule_by_name("fast"));
  CHECK(m.rule_by_name("fast")->id == 0);
  CHECK(m.rule_by_name("spread")->id == 7);
  CHECK(m.exceptions.at(PgId{1, 0x2f}).size() == 2);
}

TEST_CASE("weights print as the shortest decimal that reads back exactly") {
  for (Weight w : {0u, 1u, 3u, 52429u, kWeightOne, 3 * kWeightOne / 2, 0xffffffffu}) {
    Weight back = 0;
    REQUIRE(parse_fixed(format_fixed(w), &back));
    CHECK(back == w);
  }
  CHECK(format_fixed(kWeightOne) == "1.000");
  CHECK(format_fixed(52429) == "0.800");
  Weight w = 0;
  CHECK_FALSE(parse_fixed("-1", &w));
  CHECK_FALSE(parse_fixed("1e3", &w));
  CHECK_FALSE(parse_fixed("70000", &w));
}

TEST_CASE("an unknown bucket is reported with its line") {
  std::string text = std::string(kHeader) +
                     "device 0 osd.0 weight 1\n"        // 4
                     "root default {\n"                 // 5
                     "  hots1\n"                        // 6
                     "}\n";
  std::string e = error_of(text);
  CHECK_THAT(e, Catch::Contains("line 6") && Catch::Contains("unknown bucket or device 'hots1'"));

  std::string rule = std::string(kHeader) +
                     "device 0 osd.0 weight 1\n"
                     "host h {\n  osd.0\n}\n"           // 5-7
                     "rule r {\n"                       // 8
                     "  take nowhere\n"                 // 9
                     "  chooseleaf firstn 0 type host\n  emit\n}\n";
  CHECK_THAT(error_of(rule), Catch::Contains("line 9") && Catch::Contains("unknown bucket 'nowhere'"));
}

TEST_CASE("a cycle between buckets is reported with its line") {
  std::string text = std::string(kHeader) +
                     "device 0 osd.0 weight 1\n"   // 4
                     "host a {\n"                  // 5
                     "  b\n"
                     "  osd.0\n"
                     "}\n"
                     "host b {\n"                  // 9
                     "  a\n"
                     "}\n";
  std::string e = error_of(text);
  CHECK_THAT(e, Catch::Contains("line 5") && Catch::Contains("cycle") &&
                    Catch::Contains("'a' contains 'b'"));
}

TEST_CASE("a duplicate id is reported with its line and the first owner") {
  std::string devices = std::string(kHeader) +
                        "device 0 osd.0 weight 1\n"
                        "device 0 osd.1 weight 1\n";  // 5
  CHECK_THAT(error_of(devices), Catch::Contains("line 5") && Catch::Contains("duplicate id 0") &&
                                    Catch::Contains("osd.0"));
  std::string buckets = std::string(kHeader) +
                        "host a id -3 {\n}\n"
                        "host b id -3 {\n}\n";  // 6
  CHECK_THAT(error_of(buckets), Catch::Contains("line 6") && Catch::Contains("duplicate id -3"));
  std::string twice = std::string(kHeader) +
                      "device 0 osd.0 weight 1\n"
                      "host a {\n  osd.0\n}\n"
                      "host b {\n  osd.0\n}\n";  // item on line 9
  CHECK_THAT(error_of(twice), Catch::Contains("line 9") && Catch::Contains("already in bucket 'a'"));
}

TEST_CASE("a negative weight is reported with its line") {
  std::string text = std::string(kHeader) + "device 0 osd.0 weight -1.5\n";
  CHECK_THAT(error_of(text), Catch::Contains("line 4") && Catch::Contains("negative weight '-1.5'") &&
                                 Catch::Contains("osd.0"));
  std::string rw = std::string(kHeader) + "device 0 osd.0 weight 1 reweight -0.5\n";
  CHECK_THAT(error_of(rw), Catch::Contains("line 4") && Catch::Contains("negative reweight"));
  std::string big = std::string(kHeader) + "device 0 osd.0 weight 1 reweight 1.5\n";
  CHECK_THAT(error_of(big), Catch::Contains("line 4") && Catch::Contains("between 0 and 1"));
}

TEST_CASE("a rule that cannot be satisfied is reported with the step's line") {
  std::string base = std::string(kHeader) +
                     "device 0 osd.0 weight 1 class hdd\n"    // 4
                     "device 1 osd.1 weight 1 class hdd\n"    // 5
                     "host a {\n  osd.0\n}\n"                 // 6-8
                     "host b {\n  osd.1\n}\n"                 // 9-11
                     "root default {\n  a\n  b\n}\n"          // 12-15
                     "rule r {\n";                            // 16
  std::string no_class = base + "  take default class ssd\n  chooseleaf firstn 0 type host\n  emit\n}\n";
  CHECK_THAT(error_of(no_class), Catch::Contains("line 17") && Catch::Contains("cannot be satisfied") &&
                                     Catch::Contains("class 'ssd'"));
  std::string too_many = base + "  take default\n  chooseleaf firstn 3 type host\n  emit\n}\n";
  CHECK_THAT(error_of(too_many), Catch::Contains("line 18") && Catch::Contains("needs 3 'host'") &&
                                     Catch::Contains("found 2"));
  std::string no_emit = base + "  take default\n  chooseleaf firstn 0 type host\n}\n";
  CHECK_THAT(error_of(no_emit), Catch::Contains("does not end with emit"));
  std::string weightless = std::string(kHeader) + "device 0 osd.0 weight 0\n"
                           "root default {\n  osd.0\n}\n"
                           "rule r {\n  take default\n  choose firstn 1 type device\n  emit\n}\n";
  CHECK_THAT(error_of(weightless), Catch::Contains("line 9") && Catch::Contains("no device with weight"));
}

TEST_CASE("syntax mistakes are reported with their line") {
  CHECK_THAT(error_of(std::string(kHeader) + "devise 0 osd.0\n"),
             Catch::Contains("line 4") && Catch::Contains("unknown keyword or bucket type 'devise'"));
  CHECK_THAT(error_of(std::string(kHeader) + "device x osd.0\n"),
             Catch::Contains("line 4") && Catch::Contains("device id"));
  CHECK_THAT(error_of(std::string(kHeader) + "host a {\n  osd.0\n"),
             Catch::Contains("line 4") && Catch::Contains("not closed"));
  CHECK_THAT(error_of(std::string(kHeader) + "device 0 osd.0 weight 1 colour red\n"),
             Catch::Contains("line 4") && Catch::Contains("unknown device attribute 'colour'"));
  CHECK_THAT(error_of(std::string(kHeader) + "rule r {\n  pick 3\n}\n"),
             Catch::Contains("line 5") && Catch::Contains("unknown rule step 'pick'"));
  CHECK_THAT(error_of(std::string(kHeader) + "exception 1.zz osd.0 -> osd.1\n"),
             Catch::Contains("line 4") && Catch::Contains("bad PG id"));
  CHECK_THAT(error_of("type 1 host\n"), Catch::Contains("no type 0"));
}
