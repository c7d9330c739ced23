#include "bench/store/fio_baseline.h"

#include <unistd.h>

#include <algorithm>

// property_tree's JSON parser still includes the deprecated <boost/bind.hpp>;
// this keeps its placeholders where they were and silences the notice.
#define BOOST_BIND_GLOBAL_PLACEHOLDERS
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/subprocess.h"

namespace strata::store_bench {

namespace {

constexpr const char *kFileName = "strata-bench-fio.dat";

std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::string tail(const std::string &s, size_t n = 400) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

std::string runtime_arg(double seconds) {
  char buf[48];
  // Sub-second slices are fine: fio's runtime excludes its start-up.
  std::snprintf(buf, sizeof buf, "--runtime=%.0fms", std::max(200.0, seconds * 1000));
  return buf;
}

}  // namespace

FioBaseline::FioBaseline(const std::string &program) : path_(find_program(program)) {
  if (path_.empty()) reason_ = "fio not found: baseline skipped";
}

void FioFigures::accumulate(const FioFigures &o) {
  double t = runtime_s + o.runtime_s;
  if (t > 0) {
    write_iops = (write_iops * runtime_s + o.write_iops * o.runtime_s) / t;
    write_bytes_per_sec =
        (write_bytes_per_sec * runtime_s + o.write_bytes_per_sec * o.runtime_s) / t;
  }
  runtime_s = t;
  if (command.empty()) command = o.command;
  ++runs;
}

Result<FioFigures> parse_fio_json(const std::string &text) {
  // fio may print notes ("fio: ...") before the JSON document.
  size_t start = std::string::npos;
  for (size_t pos = 0; pos < text.size();) {
    if (text[pos] == '{') {
      start = pos;
      break;
    }
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (start == std::string::npos) return Status::Error(EBADMSG, "fio printed no JSON: " + tail(text));
  namespace pt = boost::property_tree;
  pt::ptree root;
  try {
    std::istringstream in(text.substr(start));
    pt::read_json(in, root);
    const pt::ptree &jobs = root.get_child("jobs");
    if (jobs.empty()) return Status::Error(EBADMSG, "fio JSON has no jobs");
    const pt::ptree &job = jobs.begin()->second;
    if (int err = job.get<int>("error", 0); err != 0)
      return Status::Error(err, "fio job failed with error " + std::to_string(err));
    FioFigures f;
    f.write_iops = job.get<double>("write.iops");
    f.write_bytes_per_sec = job.get<double>("write.bw_bytes");
    f.runtime_s = job.get<double>("write.runtime", 0) / 1000.0;
    return f;
  } catch (const std::exception &e) {
    return Status::Error(EBADMSG, std::string("cannot read fio's JSON: ") + e.what());
  }
}

Result<FioFigures> FioBaseline::run(const std::vector<std::string> &job_args) {
  std::vector<std::string> argv = {path_};
  argv.insert(argv.end(), job_args.begin(), job_args.end());
  argv.push_back("--output-format=json");
  auto out = run_process(argv);
  if (!out.ok()) return out.status();
  if (out->exit_code != 0)
    return Status::Error(EIO, "`" + join(argv) + "` exited with " +
                                  std::to_string(out->exit_code) + ": " + tail(out->err + out->out));
  auto f = parse_fio_json(out->out);
  if (!f.ok()) return f.status().Context("`" + join(argv) + "`");
  f->command = join(argv);
  return f;
}

std::string FioBaseline::data_file(const std::string &dir) { return dir + "/" + kFileName; }

Status FioBaseline::prepare_file(const std::string &file, uint64_t size) {
  if (!available()) return Status::Error(ENOENT, reason_);
  auto fill = run({"--name=fill", "--filename=" + file, "--size=" + std::to_string(size),
                   "--rw=write", "--bs=1M", "--direct=1", "--ioengine=psync", "--end_fsync=1"});
  return fill.ok() ? Status::OK() : fill.status().Context("writing fio's file " + file);
}

Result<FioFigures> FioBaseline::sync_random_4k(const std::string &file, uint64_t size,
                                               double seconds) {
  if (!available()) return Status::Error(ENOENT, reason_);
  return run({"--name=sync4k", "--filename=" + file, "--size=" + std::to_string(size),
              "--rw=randwrite", "--bs=4k", "--direct=1", "--fdatasync=1", "--iodepth=1",
              "--ioengine=psync", runtime_arg(seconds), "--time_based"});
}

Result<FioFigures> FioBaseline::sequential_4m(const std::string &file, uint64_t size,
                                              double seconds) {
  if (!available()) return Status::Error(ENOENT, reason_);
  // Why this baseline: the store acknowledges a 4 MiB write only once it is
  // durable, and writes it with O_DIRECT (journal) or syncs it (staged), so
  // the fair comparison is the disk's own durable sequential rate. A buffered
  // fio run would measure the page cache for the first gigabytes (the run
  // writes a few times the journal, not many times RAM) and make the
  // baseline depend on memory size; O_DIRECT at the store's queue depth (4)
  // with libaio measures what the disk absorbs. end_fsync adds the metadata
  // sync the store also pays. fio wraps over a file of `size` for as long as
  // the store's run lasts, like the store rewrites a bounded ring of
  // objects, so both sides keep the disk busy for the same time.
  return run({"--name=seq4m", "--filename=" + file, "--size=" + std::to_string(size),
              "--rw=write", "--bs=4M", "--direct=1", "--ioengine=libaio", "--iodepth=4",
              "--end_fsync=1", runtime_arg(seconds), "--time_based"});
}

Result<FioFigures> FioBaseline::sequential_4m_durable(const std::string &dir, uint64_t size,
                                                      double seconds) {
  if (!available()) return Status::Error(ENOENT, reason_);
  uint64_t per_job = std::max<uint64_t>(size / 4, 16ull << 20);
  auto r = run({"--name=seq4m-durable", "--directory=" + dir,
                "--filename_format=fio-durable.$jobnum", "--size=" + std::to_string(per_job),
                "--rw=write", "--bs=4M", "--direct=1", "--ioengine=psync", "--fdatasync=1",
                "--numjobs=4", "--group_reporting", runtime_arg(seconds), "--time_based"});
  for (int j = 0; j < 4; ++j) ::unlink((dir + "/fio-durable." + std::to_string(j)).c_str());
  return r;
}

Result<FioFigures> FioBaseline::sequential_4m_buffered(const std::string &file, uint64_t size,
                                                       double seconds) {
  if (!available()) return Status::Error(ENOENT, reason_);
  // fio counts the final fsync in the job's runtime, so the figure is the
  // rate at which buffered data became durable, not the page cache's speed.
  return run({"--name=seq4m-buffered", "--filename=" + file, "--size=" + std::to_string(size),
              "--rw=write", "--bs=4M", "--ioengine=psync", "--end_fsync=1", runtime_arg(seconds),
              "--time_based"});
}

}  // namespace strata::store_bench
