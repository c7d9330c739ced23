// `strata placement`: make, convert and check placement maps.
//
//   build      a map of H hosts x D devices, or any hierarchy (--layout)
//   compile    text -> binary          decompile   binary -> text
//   test       per-device utilization, failure-domain check, mappings/s
//   diff       data moved between two maps, next to the optimal amount
//   balance    add an exception table that evens out a pool's PGs
//
// The work is done by core/placement; this file only parses options and
// prints.
#include "cli/cmd_placement.h"

#include <boost/program_options.hpp>
#include <chrono>
#include <ctime>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "placement/analysis.h"
#include "placement/balancer.h"
#include "placement/fixed_point.h"
#include "placement/map_builder.h"
#include "placement/map_file.h"
#include "placement/map_validation.h"
#include "placement/pg.h"
#include "placement/placer.h"
#include "placement/pool_mapping.h"
#include "placement/target_shares.h"
#include "placement/topology.h"
#include "cli/output_format.h"
#include "common/config.h"
#include "common/config_lookup.h"
#include "common/json.h"
#include "host/plugin_loader.h"
#include "host/plugin_path.h"

namespace po = boost::program_options;
using namespace strata::placement;
using strata::Result;
using strata::Status;
using strata::cli::OutputFormat;
namespace json = strata::json;

namespace {

constexpr const char *kUsage =
    "usage: strata placement <command> [options]\n"
    "  build      --hosts H --devices D | --layout rack:2,host:5,device:4  [-o FILE]\n"
    "  compile    TEXT -o BINARY\n"
    "  decompile  BINARY [-o TEXT]\n"
    "  test       MAP [--rule R] [--num-rep N] [--min-x A --max-x B | --pool P --pg-num N]\n"
    "  diff       OLD NEW [same input options as test]\n"
    "  balance    MAP --pg-num N [--pool P] [--from OLD] -o OUT\n"
    "Every command takes --plugin crush|rendezvous (default crush) where it maps, and\n"
    "reads maps in either form; test, diff and balance take --format text|json|json-pretty.\n"
    "Run `strata placement <command> --help` for details.\n";

int fail(const Status &s) {
  std::fprintf(stderr, "strata placement: %s\n", s.ToString().c_str());
  return 1;
}

int usage_error(const std::string &msg) {
  std::fprintf(stderr, "strata placement: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

// Parses argv after the subcommand; true when --help was printed.
bool parse(int argc, char **argv, const po::options_description &opts,
           const po::positional_options_description &pos, po::variables_map &vm) {
  po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return true;
  }
  return false;
}

// --- options every placement command takes -------------------------------

// --config/--conf FILE and --plugin-path DIRS: where the placement plugins
// are looked for (the flag's directories, then the config's plugin_path,
// then the built-in ones).
struct CommonOptions {
  std::string config;
  std::string plugin_path;
  std::string format = "text";
};

void add_common_options(po::options_description &o, CommonOptions &c, bool reports) {
  o.add_options()
      ("config", po::value(&c.config), "config file (its plugin_path is searched)")
      ("conf", po::value(&c.config), "the same as --config")
      ("plugin-path", po::value(&c.plugin_path), "directories searched for plugins first");
  if (reports)
    o.add_options()("format", po::value(&c.format)->default_value("text"),
                    "text, json or json-pretty");
}

Result<strata::host::Plugin> placement_plugin(const std::string &name, const CommonOptions &c) {
  std::string extra = c.plugin_path;
  std::string path = strata::locate_config(c.config).path;
  if (!path.empty()) {
    auto cfg = strata::Config::load_file(path);
    if (!cfg.ok()) return cfg.status();
    std::string configured = cfg->get("global", "plugin_path").value_or("");
    if (!configured.empty()) extra += (extra.empty() ? "" : ":") + configured;
  }
  return find_placement_plugin(name, strata::host::plugin_search_path(extra));
}

Result<OutputFormat> output_format(const CommonOptions &c) {
  return strata::cli::parse_output_format(c.format);
}

// --- options shared by the mapping commands -----------------------------

struct InputOptions {
  std::string plugin = "crush";
  std::string rule;
  uint32_t num_rep = 3;
  uint64_t min_x = 0, max_x = 99999;
  uint32_t pool = 1;
  uint32_t pg_num = 0;  // > 0: map the PGs of a pool (with exceptions)
};

void add_input_options(po::options_description &o, InputOptions &in) {
  o.add_options()
      ("plugin", po::value(&in.plugin)->default_value("crush"), "placement plugin")
      ("rule", po::value(&in.rule), "rule name or id (default: the first rule)")
      ("num-rep", po::value(&in.num_rep)->default_value(3), "replicas per input")
      ("min-x", po::value(&in.min_x)->default_value(0), "first input")
      ("max-x", po::value(&in.max_x)->default_value(99999), "last input")
      ("pool", po::value(&in.pool)->default_value(1), "pool id (with --pg-num)")
      ("pg-num", po::value(&in.pg_num)->default_value(0),
       "map the pool's PGs 0..N-1 (exception table applied) instead of raw inputs");
}

Result<const Rule *> find_rule(const PlacementMap &map, const std::string &spec) {
  if (map.rules.empty()) return Status::Error(EINVAL, "the map has no rules");
  if (spec.empty()) return &map.rules.front();
  if (const Rule *r = map.rule_by_name(spec)) return r;
  if (!spec.empty() && spec.find_first_not_of("0123456789") == std::string::npos)
    if (const Rule *r = map.rule(uint32_t(std::stoul(spec)))) return r;
  return Status::Error(ENOENT, "no rule named or numbered '" + spec + "'");
}

// A map with everything needed to map inputs through it.
struct LoadedMap {
  PlacementMap map;
  std::unique_ptr<Topology> topo;
  std::optional<Placer> placer;
  const Rule *rule = nullptr;
};

Result<std::unique_ptr<LoadedMap>> load_for_mapping(const std::string &path,
                                                    const InputOptions &in,
                                                    const strata::host::Plugin &plugin) {
  auto lm = std::make_unique<LoadedMap>();
  Result<PlacementMap> m = load_map(path);
  if (!m.ok()) return m.status();
  lm->map = std::move(m.value());
  lm->topo = std::make_unique<Topology>(lm->map);
  Result<const Rule *> r = find_rule(lm->map, in.rule);
  if (!r.ok()) return r.status().Context(path);
  lm->rule = r.value();
  if (in.num_rep == 0 || in.num_rep > STRATA_PLACEMENT_MAX_RESULT)
    return Status::Error(EINVAL, "--num-rep must be 1.." +
                                     std::to_string(STRATA_PLACEMENT_MAX_RESULT));
  if (Status s = check_rule_capacity(lm->map, *lm->rule, in.num_rep); !s.ok())
    std::fprintf(stderr, "warning: %s: %s\n", path.c_str(), s.message().c_str());
  Result<Placer> p = Placer::create(plugin, lm->map);
  if (!p.ok()) return p.status();
  lm->placer.emplace(std::move(p.value()));
  return lm;
}

uint64_t input_count(const InputOptions &in) {
  return in.pg_num > 0 ? in.pg_num : in.max_x - in.min_x + 1;
}

// Results for input number i: raw x = min_x + i, or PG i of the pool with
// its exceptions (pool mapping computed once).
MappingSource mapping_source(const LoadedMap &lm, const InputOptions &in,
                             std::shared_ptr<PoolMapping> pool) {
  if (pool)
    return [pool](uint64_t i, std::vector<int32_t> &out) { out = pool->effective[i]; };
  const Placer *placer = &*lm.placer;
  uint32_t rule = lm.rule->id, num_rep = in.num_rep;
  uint64_t base = in.min_x;
  return [placer, rule, num_rep, base](uint64_t i, std::vector<int32_t> &out) {
    int32_t buf[STRATA_PLACEMENT_MAX_RESULT];
    int n = placer->map(rule, uint32_t(base + i), num_rep, buf, STRATA_PLACEMENT_MAX_RESULT);
    out.assign(buf, buf + (n > 0 ? n : 0));
  };
}

Result<std::shared_ptr<PoolMapping>> pool_mapping_if_asked(const LoadedMap &lm,
                                                           const InputOptions &in) {
  if (in.pg_num == 0) return std::shared_ptr<PoolMapping>();
  Result<PoolMapping> pm = map_pool(*lm.placer, *lm.topo, {in.pool, in.pg_num, lm.rule->id,
                                                           in.num_rep});
  if (!pm.ok()) return pm.status();
  return std::make_shared<PoolMapping>(std::move(pm.value()));
}

Status check_inputs(const InputOptions &in) {
  if (in.pg_num == 0 && in.max_x < in.min_x)
    return Status::Error(EINVAL, "--max-x is below --min-x");
  if (in.pg_num == 0 && in.max_x > UINT32_MAX)
    return Status::Error(EINVAL, "inputs are 32-bit: --max-x at most 4294967295");
  return Status::OK();
}

std::string with_commas(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(size_t(i), ",");
  return s;
}

// --- build ---------------------------------------------------------------

int cmd_build(int argc, char **argv) {
  uint32_t hosts = 0, devices = 0;
  std::string layout, weights, output = "-", device_class, failure_domain;
  bool binary = false;
  po::options_description o("strata placement build");
  o.add_options()("help,h", "this help")
      ("hosts", po::value(&hosts), "number of hosts (with --devices)")
      ("devices", po::value(&devices), "devices per host")
      ("layout", po::value(&layout), "levels from the top, e.g. rack:2,host:5,device:4")
      ("weights", po::value(&weights)->default_value("1"),
       "device weights, cycled over the devices, e.g. 1,2,4")
      ("class", po::value(&device_class), "device class of every device")
      ("failure-domain", po::value(&failure_domain), "type the rule separates replicas by")
      ("output,o", po::value(&output)->default_value("-"), "output file")
      ("binary", po::bool_switch(&binary), "write the binary form");
  CommonOptions common;
  add_common_options(o, common, false);
  po::variables_map vm;
  if (parse(argc, argv, o, {}, vm)) return 0;

  BuildSpec spec;
  if (!layout.empty()) {
    auto l = parse_layout(layout);
    if (!l.ok()) return fail(l.status());
    spec.levels = l.value();
  } else if (hosts > 0 && devices > 0) {
    spec.levels = {{"host", hosts}, {"device", devices}};
  } else {
    return usage_error("build needs --hosts and --devices, or --layout");
  }
  spec.weights.clear();
  for (size_t start = 0; start <= weights.size();) {
    size_t comma = weights.find(',', start);
    if (comma == std::string::npos) comma = weights.size();
    Weight w = 0;
    if (!parse_fixed(weights.substr(start, comma - start), &w))
      return usage_error("bad weight '" + weights.substr(start, comma - start) + "'");
    spec.weights.push_back(w);
    start = comma + 1;
  }
  spec.device_class = device_class;
  spec.failure_domain = failure_domain;
  Result<PlacementMap> m = build_map(spec);
  if (!m.ok()) return fail(m.status());
  if (Status s = save_map(output, m.value(), binary); !s.ok()) return fail(s);
  return 0;
}

// --- compile / decompile -------------------------------------------------

int cmd_convert(int argc, char **argv, bool to_binary) {
  std::string input, output = to_binary ? "" : "-";
  po::options_description o(to_binary ? "strata placement compile" : "strata placement decompile");
  o.add_options()("help,h", "this help")
      ("input", po::value(&input), "map file (either form; - for stdin)")
      ("output,o", po::value(&output), "output file (- for stdout)");
  CommonOptions common;
  add_common_options(o, common, false);
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (parse(argc, argv, o, pos, vm)) return 0;
  if (input.empty()) return usage_error("which map? (a file name, or - for stdin)");
  if (output.empty()) return usage_error("compile needs -o FILE (the binary form)");
  Result<PlacementMap> m = load_map(input);
  if (!m.ok()) return fail(m.status());
  if (Status s = save_map(output, m.value(), to_binary); !s.ok()) return fail(s);
  return 0;
}

// --- test ----------------------------------------------------------------

// Mappings per second of this thread's CPU time (and of wall time) over the
// raw inputs, repeated until `seconds` of CPU time have passed. CPU time is
// the "one core" figure even on a machine shared with other work.
struct Speed {
  double per_cpu_second = 0;
  double per_wall_second = 0;
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

Speed measure_speed(const LoadedMap &lm, const InputOptions &in, double seconds) {
  using clock = std::chrono::steady_clock;
  int32_t buf[STRATA_PLACEMENT_MAX_RESULT];
  uint64_t done = 0, sink = 0;
  uint64_t batch = std::min<uint64_t>(std::max<uint64_t>(input_count(in), 1), 100000);
  auto wall_start = clock::now();
  double cpu_start = thread_cpu_seconds(), cpu = 0;
  while (cpu < seconds) {
    for (uint64_t i = 0; i < batch; ++i) {
      int n = lm.placer->map(lm.rule->id, uint32_t(in.min_x + i), in.num_rep, buf,
                             STRATA_PLACEMENT_MAX_RESULT);
      sink += uint64_t(n > 0 ? buf[0] : 0);
    }
    done += batch;
    cpu = thread_cpu_seconds() - cpu_start;
  }
  double wall = std::chrono::duration<double>(clock::now() - wall_start).count();
  if (sink == 1) std::fputs("", stdout);  // keep the loop from being optimised away
  return {double(done) / cpu, double(done) / wall};
}

// Everything `placement test` reports; the text is printed from it.
json::Value test_report(const LoadedMap &m, const InputOptions &in, const std::string &path,
                        const MappingSource &source, bool show_mappings, double bench_seconds) {
  uint64_t n = input_count(in);
  json::Value out{json::Object{}};
  out.set("map", path);
  out.set("plugin", in.plugin);
  out.set("rule", m.rule->name);
  out.set("replicas", in.num_rep);
  out.set("inputs", static_cast<unsigned long long>(n));
  if (in.pg_num) out.set("pool", in.pool);
  if (show_mappings) {
    json::Value rows{json::Array{}};
    std::vector<int32_t> r;
    for (uint64_t i = 0; i < n; ++i) {
      source(i, r);
      json::Value row{json::Object{}};
      if (in.pg_num) row.set("pg", format_pg({in.pool, uint32_t(i)}));
      else row.set("x", static_cast<unsigned long long>(in.min_x + i));
      json::Value devs{json::Array{}};
      for (int32_t d : r) devs.push(m.map.item_name(d));
      row.set("devices", devs);
      rows.push(row);
    }
    out.set("mappings", rows);
  }
  Utilization u = measure_utilization(*m.topo, *m.rule, in.num_rep, n, source);
  json::Value devices{json::Array{}};
  double worst = 0;
  for (const DeviceUse &d : u.devices) {
    json::Value row{json::Object{}};
    row.set("device", m.map.item_name(d.id));
    row.set("count", static_cast<unsigned long long>(d.count));
    row.set("expected", d.expected);
    row.set("deviation_pct", 100.0 * d.deviation());
    devices.push(row);
    worst = std::max(worst, std::abs(double(d.count) - d.expected));
  }
  out.set("devices", devices);
  out.set("replicas_placed", static_cast<unsigned long long>(u.replicas));
  out.set("replicas_wanted", static_cast<unsigned long long>(n * in.num_rep));
  out.set("short_results", static_cast<unsigned long long>(u.short_results));
  out.set("failure_domain_breaks", static_cast<unsigned long long>(u.domain_violations));
  out.set("max_deviation_pct", 100.0 * u.max_deviation);
  out.set("min_deviation_pct", 100.0 * u.min_deviation);
  out.set("stddev_pct", 100.0 * u.stddev);
  if (in.pg_num) out.set("largest_share_distance_pgs", worst);
  if (bench_seconds > 0) {
    Speed sp = measure_speed(m, in, bench_seconds);
    out.set("mappings_per_cpu_second", sp.per_cpu_second);
    out.set("mappings_per_wall_second", sp.per_wall_second);
    out.set("device_count", static_cast<unsigned long long>(m.map.devices.size()));
  }
  return out;
}

void print_test_text(const json::Value &t, bool no_devices) {
  auto u64 = [&](const char *k) { return uint64_t(t[k].as_int()); };
  for (const json::Value &row : t["mappings"].as_array()) {
    if (!row["pg"].is_null()) std::printf("pg %s ->", row["pg"].as_string().c_str());
    else std::printf("x %" PRIu64 " ->", uint64_t(row["x"].as_int()));
    for (const json::Value &d : row["devices"].as_array()) std::printf(" %s", d.as_string().c_str());
    std::printf("\n");
  }
  std::printf("map %s, plugin %s, rule '%s', %u replicas, %s %s\n",
              t["map"].as_string().c_str(), t["plugin"].as_string().c_str(),
              t["rule"].as_string().c_str(), unsigned(t["replicas"].as_int()),
              with_commas(u64("inputs")).c_str(),
              t["pool"].is_null() ? "inputs"
                                  : ("PGs of pool " + std::to_string(t["pool"].as_int())).c_str());
  if (!no_devices) {
    std::printf("%-16s %10s %12s %10s\n", "device", "count", "expected", "deviation");
    for (const json::Value &d : t["devices"].as_array())
      std::printf("%-16s %10" PRIu64 " %12.1f %+9.2f%%\n", d["device"].as_string().c_str(),
                  uint64_t(d["count"].as_int()), d["expected"].as_double(),
                  d["deviation_pct"].as_double());
  }
  std::printf("replicas placed:        %s of %s\n", with_commas(u64("replicas_placed")).c_str(),
              with_commas(u64("replicas_wanted")).c_str());
  std::printf("short results:          %s\n", with_commas(u64("short_results")).c_str());
  std::printf("failure-domain breaks:  %s\n", with_commas(u64("failure_domain_breaks")).c_str());
  std::printf("most over-full device:  %+.2f%% of expected\n", t["max_deviation_pct"].as_double());
  std::printf("most under-full device: %+.2f%% of expected\n", t["min_deviation_pct"].as_double());
  std::printf("standard deviation:     %.2f%% of the mean expected count\n",
              t["stddev_pct"].as_double());
  if (!t["largest_share_distance_pgs"].is_null())
    std::printf("largest |count - share|: %.2f PGs\n",
                t["largest_share_distance_pgs"].as_double());
  if (!t["mappings_per_cpu_second"].is_null())
    std::printf("mappings/s:             %s per CPU-second of one thread (%s per wall second)"
                ", %u replicas, %" PRIu64 " devices\n",
                with_commas(uint64_t(t["mappings_per_cpu_second"].as_double())).c_str(),
                with_commas(uint64_t(t["mappings_per_wall_second"].as_double())).c_str(),
                unsigned(t["replicas"].as_int()), u64("device_count"));
}

int cmd_test(int argc, char **argv) {
  InputOptions in;
  std::string path;
  bool no_devices = false, show_mappings = false;
  double bench_seconds = 0.5;
  po::options_description o("strata placement test");
  o.add_options()("help,h", "this help")("map", po::value(&path), "map file");
  add_input_options(o, in);
  o.add_options()
      ("no-devices", po::bool_switch(&no_devices), "summary only, no per-device table")
      ("show-mappings", po::bool_switch(&show_mappings), "print every input's result")
      ("bench-seconds", po::value(&bench_seconds)->default_value(0.5),
       "how long to time mappings/s (0: skip)");
  CommonOptions common;
  add_common_options(o, common, true);
  po::positional_options_description pos;
  pos.add("map", 1);
  po::variables_map vm;
  if (parse(argc, argv, o, pos, vm)) return 0;
  auto format = output_format(common);
  if (!format.ok()) return usage_error(format.status().message());
  if (path.empty()) return usage_error("test needs a map file");
  if (Status s = check_inputs(in); !s.ok()) return fail(s);

  auto plugin = placement_plugin(in.plugin, common);
  if (!plugin.ok()) return fail(plugin.status());
  auto lm = load_for_mapping(path, in, plugin.value());
  if (!lm.ok()) return fail(lm.status());
  const LoadedMap &m = *lm.value();
  auto pool = pool_mapping_if_asked(m, in);
  if (!pool.ok()) return fail(pool.status());
  MappingSource source = mapping_source(m, in, pool.value());
  json::Value report = test_report(m, in, path, source, show_mappings, bench_seconds);
  if (*format == OutputFormat::kText) print_test_text(report, no_devices);
  else strata::cli::print_json(report.dump(), *format);
  return 0;
}

// --- diff ----------------------------------------------------------------

int cmd_diff(int argc, char **argv) {
  InputOptions in;
  std::string old_path, new_path;
  po::options_description o("strata placement diff");
  o.add_options()("help,h", "this help")("old", po::value(&old_path), "old map")(
      "new", po::value(&new_path), "new map");
  add_input_options(o, in);
  CommonOptions common;
  add_common_options(o, common, true);
  po::positional_options_description pos;
  pos.add("old", 1).add("new", 1);
  po::variables_map vm;
  if (parse(argc, argv, o, pos, vm)) return 0;
  auto format = output_format(common);
  if (!format.ok()) return usage_error(format.status().message());
  if (old_path.empty() || new_path.empty()) return usage_error("diff needs OLD and NEW maps");
  if (Status s = check_inputs(in); !s.ok()) return fail(s);

  auto plugin = placement_plugin(in.plugin, common);
  if (!plugin.ok()) return fail(plugin.status());
  auto a = load_for_mapping(old_path, in, plugin.value());
  if (!a.ok()) return fail(a.status());
  auto b = load_for_mapping(new_path, in, plugin.value());
  if (!b.ok()) return fail(b.status());
  auto pa = pool_mapping_if_asked(*a.value(), in);
  if (!pa.ok()) return fail(pa.status());
  auto pb = pool_mapping_if_asked(*b.value(), in);
  if (!pb.ok()) return fail(pb.status());
  uint64_t n = input_count(in);
  Movement mv = measure_movement(n, mapping_source(*a.value(), in, pa.value()),
                                 mapping_source(*b.value(), in, pb.value()));
  mv.optimal = optimal_movement(
      expected_replicas_per_input(*a.value()->topo, *a.value()->rule, in.num_rep),
      expected_replicas_per_input(*b.value()->topo, *b.value()->rule, in.num_rep));
  if (*format != OutputFormat::kText) {
    json::Value out{json::Object{}};
    out.set("old", old_path);
    out.set("new", new_path);
    out.set("plugin", in.plugin);
    out.set("replicas", in.num_rep);
    out.set("inputs", static_cast<unsigned long long>(n));
    out.set("input_kind", in.pg_num ? "pgs" : "inputs");
    out.set("inputs_changed", static_cast<unsigned long long>(mv.inputs_changed));
    out.set("changed_pct", 100.0 * mv.changed_fraction());
    out.set("replicas_moved", static_cast<unsigned long long>(mv.replicas_moved));
    out.set("replicas_total", static_cast<unsigned long long>(mv.replicas));
    out.set("moved_pct", 100.0 * mv.moved_fraction());
    out.set("optimal_pct", 100.0 * mv.optimal);
    out.set("moved_over_optimal", mv.optimal > 0 ? json::Value(mv.ratio()) : json::Value());
    strata::cli::print_json(out.dump(), *format);
    return 0;
  }
  std::printf("%s -> %s, plugin %s, %u replicas, %s %s\n", old_path.c_str(), new_path.c_str(),
              in.plugin.c_str(), in.num_rep, with_commas(n).c_str(),
              in.pg_num ? "PGs" : "inputs");
  std::printf("inputs changed:   %s (%.3f%%)\n", with_commas(mv.inputs_changed).c_str(),
              100.0 * mv.changed_fraction());
  std::printf("replicas moved:   %s of %s (%.3f%%)\n", with_commas(mv.replicas_moved).c_str(),
              with_commas(mv.replicas).c_str(), 100.0 * mv.moved_fraction());
  std::printf("optimal:          %.3f%% of replicas\n", 100.0 * mv.optimal);
  if (mv.optimal > 0)
    std::printf("moved / optimal:  %.2fx\n", mv.ratio());
  else
    std::printf("moved / optimal:  n/a (the ideal placement did not change)\n");
  return 0;
}

// --- balance -------------------------------------------------------------

int cmd_balance(int argc, char **argv) {
  InputOptions in;
  std::string path, from, output;
  double max_deviation = 1.0;
  bool binary = false;
  po::options_description o("strata placement balance");
  o.add_options()("help,h", "this help")("map", po::value(&path), "map file");
  add_input_options(o, in);
  o.add_options()
      ("from", po::value(&from), "the map before a topology change: keep PGs where it had them")
      ("max-deviation", po::value(&max_deviation)->default_value(1.0),
       "allowed distance from each device's share, in PGs")
      ("output,o", po::value(&output), "output map")
      ("binary", po::bool_switch(&binary), "write the binary form");
  CommonOptions common;
  add_common_options(o, common, true);
  po::positional_options_description pos;
  pos.add("map", 1);
  po::variables_map vm;
  if (parse(argc, argv, o, pos, vm)) return 0;
  auto format = output_format(common);
  if (!format.ok()) return usage_error(format.status().message());
  if (path.empty() || output.empty()) return usage_error("balance needs MAP and -o OUT");
  if (in.pg_num == 0) return usage_error("balance needs --pg-num (the pool's PG count)");

  auto plugin = placement_plugin(in.plugin, common);
  if (!plugin.ok()) return fail(plugin.status());
  auto lm = load_for_mapping(path, in, plugin.value());
  if (!lm.ok()) return fail(lm.status());
  const LoadedMap &m = *lm.value();
  BalanceOptions opt;
  opt.pool = {in.pool, in.pg_num, m.rule->id, in.num_rep};
  opt.max_deviation = max_deviation;

  std::unique_ptr<LoadedMap> old;
  std::optional<PoolMapping> previous;
  if (!from.empty()) {
    auto o2 = load_for_mapping(from, in, plugin.value());
    if (!o2.ok()) return fail(o2.status());
    old = std::move(o2.value());
    auto pm = map_pool(*old->placer, *old->topo, opt.pool);
    if (!pm.ok()) return fail(pm.status());
    previous = std::move(pm.value());
  }
  BalanceReport r;
  auto out = balance(*m.placer, m.map, opt, previous ? &*previous : nullptr, &r);
  if (!out.ok()) return fail(out.status());
  if (Status s = save_map(output, out.value(), binary); !s.ok()) return fail(s);

  double moved = r.replicas ? double(r.replicas_moved) / double(r.replicas) : 0;
  double optimal = 0;
  if (old)
    optimal = optimal_movement(expected_replicas_per_input(*old->topo, *old->rule, in.num_rep),
                               expected_replicas_per_input(*m.topo, *m.rule, in.num_rep));
  if (*format != OutputFormat::kText) {
    json::Value out{json::Object{}};
    out.set("pool", in.pool);
    out.set("pg_num", in.pg_num);
    out.set("replicas", in.num_rep);
    out.set("rule", m.rule->name);
    out.set("plugin", in.plugin);
    out.set("deviation_before_pgs", r.deviation_before);
    out.set("deviation_after_pgs", r.deviation_after);
    out.set("max_deviation_pgs", max_deviation);
    out.set("exceptions_before", static_cast<unsigned long long>(r.exceptions_before));
    out.set("exceptions_after", static_cast<unsigned long long>(r.exceptions_after));
    out.set("moves", static_cast<unsigned long long>(r.moves));
    out.set("replicas_moved", static_cast<unsigned long long>(r.replicas_moved));
    out.set("replicas_total", static_cast<unsigned long long>(r.replicas));
    out.set("moved_pct", 100.0 * moved);
    out.set("compared_with", from.empty() ? path : from);
    if (old) {
      out.set("optimal_pct", 100.0 * optimal);
      out.set("moved_over_optimal", optimal > 0 ? moved / optimal : 0.0);
    }
    out.set("wrote", output);
    strata::cli::print_json(out.dump(), *format);
    return 0;
  }
  std::printf("pool %u: %u PGs x %u replicas, rule '%s', plugin %s\n", in.pool, in.pg_num,
              in.num_rep, m.rule->name.c_str(), in.plugin.c_str());
  std::printf("largest |count - share|: %.2f PGs before, %.2f after (goal <= %.2f)\n",
              r.deviation_before, r.deviation_after, max_deviation);
  std::printf("exceptions:              %" PRIu64 " (was %" PRIu64 "), %" PRIu64
              " balancing moves\n",
              r.exceptions_after, r.exceptions_before, r.moves);
  std::printf("replicas moved:          %s of %s (%.3f%%) compared with %s\n",
              with_commas(r.replicas_moved).c_str(), with_commas(r.replicas).c_str(),
              100.0 * moved, from.empty() ? path.c_str() : from.c_str());
  if (old)
    std::printf("optimal:                 %.3f%% of replicas; moved / optimal: %.2fx\n",
                100.0 * optimal, optimal > 0 ? moved / optimal : 0.0);
  std::printf("wrote %s\n", output.c_str());
  return 0;
}

}  // namespace

int cmd_placement(int argc, char **argv) {
  if (argc < 2) return usage_error("which command?");
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  // The subcommand's own argv: argv[0] is the subcommand's name.
  int sub_argc = argc - 1;
  char **sub_argv = argv + 1;
  try {
    if (cmd == "build") return cmd_build(sub_argc, sub_argv);
    if (cmd == "compile") return cmd_convert(sub_argc, sub_argv, true);
    if (cmd == "decompile") return cmd_convert(sub_argc, sub_argv, false);
    if (cmd == "test") return cmd_test(sub_argc, sub_argv);
    if (cmd == "diff") return cmd_diff(sub_argc, sub_argv);
    if (cmd == "balance") return cmd_balance(sub_argc, sub_argv);
  } catch (const po::error &e) {
    std::fprintf(stderr, "strata placement %s: %s\n%s", cmd.c_str(), e.what(), kUsage);
    return 2;
  }
  return usage_error("unknown command '" + cmd + "'");
}
