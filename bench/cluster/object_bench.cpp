#include "bench/cluster/object_bench.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace strata::object_bench {

namespace {

using Clock = std::chrono::steady_clock;

// The failure of the last C API call in this thread.
Status api_error(int rc, const std::string &what) {
  const char *msg = strata_last_error();
  return Status::Error(rc, what + (msg && *msg ? std::string(": ") + msg : ""));
}

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
    return Status::Error(ENOENT,
                         "no benchmark objects in this pool (run `strata bench objects "
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
    if (k == "prefix")
      m.prefix = v;
    else if (k == "objects")
      m.objects = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "size")
      m.size = std::strtoull(v.c_str(), nullptr, 10);
  }
  // objects = 0: a write run that could not record its count (a full
  // cluster); cleanup still finds its objects (remove_objects).
  if (m.prefix.empty()) return Status::Error(EINVAL, std::string(kMetaObject) + " is malformed");
  return m;
}

std::string object_name(const std::string &prefix, uint64_t i) {
  return prefix + "object" + std::to_string(i);
}

}  // namespace

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

namespace {

// One in-flight operation at a time; its callback starts the next.
struct Slot {
  Run *run = nullptr;
  std::string buf;  // read target
  Clock::time_point started;
  std::vector<uint32_t> latencies_us;
  std::mt19937_64 rng;
  std::string oid;
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
  int rc =
      r->mode == Mode::kWrite
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
      if (rv < 0 && rv != -ENOENT && first.ok())
        first = Status::Error(int(rv), "removing " + p.oid);
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

ObjectBench::ObjectBench(strata_ioctx_t io, const Spec &spec)
    : io_(io), spec_(spec), run_(std::make_unique<Run>()) {}

ObjectBench::~ObjectBench() = default;

Result<std::unique_ptr<ObjectBench>> ObjectBench::prepare(strata_ioctx_t io, const Spec &spec) {
  std::unique_ptr<ObjectBench> b(new ObjectBench(io, spec));
  Run &run = *b->run_;
  run.io = io;
  run.deadline = Clock::now() + std::chrono::milliseconds(spec.duration_ms);
  if (spec.mode == Mode::kWrite) {
    run.mode = Mode::kWrite;
    run.size = spec.object_size;
    run.prefix = spec.prefix.empty() ? default_prefix() : spec.prefix;
    std::mt19937_64 rng(std::random_device{}());
    run.payload.resize(spec.object_size);
    for (size_t i = 0; i < run.payload.size(); i += 8) {
      uint64_t v = rng();
      std::memcpy(&run.payload[i], &v, std::min<size_t>(8, run.payload.size() - i));
    }
  } else {
    auto meta = read_meta(io);
    if (!meta.ok()) return meta.status();
    run.mode = spec.mode;
    run.size = meta->size;
    run.prefix = meta->prefix;
    run.n_objects = meta->objects;
    if (run.n_objects == 0)
      return Status::Error(ENOENT, "the last write run recorded no objects to read");
  }

  if (run.mode == Mode::kWrite && spec.keep) {
    // Recorded before the run, so that cleanup finds the objects even if the
    // cluster fills up and refuses the final record.
    std::string text = meta_text(Meta{run.prefix, 0, run.size});
    if (int w = strata_write_full(io, kMetaObject, text.data(), text.size()); w < 0)
      return w == -ENOSPC ? Status::Error(ENOSPC, full_message(kMetaObject))
                          : api_error(w, kMetaObject);
  }
  return b;
}

Report ObjectBench::run() { return run_bench(*run_, spec_.concurrency); }

uint64_t ObjectBench::object_size() const { return run_->size; }

uint64_t ObjectBench::objects() const {
  if (run_->mode != Mode::kWrite) return run_->n_objects;
  return std::min<uint64_t>(run_->next, run_->ops + run_->errors);
}

Status ObjectBench::run_error() const {
  if (run_->errors == 0) return Status::OK();
  return run_->first_rc == -ENOSPC ? Status::Error(ENOSPC, full_message(run_->first_error))
                                   : Status::Error(EIO, run_->first_error);
}

Status ObjectBench::finish() {
  if (run_->mode != Mode::kWrite) return Status::OK();
  const uint64_t written = objects();
  if (spec_.keep) {
    Meta m{run_->prefix, written, run_->size};
    std::string text = meta_text(m);
    if (int w = strata_write_full(io_, kMetaObject, text.data(), text.size()); w < 0)
      return api_error(w, kMetaObject)
          .Context("recording " + std::to_string(written) +
                   " objects (`bench objects cleanup` still finds them)");
    return Status::OK();
  }
  if (Status st = remove_objects(io_, run_->prefix, written, spec_.concurrency); !st.ok())
    return st.Context("cleanup");
  return Status::OK();
}

Status cleanup(strata_ioctx_t io, int concurrency, uint64_t *removed) {
  auto meta = read_meta(io);
  if (!meta.ok()) return meta.status();
  if (Status st = remove_objects(io, meta->prefix, meta->objects, concurrency, removed); !st.ok())
    return st;
  strata_remove(io, kMetaObject);
  return Status::OK();
}

}  // namespace strata::object_bench
