// `strata placement` end to end through cmd_placement(): build, convert,
// test, diff and balance on files, as an operator would.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/cmd_placement.h"
#include "placement/map_file.h"
#include "placement_test_support.h"

using namespace placement_test;
namespace fs = std::filesystem;

namespace {

int run(std::vector<std::string> args) {
  args.insert(args.begin(), "placement");
  std::vector<char *> argv;
  for (std::string &a : args) argv.push_back(a.data());
  return cmd_placement(int(argv.size()), argv.data());
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("strata-placement-cli-" + std::to_string(::getpid()));
    fs::create_directories(path);
    ::setenv("STRATA_PLUGIN_PATH", STRATA_TEST_PLUGIN_DIR, 1);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string &f) const { return (path / f).string(); }
};

}  // namespace

TEST_CASE("the placement command builds, compiles and decompiles a map losslessly") {
  TempDir dir;
  REQUIRE(run({"build", "--layout", "rack:2,host:3,device:2", "--weights", "1,2", "-o", dir / "m.txt"}) == 0);
  REQUIRE(run({"compile", dir / "m.txt", "-o", dir / "m.bin"}) == 0);
  REQUIRE(run({"decompile", dir / "m.bin", "-o", dir / "back.txt"}) == 0);
  auto a = load_map(dir / "m.txt"), b = load_map(dir / "m.bin"), c = load_map(dir / "back.txt");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(c.ok());
  CHECK(a.value() == b.value());
  CHECK(a.value() == c.value());
  CHECK(a.value().devices.size() == 12);
}

TEST_CASE("the placement command tests, diffs and balances maps") {
  TempDir dir;
  REQUIRE(run({"build", "--hosts", "4", "--devices", "3", "-o", dir / "a.txt"}) == 0);
  REQUIRE(run({"build", "--hosts", "5", "--devices", "3", "-o", dir / "b.txt"}) == 0);
  for (std::string plugin : all_plugins())
    CHECK(run({"test", dir / "a.txt", "--plugin", plugin, "--max-x", "999", "--bench-seconds",
               "0.01", "--no-devices"}) == 0);
  CHECK(run({"diff", dir / "a.txt", dir / "b.txt", "--max-x", "999"}) == 0);
  CHECK(run({"balance", dir / "a.txt", "--pg-num", "128", "-o", dir / "bal.txt"}) == 0);
  CHECK(run({"test", dir / "bal.txt", "--pg-num", "128", "--bench-seconds", "0"}) == 0);
}

TEST_CASE("the placement command reports bad input with a non-zero exit") {
  TempDir dir;
  std::ofstream(dir / "bad.txt") << "type 0 device\ndevice 0 osd.0 weight -1\n";
  CHECK(run({"test", dir / "bad.txt"}) == 1);
  CHECK(run({"test", dir / "missing.txt"}) == 1);
  CHECK(run({"frobnicate"}) == 2);
  CHECK(run({"build"}) == 2);
  CHECK(run({"test", dir / "bad.txt", "--no-such-option"}) == 2);
}
