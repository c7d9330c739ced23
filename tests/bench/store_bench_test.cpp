// The store bench as a library (bench/store): a pair measured through a
// BenchContext alone, with no CLI around it; the pair's store made from
// what the context returns and removed afterwards; fio's JSON read as fio
// prints it.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "bench/store/fio_baseline.h"
#include "bench/store/pair_runner.h"
#include "host/plugin_loader.h"

namespace strata::store_bench {
namespace {

namespace fs = std::filesystem;

const host::PluginRegistry &plugins() {
  static host::PluginRegistry reg = [] {
    host::PluginRegistry r({STRATA_TEST_PLUGIN_DIR});
    r.scan();
    return r;
  }();
  return reg;
}

Logger &quiet_log() {
  static Logger log(STRATA_LOG_ERROR, stderr);
  return log;
}

// A fresh directory for the bench's stores, removed with what is left in it.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("strata-store-bench-test-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// What run_pair asked its context for.
struct Calls {
  int mkfs = 0, settings = 0;
  PairSpec pair;
  uint64_t journal_size = 0;
  std::string dir;
};

BenchContext context(Calls &calls) {
  return {plugins(), quiet_log(),
          [&calls](const PairSpec &pair, uint64_t journal_size, const std::string &dir) {
            ++calls.mkfs;
            calls.pair = pair;
            calls.journal_size = journal_size;
            calls.dir = dir;
            store::MkfsParams p;
            p.dir = dir;
            p.backend = pair.backend;
            p.journal = pair.journal;
            p.journal_size = journal_size;
            return Result<store::MkfsParams>(p);
          },
          [&calls](const std::string &) {
            ++calls.settings;
            return Result<store::StoreSettings>(store::StoreSettings{});
          }};
}

// One pair measured with the creates workload only, briefly, without fio,
// in a fresh directory.
struct CreatesRun {
  TempDir tmp;
  Calls calls;
  BenchOptions opts;
  FioBaseline fio{"/nonexistent/fio"};

  CreatesRun() {
    opts.dir = tmp.path.string();
    opts.workloads = {"creates"};
    opts.seconds = 0.3;
    opts.journal_size = 32ull << 20;
    opts.fio = "/nonexistent/fio";
  }
  PairReport run(const PairSpec &pair) {
    const BenchContext ctx = context(calls);
    return run_pair(ctx, opts, pair, fio);
  }
};

}  // namespace

TEST_CASE("run_pair measures a pair on a store made from what its BenchContext says") {
  CreatesRun run;
  PairReport r = run.run({"kv", "file"});
  const Calls &calls = run.calls;

  INFO(r.reason);
  REQUIRE(r.status == "ok");
  CHECK(calls.mkfs == 1);
  CHECK(calls.settings == 1);
  CHECK(calls.pair.label() == "kv+file");
  CHECK(calls.journal_size == run.opts.journal_size);
  CHECK(calls.dir == r.dir);
  CHECK(r.dir.rfind(run.tmp.path.string() + "/strata-bench-kv-file-", 0) == 0);
  auto ops = r.value("creates", "ops");
  REQUIRE(ops);
  CHECK(*ops > 0);
  // The pair's store is gone once it is measured.
  CHECK_FALSE(fs::exists(r.dir));
}

TEST_CASE("run_pair skips a pair whose backend is not on the plugin path, saying so") {
  CreatesRun run;
  PairReport r = run.run({"nosuch", "file"});
  CHECK(r.status == "skipped");
  CHECK(r.reason == "no backend plugin 'nosuch' on the plugin path");
  CHECK(run.calls.mkfs == 0);
}

TEST_CASE("fio's JSON is read after the notes fio prints before it") {
  auto f = parse_fio_json(
      "fio: note: both iodepth >= 1 and synchronous I/O engine are selected\n"
      "{\"jobs\": [{\"jobname\": \"sync4k\", \"error\": 0,"
      " \"write\": {\"iops\": 250.5, \"bw_bytes\": 1026048, \"runtime\": 3000}}]}\n");
  REQUIRE(f.ok());
  CHECK(f->write_iops == Approx(250.5));
  CHECK(f->write_bytes_per_sec == Approx(1026048));
  CHECK(f->runtime_s == Approx(3.0));

  auto failed = parse_fio_json("{\"jobs\": [{\"error\": 5, \"write\": {}}]}");
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().message().find("error 5") != std::string::npos);
  CHECK_FALSE(parse_fio_json("fio: engine libaio not loadable\n").ok());
}

}  // namespace strata::store_bench
