// strata-journal-bench: how fast a journal plugin takes appends.
//
//   strata-journal-bench                       the default matrix: file (in /tmp) and
//                                              tmpfs (in /dev/shm), depth 1 and 32
//   strata-journal-bench --plugin file|tmpfs|PATH --dir DIR [--depth N] [--size BYTES]
//                        [--seconds S] [--capacity BYTES] [--set key=value ...]
//
// Depth is the number of appends in flight: the bench appends until that many
// are unacknowledged, then waits for the oldest callback. Acknowledged records
// are trimmed from the callback, so the ring never fills. Printed: appends/s,
// MB/s of payload, and records per device write (the group-commit ratio).
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "strata/journal.h"

namespace {

struct Config {
  std::string plugin;  // name or .so path
  std::string dir;
  unsigned depth = 1;
  size_t size = 4096;
  double seconds = 2.0;
  uint64_t capacity = 64ull << 20;
  std::vector<std::pair<std::string, std::string>> options;
};

const strata_plugin_descriptor *load(const std::string &plugin) {
  std::string path = plugin.find('/') != std::string::npos
                         ? plugin
                         : std::string(STRATA_BENCH_PLUGIN_DIR) + "/libstrata_journal_" + plugin +
                               ".so";
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "cannot load %s: %s\n", path.c_str(), dlerror());
    std::exit(2);
  }
  auto entry = reinterpret_cast<strata_plugin_entry_fn>(dlsym(h, "strata_plugin_entry_v1"));
  const strata_plugin_descriptor *d = entry ? entry() : nullptr;
  if (!d || d->kind != STRATA_KIND_JOURNAL) {
    std::fprintf(stderr, "%s is not a journal plugin\n", path.c_str());
    std::exit(2);
  }
  return d;
}

// Appends in flight, and the trim that follows the acknowledgements.
struct Window {
  std::mutex mu;
  std::condition_variable cv;
  unsigned in_flight = 0;
  uint64_t acked = 0;
  int error = 0;
  const strata_journal_ops *ops = nullptr;
  strata_journal *j = nullptr;
};

struct Ack {
  Window *w;
  uint64_t seq;
};

void on_durable(void *arg, int rc) {
  Ack *a = static_cast<Ack *>(arg);
  Window *w = a->w;
  strata_err err{};
  w->ops->trim(w->j, a->seq, &err);
  {
    std::lock_guard lk(w->mu);
    --w->in_flight;
    w->acked = a->seq;
    if (rc != 0 && w->error == 0) w->error = rc;
  }
  w->cv.notify_all();
  delete a;
}

void run(const Config &c) {
  const strata_plugin_descriptor *d = load(c.plugin);
  const auto *ops = static_cast<const strata_journal_ops *>(d->ops);
  std::filesystem::create_directories(c.dir);
  std::string path = c.dir + "/bench-journal-" + std::to_string(::getpid());

  std::vector<std::string> keep;
  std::vector<strata_kv> kvs;
  for (size_t i = 0; i < d->n_options; ++i) {
    std::string v = d->options[i].default_value ? d->options[i].default_value : "";
    for (const auto &[k, val] : c.options)
      if (k == d->options[i].name) v = val;
    keep.push_back(v);
  }
  for (size_t i = 0; i < d->n_options; ++i) kvs.push_back({d->options[i].name, keep[i].c_str()});
  strata_open_args args{};
  args.struct_size = sizeof args;
  args.path = path.c_str();
  args.options = kvs.data();
  args.n_options = kvs.size();

  strata_err err{};
  if (ops->create(&args, c.capacity, &err) != 0) {
    std::fprintf(stderr, "create %s: %s\n", path.c_str(), err.msg);
    std::exit(1);
  }
  Window w;
  w.ops = ops;
  if (ops->open(&args, &w.j, &err) != 0) {
    std::fprintf(stderr, "open %s: %s\n", path.c_str(), err.msg);
    std::exit(1);
  }
  strata_journal_replay_result res{};
  res.struct_size = sizeof res;
  ops->replay(w.j, 0, [](void *, uint64_t, const void *, size_t) { return 0; }, nullptr, &res,
              &err);

  std::string payload(c.size, 'j');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 131 + 7);
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(c.seconds);
  uint64_t seq = 0;
  while (std::chrono::steady_clock::now() < end) {
    {
      std::unique_lock lk(w.mu);
      w.cv.wait(lk, [&] { return w.in_flight < c.depth; });
      if (w.error) break;
      ++w.in_flight;
    }
    ++seq;
    if (ops->append(w.j, seq, payload.data(), payload.size(), on_durable, new Ack{&w, seq},
                    &err) != 0) {
      std::fprintf(stderr, "append %llu: %s\n", static_cast<unsigned long long>(seq), err.msg);
      std::exit(1);
    }
  }
  ops->flush(w.j, &err);
  {
    std::unique_lock lk(w.mu);
    w.cv.wait(lk, [&] { return w.in_flight == 0; });
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  strata_journal_stat st{};
  st.struct_size = sizeof st;
  ops->stat(w.j, &st);
  ops->close(w.j);
  ops->destroy(&args, &err);

  std::string opts;
  for (const auto &[k, v] : c.options) opts += " " + k + "=" + v;
  std::printf("%-6s %-10s depth %3u  %6zu B  %9.0f appends/s  %8.1f MB/s  %6.1f records/write%s\n",
              d->name, c.dir.c_str(), c.depth, c.size, static_cast<double>(seq) / secs,
              static_cast<double>(seq) * static_cast<double>(c.size) / secs / 1e6,
              st.device_writes ? static_cast<double>(st.records_written) /
                                     static_cast<double>(st.device_writes)
                               : 0.0,
              opts.c_str());
  std::fflush(stdout);
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: strata-journal-bench [--plugin file|tmpfs|PATH --dir DIR] [--depth N] "
               "[--size BYTES] [--seconds S] [--capacity BYTES] [--set key=value ...]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char **argv) {
  Config c;
  bool matrix = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--plugin") {
      c.plugin = value();
      matrix = false;
    } else if (a == "--dir") {
      c.dir = value();
    } else if (a == "--depth") {
      c.depth = static_cast<unsigned>(std::stoul(value()));
    } else if (a == "--size") {
      c.size = std::stoul(value());
    } else if (a == "--seconds") {
      c.seconds = std::stod(value());
    } else if (a == "--capacity") {
      c.capacity = std::stoull(value());
    } else if (a == "--set") {
      std::string kv = value();
      size_t eq = kv.find('=');
      if (eq == std::string::npos) usage();
      c.options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else {
      usage();
    }
  }
  if (c.depth == 0) usage();
  if (!matrix) {
    if (c.dir.empty()) usage();
    run(c);
    return 0;
  }
  for (const char *plugin : {"file", "tmpfs"}) {
    for (unsigned depth : {1u, 32u}) {
      Config m = c;
      m.plugin = plugin;
      m.dir = std::string(plugin) == "file" ? "/tmp" : "/dev/shm";
      m.depth = depth;
      run(m);
    }
  }
  return 0;
}
