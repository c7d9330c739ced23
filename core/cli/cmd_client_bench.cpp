// `strata bench objects write|seq|rand|cleanup --pool P`: an object
// benchmark like `rados bench` (the engine is bench/cluster/object_bench.h).
// This file parses the command line, connects, and prints the report.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/cluster/object_bench.h"
#include "cli/cmd_client_common.h"
#include "cli/commands.h"

namespace strata::cli {

namespace {

const char *kBenchUsage =
    "usage: strata bench objects write|seq|rand|cleanup --pool POOL [options]\n"
    "  write     write objects of --size for --seconds\n"
    "  seq       read back, in order, the objects of the last `write --no-cleanup`\n"
    "  rand      read them back in random order\n"
    "  cleanup   remove what a `write --no-cleanup` left\n"
    "options:\n"
    "  --size BYTES         object size (default 4M; e.g. 4K, 1M)\n"
    "  --concurrency N      operations in flight (default 16)\n"
    "  --seconds S          run time (default 10)\n"
    "  --no-cleanup         write: keep the objects for seq/rand\n"
    "  --prefix NAME        write: object name prefix (default bench_<host>_<pid>_)\n";

void print_report(const char *mode, const std::string &pool, uint64_t size, int concurrency,
                  const object_bench::Report &rep, OutputFormat f, uint64_t objects) {
  double ops_s = rep.seconds > 0 ? double(rep.ops) / rep.seconds : 0;
  double mib_s = rep.seconds > 0 ? double(rep.bytes) / rep.seconds / 1048576.0 : 0;
  if (f == OutputFormat::kText) {
    std::printf("bench %s: pool %s, %llu-byte objects, concurrency %d, %.1f s\n", mode,
                pool.c_str(), static_cast<unsigned long long>(size), concurrency, rep.seconds);
    std::printf("  ops        %llu (%.1f/s)\n", static_cast<unsigned long long>(rep.ops), ops_s);
    std::printf("  bandwidth  %.2f MiB/s\n", mib_s);
    std::printf("  latency    avg %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", rep.avg_ms,
                rep.p50_ms, rep.p99_ms, rep.max_ms);
    if (rep.errors) std::printf("  errors     %llu\n", static_cast<unsigned long long>(rep.errors));
    return;
  }
  char b[1024];
  std::snprintf(b, sizeof b,
                "{\"mode\":\"%s\",\"pool\":%s,\"object_size\":%llu,\"concurrency\":%d,"
                "\"seconds\":%.3f,\"ops\":%llu,\"ops_per_sec\":%.1f,\"bytes\":%llu,"
                "\"mib_per_sec\":%.3f,\"latency_ms\":{\"avg\":%.4f,\"min\":%.4f,\"p50\":%.4f,"
                "\"p99\":%.4f,\"max\":%.4f},\"errors\":%llu,\"objects\":%llu}",
                mode, json_quote(pool).c_str(), static_cast<unsigned long long>(size), concurrency,
                rep.seconds, static_cast<unsigned long long>(rep.ops), ops_s,
                static_cast<unsigned long long>(rep.bytes), mib_s, rep.avg_ms, rep.min_ms,
                rep.p50_ms, rep.p99_ms, rep.max_ms, static_cast<unsigned long long>(rep.errors),
                static_cast<unsigned long long>(objects));
  print_json(b, f);
}

}  // namespace

int cmd_bench(std::vector<std::string> args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kBenchUsage, args.empty() ? stderr : stdout);
    if (!args.empty()) std::fputs(common_options_help(), stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "objects")
    return usage_error("bench", "unknown benchmark '" + args[0] + "' (objects)", kBenchUsage);
  args.erase(args.begin());
  if (args.empty()) return usage_error("bench objects", "missing mode", kBenchUsage);
  std::string mode_name = args[0];
  args.erase(args.begin());
  const std::string cmd = "bench objects " + mode_name;
  if (mode_name != "write" && mode_name != "seq" && mode_name != "rand" && mode_name != "cleanup")
    return usage_error(cmd, "mode must be write, seq, rand or cleanup", kBenchUsage);

  ArgList list(std::move(args));
  auto o = take_common_options(list);
  if (!o.ok()) return usage_error(cmd, o.status().message(), kBenchUsage);
  if (o->help) {
    std::fputs(kBenchUsage, stdout);
    std::fputs(common_options_help(), stdout);
    return 0;
  }
  std::string pool, size_s = "4M", conc_s = "16", secs_s = "10", prefix;
  for (auto [flag, out] : {std::pair<const char *, std::string *>{"--pool", &pool},
                           {"--size", &size_s}, {"--concurrency", &conc_s},
                           {"--seconds", &secs_s}, {"--prefix", &prefix}}) {
    auto v = list.take(flag);
    if (!v.ok()) return usage_error(cmd, v.status().message(), kBenchUsage);
    if (*v) *out = **v;
  }
  if (pool.empty()) {
    auto v = list.take("-p");
    if (v.ok() && *v) pool = **v;
  }
  bool no_cleanup = list.take_flag("--no-cleanup");
  auto pos = list.positional();
  if (!pos.ok()) return usage_error(cmd, pos.status().message(), kBenchUsage);
  if (!pos->empty()) return usage_error(cmd, "unexpected argument " + (*pos)[0], kBenchUsage);
  if (pool.empty()) return usage_error(cmd, "--pool is required", kBenchUsage);
  auto size = parse_bytes(size_s);
  if (!size.ok() || *size == 0 || *size > STRATA_MAX_OP_DATA)
    return usage_error(cmd, "--size must be 1 byte .. 128M", kBenchUsage);
  char *end = nullptr;
  long conc = std::strtol(conc_s.c_str(), &end, 10);
  if (*end || conc < 1 || conc > 4096)
    return usage_error(cmd, "--concurrency must be 1..4096", kBenchUsage);
  auto ms = parse_duration_ms(secs_s);
  if (!ms.ok() || *ms == 0) return usage_error(cmd, "--seconds must be positive", kBenchUsage);

  auto s = Session::open(*o);
  if (!s.ok()) return fail(cmd, s.status());
  auto io = (*s)->ioctx(pool);
  if (!io.ok()) return fail(cmd, io.status());

  if (mode_name == "cleanup") {
    uint64_t removed = 0;
    if (Status st = object_bench::cleanup(*io, int(conc), &removed); !st.ok()) return fail(cmd, st);
    if (o->format == OutputFormat::kText)
      std::printf("removed %llu objects\n", static_cast<unsigned long long>(removed));
    else
      print_json("{\"removed\":" + std::to_string(removed) + "}", o->format);
    return 0;
  }

  object_bench::Spec spec;
  spec.mode = mode_name == "write" ? object_bench::Mode::kWrite
              : mode_name == "seq" ? object_bench::Mode::kSeq
                                   : object_bench::Mode::kRand;
  spec.object_size = *size;
  spec.prefix = prefix;
  spec.concurrency = int(conc);
  spec.duration_ms = *ms;
  spec.keep = no_cleanup;
  auto bench = object_bench::ObjectBench::prepare(*io, spec);
  if (!bench.ok()) return fail(cmd, bench.status());
  object_bench::Report rep = (*bench)->run();
  print_report(mode_name.c_str(), pool, (*bench)->object_size(), int(conc), rep, o->format,
               (*bench)->objects());
  int rc = 0;
  if (Status st = (*bench)->run_error(); !st.ok()) rc = fail(cmd, st);
  if (Status st = (*bench)->finish(); !st.ok()) rc = fail(cmd, st);
  return rc;
}

}  // namespace strata::cli
