// create_by_rename, the swap both journal plugins create their files with.
#include "journal_log/journal_path.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <stdexcept>

#include "journal_test_support.h"

using namespace strata::journal_test;
namespace jl = strata::journal;

namespace {

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void write_file(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("create_by_rename replaces the old file only with a whole new one", "[journal]") {
  TempDir dir;
  const std::string path = dir.path() + "/journal";
  write_file(path, "old journal");

  SECTION("a build that fails leaves the old file and no temporary") {
    CHECK_THROWS_AS(jl::create_by_rename(path,
                                         [](const std::string &tmp) {
                                           write_file(tmp, "half of a new");
                                           throw std::runtime_error("disk full");
                                         }),
                    std::runtime_error);
    CHECK(read_file(path) == "old journal");
    CHECK_FALSE(exists(jl::creating_path(path)));
  }
  SECTION("a build that succeeds is renamed over the old file") {
    std::string built_at;
    jl::create_by_rename(path, [&](const std::string &tmp) {
      built_at = tmp;
      CHECK(read_file(path) == "old journal");  // untouched while building
      write_file(tmp, "new journal");
    });
    CHECK(built_at == jl::creating_path(path));
    CHECK(read_file(path) == "new journal");
    CHECK_FALSE(exists(built_at));
  }
}
