// `strata image ...`: block images (docs/BLOCK.md) through the image
// library of the rbd frontend over this client's routine table: create,
// ls, info, resize, rm, rename, du, export, import, snapshots, clones.
// `image map` / `unmap` are in cmd_image_map.cpp.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "cli/cmd_client_common.h"
#include "cli/commands.h"
#include "cli/image_cli_support.h"
#include "cli/output_format.h"
#include "client/client_api_table.h"
#include "common/json.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::cli {

namespace {

const char *kUsage =
    "usage: strata image <command> [options]\n"
    "  create POOL/NAME --size SIZE [--object-size SIZE]\n"
    "                         a thin image (nothing is allocated until written); object\n"
    "                         size a power of two in [4K, 32M], default 4M\n"
    "  ls POOL [--long]       images of a pool (--long: size, object size, snapshots, lock)\n"
    "  info POOL/NAME         size, object size, id, snapshots, parent, lock holder\n"
    "  resize POOL/NAME --size SIZE [--allow-shrink]\n"
    "                         grow (reads zeros), or shrink (drops the data past the end)\n"
    "  rm POOL/NAME           remove an image with no snapshots, not locked\n"
    "  rename POOL/NAME NEWNAME\n"
    "  du POOL/NAME[@SNAP]    bytes allocated\n"
    "  export POOL/NAME[@SNAP] FILE|-\n"
    "                         the image's bytes into FILE (sparse) or stdout\n"
    "  import FILE|- POOL/NAME [--object-size SIZE]\n"
    "                         a new image from FILE (its size) or stdin (spooled first);\n"
    "                         all-zero blocks are not written, so the image stays thin\n"
    "  snap create|rm|rollback POOL/NAME@SNAP\n"
    "  snap ls POOL/NAME      snapshots: id, name, size, time, clones\n"
    "  clone POOL/NAME@SNAP POOL/CHILD\n"
    "                         a new image reading through to the snapshot until written\n"
    "                         (any pool; the snapshot may be a clone's)\n"
    "  flatten POOL/NAME      copy a clone's parent data into it and drop the link\n"
    "                         (kept, overlap 0, while its snapshots read through it)\n"
    "  map POOL/NAME[@SNAP] --at DIR [--read-only] [--file-name N] [--foreground]\n"
    "                         the image as the file DIR/NAME over FUSE (for losetup)\n"
    "  unmap DIR              end a map (waits until it flushed and exited)\n"
    "  SIZE: bytes with an optional K, M, G or T suffix (powers of 1024)\n";

int usage(const std::string &cmd, const std::string &msg) { return usage_error(cmd, msg, kUsage); }

std::string fmt_time(uint64_t ns) {
  std::time_t t = std::time_t(ns / 1000000000ull);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string fmt_size(uint64_t b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

json::Value snap_json(const rbd::SnapInfo &s) {
  json::Value v{json::Object{}};
  v.set("id", s.id);
  v.set("name", s.name);
  v.set("size", s.size);
  v.set("created", fmt_time(s.created_ns));
  v.set("children", s.children);
  return v;
}

json::Value info_json(const rbd::ImageInfo &i) {
  json::Value v{json::Object{}};
  v.set("pool", i.pool);
  v.set("name", i.name);
  v.set("id", i.id);
  v.set("size", i.size);
  v.set("object_size", i.object_size);
  v.set("objects", i.object_size ? (i.size + i.object_size - 1) / i.object_size : 0);
  v.set("created", fmt_time(i.created_ns));
  json::Value snaps{json::Array{}};
  for (auto &s : i.snaps) snaps.push(snap_json(s));
  v.set("snapshots", snaps);
  if (i.parent) {
    json::Value p{json::Object{}};
    p.set("pool", i.parent->pool);
    p.set("image", i.parent->image);
    p.set("snapshot", i.parent->snap_name);
    p.set("overlap", i.parent->overlap);
    v.set("parent", p);
  } else {
    v.set("parent", nullptr);
  }
  if (i.lock_owner.empty()) {
    v.set("lock", nullptr);
  } else {
    json::Value l{json::Object{}};
    l.set("owner", i.lock_owner);
    l.set("expires", fmt_time(i.lock_expires_ns));
    v.set("lock", l);
  }
  return v;
}

void print_info_text(const rbd::ImageInfo &i) {
  std::printf("image %s/%s\n", i.pool.c_str(), i.name.c_str());
  std::printf("  id:           %s\n", i.id.c_str());
  std::printf("  size:         %s (%llu bytes) in %llu objects of %s\n", fmt_size(i.size).c_str(),
              (unsigned long long)i.size,
              (unsigned long long)(i.object_size ? (i.size + i.object_size - 1) / i.object_size : 0),
              fmt_size(i.object_size).c_str());
  std::printf("  created:      %s\n", fmt_time(i.created_ns).c_str());
  std::printf("  snapshots:    %zu\n", i.snaps.size());
  if (i.parent)
    std::printf("  parent:       %s/%s@%s (overlap %s)\n", i.parent->pool.c_str(),
                i.parent->image.c_str(), i.parent->snap_name.c_str(),
                fmt_size(i.parent->overlap).c_str());
  if (i.lock_owner.empty())
    std::printf("  lock:         none\n");
  else
    std::printf("  lock:         %s (lease until %s)\n", i.lock_owner.c_str(),
                fmt_time(i.lock_expires_ns).c_str());
}

// Parsed options of one subcommand.
struct Args {
  CommonOptions common;
  std::vector<std::string> pos;
  std::optional<std::string> size, object_size, at, file_name;
  bool allow_shrink = false, long_list = false, read_only = false, foreground = false;
};

bool parse(const std::string &cmd, std::vector<std::string> raw, size_t min_pos, size_t max_pos,
           Args *a, int *rc) {
  ArgList list(std::move(raw));
  auto common = take_common_options(list);
  if (!common.ok()) {
    *rc = usage(cmd, common.status().message());
    return false;
  }
  a->common = *common;
  struct {
    const char *flag;
    std::optional<std::string> *out;
  } values[] = {{"--size", &a->size},
                {"--object-size", &a->object_size},
                {"--at", &a->at},
                {"--file-name", &a->file_name}};
  for (auto &v : values) {
    auto r = list.take(v.flag);
    if (!r.ok()) {
      *rc = usage(cmd, r.status().message());
      return false;
    }
    *v.out = *r;
  }
  a->allow_shrink = list.take_flag("--allow-shrink");
  a->long_list = list.take_flag("--long", "-l");
  a->read_only = list.take_flag("--read-only");
  a->foreground = list.take_flag("--foreground", "-f");
  auto p = list.positional();
  if (!p.ok()) {
    *rc = usage(cmd, p.status().message());
    return false;
  }
  if (a->common.help) {
    std::fputs(kUsage, stdout);
    std::fputs(common_options_help(), stdout);
    *rc = 0;
    return false;
  }
  a->pos = *p;
  if (a->pos.size() < min_pos || a->pos.size() > max_pos) {
    *rc = usage(cmd, "wrong number of arguments");
    return false;
  }
  return true;
}

Result<uint64_t> size_arg(const std::optional<std::string> &v, const char *flag) {
  if (!v) return Status::Error(EINVAL, std::string(flag) + " is required");
  auto b = parse_bytes(*v);
  if (!b.ok()) return Status::Error(EINVAL, std::string(flag) + ": " + b.status().message());
  return *b;
}

Result<rbd::ImageSpec> spec_arg(const std::string &text, bool snap) {
  std::string why;
  auto s = rbd::parse_image_spec(text, snap, &why);
  if (!s) return Status::Error(EINVAL, why);
  return *s;
}

// Prints a one-line result, or {"ok":true,...} with --format json.
void done(const Args &a, const std::string &text, json::Value extra = json::Value{json::Object{}}) {
  if (a.common.format == OutputFormat::kText) {
    std::printf("%s\n", text.c_str());
    return;
  }
  extra.set("ok", true);
  extra.set("message", text);
  print_json(extra.dump(), a.common.format);
}

// Opens a read-only Image of spec (head or snapshot) for export / du.
std::unique_ptr<rbd::Image> open_read_only(Session &s, const rbd::ImageSpec &spec) {
  rbd::OpenOptions o;
  o.read_only = true;
  o.snap = spec.snap;
  return rbd::Image::open(client::client_api_table(), s.cluster(), spec.pool, spec.name, o);
}

// A new image from a file or stdin (spooled to an unlinked temporary
// file first: the image's size must be known when it is made).
void import_image(const Args &a, rbd::ImageStore &images, const rbd::ImageSpec &spec,
                  Session &s) {
  int fd = -1;
  if (a.pos[0] == "-") {
    std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/var/tmp";
    std::string tmpl = dir + "/strata-import-XXXXXX";
    fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw sdk::Error(errno, "cannot make a spool file in " + dir);
    ::unlink(tmpl.c_str());
    std::vector<char> buf(1u << 20);
    for (;;) {
      ssize_t n = ::read(0, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw sdk::Error(errno, "reading stdin");
      if (n == 0) break;
      for (ssize_t w = 0; w < n;) {
        ssize_t m = ::write(fd, buf.data() + w, size_t(n - w));
        if (m < 0 && errno == EINTR) continue;
        if (m < 0) throw sdk::Error(errno, "spooling stdin to " + dir);
        w += m;
      }
    }
    ::lseek(fd, 0, SEEK_SET);
  } else {
    fd = ::open(a.pos[0].c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw sdk::Error(errno, "cannot open " + a.pos[0]);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw sdk::Error(e, "cannot stat " + a.pos[0]);
  }
  uint64_t size = uint64_t(st.st_size);
  if (S_ISBLK(st.st_mode)) {
    off_t end = ::lseek(fd, 0, SEEK_END);
    size = end > 0 ? uint64_t(end) : 0;
    ::lseek(fd, 0, SEEK_SET);
  }
  rbd::CreateOptions o;
  o.size = size;
  if (a.object_size) {
    auto os = size_arg(a.object_size, "--object-size");
    if (!os.ok()) {
      ::close(fd);
      throw sdk::Error(EINVAL, os.status().message());
    }
    o.object_size = uint32_t(*os);
  }
  try {
    images.create(spec.name, o);
  } catch (...) {
    ::close(fd);
    throw;
  }
  Result<uint64_t> r = Status::OK();
  try {
    rbd::OpenOptions open;
    open.lock_description = "image import";
    auto img = rbd::Image::open(client::client_api_table(), s.cluster(), spec.pool, spec.name,
                                open);
    r = copy_fd_to_image(fd, size, *img, "import of " + a.pos[0] + " into " + spec.text());
    int rc = img->close();
    if (r.ok() && rc < 0) r = Status::Error(-rc, "import into " + spec.text() + ": " + img->last_error());
  } catch (const sdk::Error &e) {
    r = Status::Error(-e.code(), e.what());
  }
  ::close(fd);
  if (!r.ok()) {
    // Leave nothing half-made behind.
    try {
      images.remove(spec.name);
    } catch (...) {
    }
    throw sdk::Error(r.status().code(), r.status().message());
  }
  done(a, "imported " + a.pos[0] + " (" + fmt_size(size) + ") as " + spec.text());
}

int run(const std::string &sub, const std::string &snap_sub, std::vector<std::string> raw) {
  const std::string cmd = "image " + sub + (snap_sub.empty() ? "" : " " + snap_sub);
  size_t min_pos = 1, max_pos = 1;
  if (sub == "rename" || sub == "export" || sub == "import" || sub == "clone") min_pos = max_pos = 2;
  Args a;
  int rc = 0;
  if (!parse(cmd, std::move(raw), min_pos, max_pos, &a, &rc)) return rc;

  bool snap_allowed = sub == "du" || sub == "export" || sub == "clone" ||
                      (sub == "snap" && snap_sub != "ls");
  // The image argument (the second one for import).
  std::string image_text = sub == "import" ? a.pos[1] : a.pos[0];
  Result<rbd::ImageSpec> spec = Status::OK();
  if (sub == "ls") {
    spec = rbd::ImageSpec{a.pos[0], "", ""};
  } else {
    spec = spec_arg(image_text, snap_allowed);
    if (!spec.ok()) return usage(cmd, spec.status().message());
    if (sub == "snap" && snap_sub != "ls" && spec->snap.empty())
      return usage(cmd, "expected POOL/NAME@SNAP");
    if (sub == "clone" && spec->snap.empty())
      return usage(cmd, "expected POOL/NAME@SNAP as the parent");
  }

  auto session = Session::open(a.common);
  if (!session.ok()) return fail(cmd, session.status());
  auto store = image_store(**session, spec->pool);
  if (!store.ok()) return fail(cmd, store.status());
  rbd::ImageStore &images = **store;
  const std::string name = spec->name;

  Status st = image_call([&] {
    if (sub == "create") {
      rbd::CreateOptions o;
      auto size = size_arg(a.size, "--size");
      if (!size.ok()) throw sdk::Error(EINVAL, size.status().message());
      o.size = *size;
      if (a.object_size) {
        auto os = size_arg(a.object_size, "--object-size");
        if (!os.ok()) throw sdk::Error(EINVAL, os.status().message());
        o.object_size = uint32_t(*os);
      }
      images.create(name, o);
      done(a, "created " + spec->text() + " (" + fmt_size(o.size) + ")");
    } else if (sub == "ls") {
      auto names = images.list();
      if (a.common.format != OutputFormat::kText) {
        json::Value list{json::Array{}};
        for (auto &n : names) list.push(a.long_list ? info_json(images.info(n)) : json::Value(n));
        print_json(list.dump(), a.common.format);
      } else if (!a.long_list) {
        for (auto &n : names) std::printf("%s\n", n.c_str());
      } else {
        std::printf("%-24s %12s %10s %6s %s\n", "NAME", "SIZE", "OBJ SIZE", "SNAPS", "LOCK");
        for (auto &n : names) {
          auto i = images.info(n);
          std::printf("%-24s %12s %10s %6zu %s\n", n.c_str(), fmt_size(i.size).c_str(),
                      fmt_size(i.object_size).c_str(), i.snaps.size(),
                      i.lock_owner.empty() ? "-" : i.lock_owner.c_str());
        }
      }
    } else if (sub == "info") {
      auto i = images.info(name);
      if (a.common.format == OutputFormat::kText)
        print_info_text(i);
      else
        print_json(info_json(i).dump(), a.common.format);
    } else if (sub == "resize") {
      auto size = size_arg(a.size, "--size");
      if (!size.ok()) throw sdk::Error(EINVAL, size.status().message());
      auto i = images.info(name);
      if (*size < i.size && !a.allow_shrink)
        throw sdk::Error(EINVAL, "shrinking " + spec->text() + " from " + fmt_size(i.size) +
                                     " to " + fmt_size(*size) +
                                     " drops data: add --allow-shrink");
      images.resize(name, *size);
      done(a, "resized " + spec->text() + " to " + fmt_size(*size));
    } else if (sub == "rm") {
      images.remove(name);
      done(a, "removed " + spec->text());
    } else if (sub == "rename") {
      images.rename(name, a.pos[1]);
      done(a, "renamed " + spec->text() + " to " + spec->pool + "/" + a.pos[1]);
    } else if (sub == "du") {
      uint64_t used = images.du(name, spec->snap);
      auto i = images.info(name);
      if (a.common.format == OutputFormat::kText) {
        std::printf("%s: %s used of %s\n", spec->text().c_str(), fmt_size(used).c_str(),
                    fmt_size(i.size).c_str());
      } else {
        json::Value v{json::Object{}};
        v.set("image", spec->text());
        v.set("used", used);
        v.set("size", i.size);
        print_json(v.dump(), a.common.format);
      }
    } else if (sub == "export") {
      auto img = open_read_only(**session, *spec);
      int fd = a.pos[1] == "-" ? 1
                               : ::open(a.pos[1].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                                        0644);
      if (fd < 0) throw sdk::Error(errno, "cannot create " + a.pos[1]);
      auto r = copy_image_to_fd(*img, fd, "export of " + spec->text());
      if (fd != 1 && ::close(fd) != 0 && r.ok()) r = Status::Error(errno, "closing " + a.pos[1]);
      img->close();
      if (!r.ok()) throw sdk::Error(r.status().code(), r.status().message());
      if (fd != 1) done(a, "exported " + spec->text() + " (" + fmt_size(*r) + ") to " + a.pos[1]);
    } else if (sub == "import") {
      import_image(a, images, *spec, **session);
    } else if (sub == "snap") {
      if (snap_sub == "create") {
        auto s = images.snap_create(name, spec->snap);
        done(a, "created snapshot " + spec->text() + " (id " + std::to_string(s.id) + ")",
             snap_json(s));
      } else if (snap_sub == "rm") {
        images.snap_remove(name, spec->snap);
        done(a, "removed snapshot " + spec->text());
      } else if (snap_sub == "rollback") {
        images.snap_rollback(name, spec->snap);
        done(a, "rolled " + spec->pool + "/" + name + " back to " + spec->snap);
      } else {
        auto i = images.info(name);
        if (a.common.format != OutputFormat::kText) {
          json::Value list{json::Array{}};
          for (auto &s : i.snaps) list.push(snap_json(s));
          print_json(list.dump(), a.common.format);
        } else {
          std::printf("%6s %-24s %12s %-20s %s\n", "ID", "NAME", "SIZE", "CREATED", "CLONES");
          for (auto &s : i.snaps)
            std::printf("%6llu %-24s %12s %-20s %u\n", (unsigned long long)s.id, s.name.c_str(),
                        fmt_size(s.size).c_str(), fmt_time(s.created_ns).c_str(), s.children);
        }
      }
    } else if (sub == "clone") {
      auto child = spec_arg(a.pos[1], false);
      if (!child.ok()) throw sdk::Error(EINVAL, child.status().message());
      auto child_store = image_store(**session, child->pool);
      if (!child_store.ok()) throw sdk::Error(child_store.status().code(), child_store.status().message());
      images.clone(name, spec->snap, **child_store, child->name);
      done(a, "cloned " + spec->text() + " as " + child->text());
    } else if (sub == "flatten") {
      images.flatten(name);
      done(a, "flattened " + spec->text());
    }
  });
  if (!st.ok()) return fail(cmd, st);
  return 0;
}

}  // namespace

int cmd_image(std::vector<std::string> args) {
  if (args.empty()) return usage("image", "missing command");
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::string sub = args[0];
  args.erase(args.begin());
  if (sub == "map") return cmd_image_map(std::move(args));
  if (sub == "unmap") return cmd_image_unmap(std::move(args));
  static const char *kSubs[] = {"create", "ls",     "info", "resize", "rm",    "rename",
                                "du",     "export", "import", "snap", "clone", "flatten"};
  bool known = false;
  for (const char *k : kSubs) known |= sub == k;
  if (!known) return usage("image", "unknown command '" + sub + "'");
  std::string snap_sub;
  if (sub == "snap") {
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (args.empty()) return usage("image snap", "missing command (create, ls, rm, rollback)");
    snap_sub = args[0];
    args.erase(args.begin());
    if (snap_sub != "create" && snap_sub != "ls" && snap_sub != "rm" && snap_sub != "rollback")
      return usage("image snap", "unknown command '" + snap_sub + "'");
  }
  return run(sub, snap_sub, std::move(args));
}

}  // namespace strata::cli
