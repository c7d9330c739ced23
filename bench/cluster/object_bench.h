// The engine of `strata bench objects write|seq|rand|cleanup` (the command
// is core/cli/cmd_client_bench.cpp): an object benchmark over the client C
// API (strata/client.h), like `rados bench`. `concurrency` operations stay
// in flight: each completion callback records its latency and starts the
// next operation itself (no hand-off to a driver thread), until the time is
// up. A write run that keeps its objects leaves a small record naming them
// (object kMetaObject), so that seq (in order) and rand (uniformly random)
// can read them back and cleanup can remove them.
//
// Threading: ObjectBench::run() blocks its caller until every operation has
// completed; the completion callbacks run on the client library's threads
// and touch only that run's state. Everything else runs on the caller's
// thread, one call at a time per ObjectBench.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "strata/client.h"

namespace strata::object_bench {

// The record a kept write run leaves in its pool.
inline constexpr const char *kMetaObject = "strata_bench_meta";

enum class Mode { kWrite, kSeq, kRand };

struct Spec {
  Mode mode = Mode::kWrite;
  uint64_t object_size = 0;  // write: the size of every object
  std::string prefix;        // write: object name prefix; "" = bench_<host>_<pid>_
  int concurrency = 16;
  uint64_t duration_ms = 10000;
  bool keep = false;  // write: leave the objects and the record for seq/rand
};

struct Report {
  double seconds = 0;
  uint64_t ops = 0, bytes = 0, errors = 0;
  double avg_ms = 0, min_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;
};

struct Run;  // one run's shared state (object_bench.cpp)

class ObjectBench {
 public:
  // Sets up a run on `io` (owned by the caller, open until the bench is
  // gone); the time starts now. write makes its payload and, with keep,
  // records the run before it starts, so that cleanup finds the objects even
  // if the cluster fills up. seq and rand read the record of the last kept
  // write run; without one, or when it names no objects, they fail.
  static Result<std::unique_ptr<ObjectBench>> prepare(strata_ioctx_t io, const Spec &spec);
  ~ObjectBench();
  ObjectBench(const ObjectBench &) = delete;
  ObjectBench &operator=(const ObjectBench &) = delete;

  // Runs until the time is up or an operation fails; waits for every
  // operation in flight.
  Report run();
  // The size of the objects written or read.
  uint64_t object_size() const;
  // write: how many objects were written (after run()); seq/rand: how many
  // the record names.
  uint64_t objects() const;
  // The first operation that failed (a full cluster is named as such); OK
  // when none did.
  Status run_error() const;
  // After run(), write only: records the objects written (keep) or removes
  // them. OK for seq and rand.
  Status finish();

 private:
  ObjectBench(strata_ioctx_t io, const Spec &spec);
  strata_ioctx_t io_;
  Spec spec_;
  std::unique_ptr<Run> run_;
};

// Removes what a kept write run left: its objects and the record. *removed
// counts the objects that existed.
Status cleanup(strata_ioctx_t io, int concurrency, uint64_t *removed);

}  // namespace strata::object_bench
