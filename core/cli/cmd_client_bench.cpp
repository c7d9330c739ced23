// `strata bench objects write|seq|rand|cleanup --pool P`: an object
// benchmark like `rados bench`. `concurrency` operations stay in flight:
// each completion callback records its latency and starts the next
// operation itself (no hand-off to a driver thread), until `seconds` pass.
// write leaves its objects (and a small metadata object naming them) with
// --no-cleanup, so that seq (in order) and rand (uniformly random) can read
// them back; cleanup removes them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli/cmd_client_common.h"
#include "cli/commands.h"

namespace strata::cli {

namespace {

using Clock = std::chrono::steady_clock;

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

const char *kMetaObject = "strata_bench_meta";

enum class Mode { kWrite, kSeq, kRand };

struct Meta {
  std::string prefix;
  uint64_t objects = 0;
  uint64_t size = 0;
};

std::string meta_text(const Meta &m) {
  return "prefix=" + m.prefix + "\nobjects=" + std::to_string(m.objects) +
         "\nsize=" + std::to_string(m.size) + "\n";
}

Result<Meta> read_meta(strata_ioctx_t io) {
  char buf[4096];
  int64_t n = strata_read(io, kMetaObject, buf, sizeof buf, 0);
  if (n == -ENOENT)
    return Status::Error(ENOENT, "no benchmark objects in this pool (run `strata bench objects "
                                 "write --no-cleanup` first)");
  if (n < 0) return api_error(int(n), kMetaObject);
  Meta m;
  std::string text(buf, size_t(n));
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    if (k == "prefix") m.prefix = v;
    else if (k == "objects") m.objects = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "size") m.size = std::strtoull(v.c_str(), nullptr, 10);
  }
  // objects = 0: a write run that could not record its count (a full
  // cluster); cleanup still finds its objects (remove_objects).
  if (m.prefix.empty())
    return Status::Error(EINVAL, std::string(kMetaObject) + " is malformed");
  return m;
}

std::string object_name(const std::string &prefix, uint64_t i) {
  return prefix + "object" + std::to_string(i);
}

struct Run;

// One in-flight operation at a time; its callback starts the next.
struct Slot {
  Run *run = nullptr;
  std::string buf;  // read target
  Clock::time_point started;
  std::vector<uint32_t> latencies_us;
  std::mt19937_64 rng;
  std::string oid;
};

struct Run {
  strata_ioctx_t io = nullptr;
  Mode mode = Mode::kWrite;
  uint64_t size = 0;
  std::string prefix;
  uint64_t n_objects = 0;  // reads: how many exist
  std::string payload;
  Clock::time_point deadline;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> ops{0}, bytes{0}, errors{0};
  std::mutex mu;
  std::condition_variable cv;
  int active = 0;
  std::string first_error;
  int first_rc = 0;  // GUARDED_BY(mu)
};

void slot_done(Slot *s) {
  Run *r = s->run;
  std::lock_guard<std::mutex> g(r->mu);
  if (--r->active == 0) r->cv.notify_all();
}

void record_error(Run *r, const std::string &what, int rc = -EIO) {
  r->errors++;
  r->stop = true;
  std::lock_guard<std::mutex> g(r->mu);
  if (r->first_error.empty()) {
    r->first_error = what;
    r->first_rc = rc;
  }
}

void on_complete(strata_completion_t c, void *arg);

// Starts the slot's next operation; false when the slot has nothing more to do.
bool start_next(Slot *s) {
  Run *r = s->run;
  if (r->stop || Clock::now() >= r->deadline) return false;
  uint64_t index;
  if (r->mode == Mode::kRand) {
    index = s->rng() % r->n_objects;
  } else {
    index = r->next.fetch_add(1);
    if (r->mode == Mode::kSeq && index >= r->n_objects) return false;
  }
  s->oid = object_name(r->prefix, index);
  strata_completion_t c = nullptr;
  if (strata_completion_create(on_complete, s, &c) < 0) {
    record_error(r, strata_last_error());
    return false;
  }
  s->started = Clock::now();
  int rc = r->mode == Mode::kWrite
               ? strata_aio_write_full(r->io, s->oid.c_str(), c, r->payload.data(), r->payload.size())
               : strata_aio_read(r->io, s->oid.c_str(), c, s->buf.data(), s->buf.size(), 0);
  if (rc < 0) {
    record_error(r, s->oid + ": " + strata_last_error());
    strata_completion_release(c);
    return false;
  }
  strata_completion_release(c);  // the call holds its own reference
  return true;
}

void on_complete(strata_completion_t c, void *arg) {
  auto *s = static_cast<Slot *>(arg);
  Run *r = s->run;
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - s->started);
  int64_t rv = strata_completion_get_return_value(c);
  if (rv < 0) {
    record_error(r, s->oid + ": " + std::strerror(int(-rv)), int(rv));
  } else {
    s->latencies_us.push_back(uint32_t(std::min<int64_t>(us.count(), UINT32_MAX)));
    r->ops++;
    r->bytes += r->mode == Mode::kWrite ? r->size : uint64_t(rv);
  }
  if (!start_next(s)) slot_done(s);
}

struct Report {
  double seconds = 0;
  uint64_t ops = 0, bytes = 0, errors = 0;
  double avg_ms = 0, min_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;
};

Report run_bench(Run &r, int concurrency) {
  std::vector<Slot> slots(static_cast<size_t>(concurrency));
  std::random_device rd;
  auto t0 = Clock::now();
  {
    std::lock_guard<std::mutex> g(r.mu);
    r.active = concurrency;
  }
  for (Slot &s : slots) {
    s.run = &r;
    s.rng.seed(rd());
    if (r.mode != Mode::kWrite) s.buf.assign(r.size, '\0');
  }
  for (Slot &s : slots)
    if (!start_next(&s)) slot_done(&s);
  {
    std::unique_lock<std::mutex> lk(r.mu);
    r.cv.wait(lk, [&] { return r.active == 0; });
  }
  Report rep;
  rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  rep.ops = r.ops;
  rep.bytes = r.bytes;
  rep.errors = r.errors;
  std::vector<uint32_t> all;
  for (Slot &s : slots) all.insert(all.end(), s.latencies_us.begin(), s.latencies_us.end());
  if (!all.empty()) {
    std::sort(all.begin(), all.end());
    double sum = 0;
    for (uint32_t v : all) sum += v;
    auto pct = [&](double p) {
      size_t i = size_t(p * double(all.size() - 1) + 0.5);
      return all[std::min(i, all.size() - 1)] / 1000.0;
    };
    rep.avg_ms = sum / double(all.size()) / 1000.0;
    rep.min_ms = all.front() / 1000.0;
    rep.p50_ms = pct(0.50);
    rep.p99_ms = pct(0.99);
    rep.max_ms = all.back() / 1000.0;
  }
  return rep;
}

void print_report(const char *mode, const std::string &pool, uint64_t size, int concurrency,
                  const Report &rep, OutputFormat f, uint64_t objects) {
  double ops_s = rep.seconds > 0 ? double(rep.ops) / rep.seconds : 0;
  double mib_s = rep.seconds > 0 ? double(rep.bytes) / rep.seconds / 1048576.0 : 0;
  if (f == OutputFormat::kText) {
    std::printf("bench %s: pool %s, %llu-byte objects, concurrency %d, %.1f s\n", mode, pool.c_str(),
                static_cast<unsigned long long>(size), concurrency, rep.seconds);
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

// Removes prefix objects 0..n-1 with `concurrency` removals in flight.
// Removes prefix's objects 0..n-1 and any beyond (see below); *removed
// counts those that existed.
Status remove_objects(strata_ioctx_t io, const std::string &prefix, uint64_t n, int concurrency,
                      uint64_t *removed = nullptr) {
  uint64_t gone = 0;
  struct Pending {
    strata_completion_t c;
    std::string oid;
  };
  std::vector<Pending> window;
  Status first;
  auto drain = [&] {
    for (Pending &p : window) {
      int64_t rv = strata_completion_wait(p.c);
      gone += rv >= 0;
      if (rv < 0 && rv != -ENOENT && first.ok())
        first = Status::Error(int(rv), "removing " + p.oid);
      strata_completion_release(p.c);
    }
    window.clear();
  };
  auto remove = [&](uint64_t i) -> Status {
    Pending p{nullptr, object_name(prefix, i)};
    if (strata_completion_create(nullptr, nullptr, &p.c) < 0) return api_error(-ENOMEM, "cleanup");
    if (int rc = strata_aio_remove(io, p.oid.c_str(), p.c); rc < 0) {
      strata_completion_release(p.c);
      drain();
      return api_error(rc, p.oid);
    }
    window.push_back(p);
    return Status::OK();
  };
  for (uint64_t i = 0; i < n; ++i) {
    if (Status st = remove(i); !st.ok()) return st;
    if (window.size() >= size_t(concurrency)) drain();
  }
  drain();
  // Past the recorded count: objects of a run whose record stayed short
  // (the cluster filled before it could be updated). A write run leaves at
  // most `concurrency` holes in a row, so a whole window of missing names
  // means the end.
  for (uint64_t i = n;; i += uint64_t(concurrency)) {
    for (uint64_t j = i; j < i + uint64_t(concurrency); ++j)
      if (Status st = remove(j); !st.ok()) return st;
    bool any = false;
    for (Pending &p : window) {
      int64_t rv = strata_completion_wait(p.c);
      any |= rv >= 0;
      gone += rv >= 0;
      if (rv < 0 && rv != -ENOENT && first.ok()) first = Status::Error(int(rv), "removing " + p.oid);
      strata_completion_release(p.c);
    }
    window.clear();
    if (!any) break;
  }
  if (removed) *removed = gone;
  return first;
}

// What a write run says when the cluster refused its writes for space.
std::string full_message(const std::string &first_error) {
  return "the cluster is full (ENOSPC): " + first_error +
         "; `strata status` names the full OSDs; deletes still work (e.g. `strata bench "
         "objects cleanup`)";
}

std::string default_prefix() {
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  return std::string("bench_") + host + "_" + std::to_string(getpid()) + "_";
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
    auto meta = read_meta(*io);
    if (!meta.ok()) return fail(cmd, meta.status());
    uint64_t removed = 0;
    if (Status st = remove_objects(*io, meta->prefix, meta->objects, int(conc), &removed); !st.ok())
      return fail(cmd, st);
    strata_remove(*io, kMetaObject);
    if (o->format == OutputFormat::kText)
      std::printf("removed %llu objects\n", static_cast<unsigned long long>(removed));
    else
      print_json("{\"removed\":" + std::to_string(removed) + "}", o->format);
    return 0;
  }

  Run run;
  run.io = *io;
  run.deadline = Clock::now() + std::chrono::milliseconds(*ms);
  if (mode_name == "write") {
    run.mode = Mode::kWrite;
    run.size = *size;
    run.prefix = prefix.empty() ? default_prefix() : prefix;
    std::mt19937_64 rng(std::random_device{}());
    run.payload.resize(*size);
    for (size_t i = 0; i < run.payload.size(); i += 8) {
      uint64_t v = rng();
      std::memcpy(&run.payload[i], &v, std::min<size_t>(8, run.payload.size() - i));
    }
  } else {
    auto meta = read_meta(*io);
    if (!meta.ok()) return fail(cmd, meta.status());
    run.mode = mode_name == "seq" ? Mode::kSeq : Mode::kRand;
    run.size = meta->size;
    run.prefix = meta->prefix;
    run.n_objects = meta->objects;
    if (run.n_objects == 0)
      return fail(cmd, Status::Error(ENOENT, "the last write run recorded no objects to read"));
  }

  if (run.mode == Mode::kWrite && no_cleanup) {
    // Recorded before the run, so that cleanup finds the objects even if the
    // cluster fills up and refuses the final record.
    std::string text = meta_text(Meta{run.prefix, 0, run.size});
    if (int w = strata_write_full(*io, kMetaObject, text.data(), text.size()); w < 0)
      return fail(cmd, w == -ENOSPC ? Status::Error(ENOSPC, full_message(kMetaObject))
                                    : api_error(w, kMetaObject));
  }
  Report rep = run_bench(run, int(conc));
  uint64_t written = run.mode == Mode::kWrite ? std::min<uint64_t>(run.next, run.ops + run.errors) : 0;
  print_report(mode_name.c_str(), pool, run.size, int(conc), rep, o->format,
               run.mode == Mode::kWrite ? written : run.n_objects);
  int rc = 0;
  if (rep.errors)
    rc = fail(cmd, run.first_rc == -ENOSPC ? Status::Error(ENOSPC, full_message(run.first_error))
                                           : Status::Error(EIO, run.first_error));

  if (run.mode == Mode::kWrite) {
    if (no_cleanup) {
      Meta m{run.prefix, written, run.size};
      std::string text = meta_text(m);
      if (int w = strata_write_full(*io, kMetaObject, text.data(), text.size()); w < 0)
        rc = fail(cmd, api_error(w, kMetaObject)
                           .Context("recording " + std::to_string(written) +
                                    " objects (`bench objects cleanup` still finds them)"));
    } else if (Status st = remove_objects(*io, run.prefix, written, int(conc)); !st.ok()) {
      rc = fail(cmd, st.Context("cleanup"));
    }
  }
  return rc;
}

}  // namespace strata::cli
