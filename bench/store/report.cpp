#include "bench/store/report.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "common/json.h"

namespace strata::store_bench {

namespace {

std::string num(double v) {
  char buf[48];
  double a = std::fabs(v);
  // Counts print as integers; measured rates with three significant digits.
  bool integral = a < 1e15 && v == std::floor(v);
  const char *fmt = integral || a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f";
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string fmt_ratio(const Ratio &r) {
  if (!r.value) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *r.value);
  return buf;
}

std::string json_str(const std::string &s) { return json::quote(s); }

std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string json_strings(const std::vector<std::string> &v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? "," : "") + json_str(v[i]);
  return o + "]";
}

// "1234 IOPS (p50_us 812 us, ...)": the first figure is the headline.
std::string describe(const WorkloadFigures &w) {
  if (w.figures.empty()) return w.notes.empty() ? "no figures" : w.notes.front();
  const Figure &h = w.figures.front();
  std::string s = num(h.value) + " " + h.unit;
  std::string rest;
  for (size_t i = 1; i < w.figures.size(); ++i) {
    const Figure &f = w.figures[i];
    rest += (rest.empty() ? "" : ", ") + f.key + " " + num(f.value);
    if (!f.unit.empty() && f.unit != "x") rest += " " + f.unit;
    else if (f.unit == "x") rest += "x";
  }
  return rest.empty() ? s : s + "  (" + rest + ")";
}

// "0.88 met"; a goal the issue states for another pair only is not judged
// here ("0.42 other": e.g. the xfs+file sync goal against a tmpfs journal).
std::string ratio_cell(const PairReport &p, const std::string &prefix) {
  for (const Ratio &r : p.ratios)
    if (r.name.rfind(prefix, 0) == 0)
      return fmt_ratio(r) + (!r.goal ? std::string() : r.binding ? " " + r.verdict() : " other");
  return "-";
}

std::string cell(const PairReport &p, const char *w, const char *key) {
  auto v = p.value(w, key);
  return v ? num(*v) : "-";
}

}  // namespace

const Figure *WorkloadFigures::find(const std::string &key) const {
  for (const Figure &f : figures)
    if (f.key == key) return &f;
  return nullptr;
}

std::string Ratio::verdict() const {
  if (!value) return "n/a";
  if (!goal) return "info";
  return *value >= *goal ? "met" : "MISSED";
}

const WorkloadFigures *PairReport::find(const std::string &name) const {
  for (const WorkloadFigures &w : workloads)
    if (w.name == name) return &w;
  return nullptr;
}

std::optional<double> PairReport::value(const std::string &name, const std::string &key) const {
  const WorkloadFigures *w = find(name);
  if (!w) return std::nullopt;
  const Figure *f = w->find(key);
  if (!f) return std::nullopt;
  return f->value;
}

void print_pair_text(const PairReport &p) {
  std::printf("\n== %s ", p.pair.label().c_str());
  if (p.status == "skipped") {
    std::printf("skipped: %s\n", p.reason.c_str());
    return;
  }
  std::printf("(%s on %s)\n", p.dir.c_str(), p.fs_type.c_str());
  for (const WorkloadFigures &w : p.workloads) {
    std::printf("  %-17s %s\n", w.name.c_str(), describe(w).c_str());
    if (!w.per_second_mb.empty()) {
      std::string s;
      for (double v : w.per_second_mb) s += (s.empty() ? "" : " ") + num(v);
      std::printf("  %-17s MB/s per second: %s\n", "", s.c_str());
    }
    for (size_t i = w.figures.empty() ? 1 : 0; i < w.notes.size(); ++i)
      std::printf("  %-17s %s\n", "", w.notes[i].c_str());
  }
  if (!p.ratios.empty()) std::printf("  ratios:\n");
  for (const Ratio &r : p.ratios) {
    std::printf("    %-58s %6s", r.name.c_str(), fmt_ratio(r).c_str());
    if (r.goal) {
      std::printf("  goal >= %.2f: %s", *r.goal, r.verdict().c_str());
      if (!r.binding) std::printf(" (goal stated for %s)",
                                  r.name.rfind("overflow", 0) == 0 ? "the staged run"
                                                                   : "xfs+file");
    }
    if (!r.value) std::printf("  [%s]", r.missing.c_str());
    std::printf("\n");
    if (!r.note.empty()) std::printf("    %-58s note: %s\n", "", r.note.c_str());
  }
  for (const std::string &w : p.warnings) std::printf("  warning: %s\n", w.c_str());
  if (p.status == "failed") std::printf("  FAILED: %s\n", p.reason.c_str());
}

void print_summary_text(const RunReport &r) {
  std::printf("\n== summary (%.0f s per workload, journal %llu MiB; ratios are store / baseline "
              "measured in this run)\n",
              r.seconds, static_cast<unsigned long long>(r.journal_size >> 20));
  if (!r.fio_note.empty()) std::printf("%s\n", r.fio_note.c_str());
  std::printf("%-14s %9s %8s %8s %-16s %8s %-16s %-16s %-16s\n", "pair", "creates/s", "4M MB/s",
              "sync4k", "sync4k/fio", "qd32", "qd32/qd1", "ovf staged 2nd", "ovf staged min");
  for (const PairReport &p : r.pairs) {
    if (p.status == "skipped") {
      std::printf("%-14s skipped: %s\n", p.pair.label().c_str(), p.reason.c_str());
      continue;
    }
    std::printf("%-14s %9s %8s %8s %-16s %8s %-16s %-16s %-16s%s\n", p.pair.label().c_str(),
                cell(p, "creates", "creates_per_sec").c_str(),
                cell(p, "write4m", "mb_per_sec").c_str(), cell(p, "sync4k", "iops").c_str(),
                ratio_cell(p, "sync4k").c_str(), cell(p, "qd32", "iops").c_str(),
                ratio_cell(p, "qd32").c_str(), ratio_cell(p, "overflow staged: 2nd").c_str(),
                ratio_cell(p, "overflow staged: min").c_str(),
                p.status == "failed" ? "  FAILED" : "");
  }
  std::printf("%-14s %9s %8s %8s %-16s %8s %-16s %-16s %-16s\n", "goal", "", "", "", ">= 0.60",
              "", ">= 4.00", ">= 0.70", ">= 0.50");
  std::printf("(\"other\": the goal is stated for another pair, so not judged for this one)\n");
}

void print_json(const RunReport &r) {
  std::string o = "{\"seconds\":" + json_num(r.seconds) +
                  ",\"journal_size\":" + std::to_string(r.journal_size) +
                  ",\"fio_note\":" + json_str(r.fio_note) + ",\"pairs\":[";
  for (size_t i = 0; i < r.pairs.size(); ++i) {
    const PairReport &p = r.pairs[i];
    o += i ? "," : "";
    o += "{\"backend\":" + json_str(p.pair.backend) + ",\"journal\":" + json_str(p.pair.journal) +
         ",\"status\":" + json_str(p.status) + ",\"reason\":" + json_str(p.reason) +
         ",\"dir\":" + json_str(p.dir) + ",\"fs\":" + json_str(p.fs_type) +
         ",\"warnings\":" + json_strings(p.warnings) + ",\"workloads\":{";
    for (size_t k = 0; k < p.workloads.size(); ++k) {
      const WorkloadFigures &w = p.workloads[k];
      o += (k ? "," : "") + json_str(w.name) + ":{";
      for (const Figure &f : w.figures) o += json_str(f.key) + ":" + json_num(f.value) + ",";
      o += "\"per_second_mb\":[";
      for (size_t s = 0; s < w.per_second_mb.size(); ++s)
        o += (s ? "," : "") + json_num(w.per_second_mb[s]);
      o += "],\"notes\":" + json_strings(w.notes) + "}";
    }
    o += "},\"ratios\":[";
    for (size_t k = 0; k < p.ratios.size(); ++k) {
      const Ratio &q = p.ratios[k];
      o += (k ? "," : "") + std::string("{\"name\":") + json_str(q.name) +
           ",\"value\":" + (q.value ? json_num(*q.value) : "null") +
           ",\"goal\":" + (q.goal ? json_num(*q.goal) : "null") +
           ",\"met\":" + (q.value && q.goal ? (*q.value >= *q.goal ? "true" : "false") : "null") +
           ",\"binding\":" + (q.binding ? "true" : "false") + ",\"missing\":" + json_str(q.missing) +
           ",\"note\":" + json_str(q.note) + "}";
    }
    o += "]}";
  }
  o += "]}\n";
  std::fputs(o.c_str(), stdout);
}

}  // namespace strata::store_bench
