// `strata object put|get|stat|ls|rm --pool P ...`: single objects through
// the client library. put/get stream in chunks, so an object larger than
// memory (and than one operation may carry) works.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "cli/cmd_client_common.h"
#include "cli/commands.h"

namespace strata::cli {

namespace {

const char *kObjectUsage =
    "usage: strata object <command> --pool POOL [options]   (or: <command> POOL ...)\n"
    "  put NAME [FILE|-]     write FILE (or stdin) as object NAME, replacing it\n"
    "  get NAME [FILE|-]     read object NAME into FILE (or stdout)\n"
    "  stat NAME             size, modification time, version\n"
    "  ls                    every object of the pool\n"
    "  rm NAME...            remove objects\n";

constexpr size_t kChunk = 4u << 20;  // per operation while streaming

std::string format_time_ns(uint64_t ns) {
  std::time_t secs = std::time_t(ns / 1000000000ull);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%06lluZ", b,
                static_cast<unsigned long long>((ns / 1000) % 1000000));
  return out;
}

int put(strata_ioctx_t io, const std::string &name, const std::string &file, OutputFormat f) {
  std::FILE *in = file == "-" ? stdin : std::fopen(file.c_str(), "rb");
  if (!in) return fail("object put", Status::Error(errno, "cannot open " + file));
  std::string buf(kChunk, '\0');
  uint64_t off = 0;
  int rc = 0;
  for (bool first = true;; first = false) {
    size_t n = std::fread(buf.data(), 1, buf.size(), in);
    if (n == 0 && std::ferror(in)) {
      rc = fail("object put", Status::Error(EIO, "reading " + file));
      break;
    }
    // The first chunk replaces the object; the others extend it.
    int w = first ? strata_write_full(io, name.c_str(), buf.data(), n)
                  : (n ? strata_write(io, name.c_str(), buf.data(), n, off) : 0);
    if (w < 0) {
      rc = fail("object put", object_error(w, io, name));
      break;
    }
    off += n;
    if (n < buf.size()) break;
  }
  if (in != stdin) std::fclose(in);
  if (rc == 0 && f != OutputFormat::kText)
    print_json("{\"name\":" + json_quote(name) + ",\"size\":" + std::to_string(off) + "}", f);
  return rc;
}

int get(strata_ioctx_t io, const std::string &name, const std::string &file) {
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  if (int rc = strata_stat(io, name.c_str(), &st); rc < 0)
    return fail("object get", object_error(rc, io, name));
  std::FILE *out = file == "-" ? stdout : std::fopen(file.c_str(), "wb");
  if (!out) return fail("object get", Status::Error(errno, "cannot create " + file));
  std::string buf(kChunk, '\0');
  int rc = 0;
  for (uint64_t off = 0;;) {
    int64_t n = strata_read(io, name.c_str(), buf.data(), buf.size(), off);
    if (n < 0) {
      rc = fail("object get", object_error(int(n), io, name));
      break;
    }
    if (n > 0 && std::fwrite(buf.data(), 1, size_t(n), out) != size_t(n)) {
      rc = fail("object get", Status::Error(EIO, "writing " + file));
      break;
    }
    off += uint64_t(n);
    if (size_t(n) < buf.size()) break;  // the end (the object may have grown meanwhile)
  }
  if (out != stdout) {
    if (std::fclose(out) != 0 && rc == 0) rc = fail("object get", Status::Error(errno, file));
  } else {
    std::fflush(stdout);
  }
  return rc;
}

int stat(strata_ioctx_t io, const std::string &name, OutputFormat f) {
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  if (int rc = strata_stat(io, name.c_str(), &st); rc < 0)
    return fail("object stat", object_error(rc, io, name));
  strata_object_location loc{};
  loc.struct_size = sizeof loc;
  bool located = strata_object_locate(io, name.c_str(), &loc) == 0;
  char pg[32] = "";
  if (located) std::snprintf(pg, sizeof pg, "%u.%x", loc.pool, loc.seed);
  if (f == OutputFormat::kText) {
    std::printf("%s size %llu mtime %s version %llu", name.c_str(),
                static_cast<unsigned long long>(st.size), format_time_ns(st.mtime_ns).c_str(),
                static_cast<unsigned long long>(st.version));
    if (located) std::printf(" pg %s primary osd.%d", pg, loc.primary);
    std::printf("\n");
    return 0;
  }
  std::string j = "{\"name\":" + json_quote(name) + ",\"size\":" + std::to_string(st.size) +
                  ",\"mtime\":" + json_quote(format_time_ns(st.mtime_ns)) +
                  ",\"mtime_ns\":" + std::to_string(st.mtime_ns) +
                  ",\"version\":" + std::to_string(st.version);
  if (located) {
    j += ",\"pg\":" + json_quote(pg) + ",\"acting\":[";
    for (uint32_t i = 0; i < loc.n_acting; ++i) j += (i ? "," : "") + std::to_string(loc.acting[i]);
    j += "]";
  }
  print_json(j + "}", f);
  return 0;
}

int ls(strata_ioctx_t io, OutputFormat f) {
  strata_list_t l = nullptr;
  if (int rc = strata_list_open(io, nullptr, &l); rc < 0)
    return fail("object ls", api_error(rc, "listing"));
  std::string j = "[";
  bool first = true;
  int rc;
  const char *name;
  size_t len;
  while ((rc = strata_list_next(l, &name, &len)) == 1) {
    if (f == OutputFormat::kText) {
      std::fwrite(name, 1, len, stdout);
      std::fputc('\n', stdout);
    } else {
      j += (first ? "" : ",") + json_quote(std::string(name, len));
      first = false;
    }
  }
  strata_list_close(l);
  if (rc < 0) return fail("object ls", api_error(rc, "listing"));
  if (f != OutputFormat::kText) print_json(j + "]", f);
  return 0;
}

}  // namespace

int cmd_object(std::vector<std::string> args) {
  if (args.empty()) return usage_error("object", "missing command", kObjectUsage);
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kObjectUsage, stdout);
    std::fputs(common_options_help(), stdout);
    return 0;
  }
  std::string sub = args[0];
  args.erase(args.begin());
  const std::string cmd = "object " + sub;
  ArgList list(std::move(args));
  auto o = take_common_options(list);
  if (!o.ok()) return usage_error(cmd, o.status().message(), kObjectUsage);
  if (o->help) {
    std::fputs(kObjectUsage, stdout);
    std::fputs(common_options_help(), stdout);
    return 0;
  }
  auto pool = list.take("--pool", "-p");
  if (!pool.ok()) return usage_error(cmd, pool.status().message(), kObjectUsage);
  auto pos = list.positional();
  if (!pos.ok()) return usage_error(cmd, pos.status().message(), kObjectUsage);
  if (!*pool) {
    // `strata object put POOL NAME FILE` works too.
    if (pos->empty()) return usage_error(cmd, "--pool is required", kObjectUsage);
    *pool = pos->front();
    pos->erase(pos->begin());
  }
  size_t min = 1, max = 1;
  if (sub == "put" || sub == "get") max = 2;
  else if (sub == "ls") min = max = 0;
  else if (sub == "rm") max = SIZE_MAX;
  else if (sub != "stat") return usage_error("object", "unknown command '" + sub + "'", kObjectUsage);
  if (pos->size() < min || pos->size() > max)
    return usage_error(cmd, "wrong number of arguments", kObjectUsage);

  auto s = Session::open(*o);
  if (!s.ok()) return fail(cmd, s.status());
  auto io = (*s)->ioctx(**pool);
  if (!io.ok()) return fail(cmd, io.status());
  if (sub == "put") return put(*io, (*pos)[0], pos->size() > 1 ? (*pos)[1] : "-", o->format);
  if (sub == "get") return get(*io, (*pos)[0], pos->size() > 1 ? (*pos)[1] : "-");
  if (sub == "stat") return stat(*io, (*pos)[0], o->format);
  if (sub == "ls") return ls(*io, o->format);
  int rc = 0;
  for (const std::string &name : *pos)
    if (int r = strata_remove(*io, name.c_str()); r < 0) rc = fail(cmd, object_error(r, *io, name));
  return rc;
}

}  // namespace strata::cli
