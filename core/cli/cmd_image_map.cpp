// `strata image map POOL/NAME[@SNAP] --at DIR` and `strata image unmap
// DIR`: an image as one file over FUSE (the rbd frontend plugin's file
// export), for kernels with no nbd driver: `losetup --direct-io=on
// DIR/NAME` then gives a real block device. map goes to the background
// once the file is there, like `strata mount`.
#include <sys/mount.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/background_frontend.h"
#include "cli/cmd_client_common.h"
#include "cli/commands.h"
#include "cli/image_export_runner.h"
#include "image_spec.h"

namespace strata::cli {

namespace {

const char *kMap = "image map";
const char *kUnmap = "image unmap";

const char *kMapUsage =
    "usage: strata image map POOL/NAME[@SNAP] --at DIR [--read-only] [--file-name NAME]\n"
    "                        [--foreground] [--set key=value]... [common options]\n"
    "  Exposes the image as the one file DIR/NAME (NAME: the image's name, or --file-name)\n"
    "  over FUSE and goes to the background once it is there. For a block device:\n"
    "    losetup --direct-io=on -f --show DIR/NAME\n"
    "  A snapshot is mapped read-only; a read-write map holds the image's exclusive lock.\n"
    "  `strata image unmap DIR` ends it (after `losetup -d` of any loop device on it).\n"
    "  (This machine's kernel has no nbd driver; where /dev/nbd* exists, `strata nbd serve`\n"
    "  with the kernel's nbd-client attaches the image directly.)\n"
    "  exit status: 0 mapped (with --foreground: unmapped cleanly); 1 failure; 2 usage\n";

const char *kUnmapUsage =
    "usage: strata image unmap DIR [--timeout SECONDS]\n"
    "  Unmounts an `image map` (fusermount3 -u) and waits until its process flushed the\n"
    "  image, released its lock and exited (at most --timeout, default 60 seconds).\n";

}  // namespace

int cmd_image_map(std::vector<std::string> args) {
  ArgList list(std::move(args));
  auto common = take_common_options(list);
  if (!common.ok()) return usage_error(kMap, common.status().message(), kMapUsage);
  auto at = list.take("--at");
  auto file_name = list.take("--file-name");
  for (auto *r : {&at, &file_name})
    if (!r->ok()) return usage_error(kMap, r->status().message(), kMapUsage);
  bool read_only = list.take_flag("--read-only");
  bool foreground = list.take_flag("--foreground", "-f");
  auto rest = list.positional();
  if (!rest.ok()) return usage_error(kMap, rest.status().message(), kMapUsage);
  if (common->help) {
    std::fputs(kMapUsage, stdout);
    std::fputs(common_options_help(), stdout);
    print_rbd_plugin_options(*common);
    return 0;
  }
  if (rest->size() != 1) return usage_error(kMap, "expected one POOL/NAME[@SNAP]", kMapUsage);
  std::string why;
  auto spec = rbd::parse_image_spec(rest->front(), true, &why);
  if (!spec) return usage_error(kMap, why, kMapUsage);
  if (!*at) return usage_error(kMap, "--at DIR is required", kMapUsage);
  std::string dir = absolute_path(**at);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return fail(kMap, Status::Error(errno, "--at " + dir));
  if (!S_ISDIR(st.st_mode))
    return fail(kMap, Status::Error(ENOTDIR, "--at " + dir + " is not a directory"));

  ImageExportRun r;
  r.cmd = kMap;
  r.common = *common;
  r.options.emplace_back("image", spec->text());
  r.options.emplace_back("export", "file");
  r.options.emplace_back("at", dir);
  if (*file_name) r.options.emplace_back("file_name", **file_name);
  if (read_only) r.options.emplace_back("read_only", "true");
  r.state_kind = "map";
  r.state_key = dir;
  r.background = !foreground;
  return run_image_export(r);
}

int cmd_image_unmap(std::vector<std::string> args) {
  ArgList list(std::move(args));
  auto common = take_common_options(list);
  if (!common.ok()) return usage_error(kUnmap, common.status().message(), kUnmapUsage);
  auto rest = list.positional();
  if (!rest.ok()) return usage_error(kUnmap, rest.status().message(), kUnmapUsage);
  if (common->help) {
    std::fputs(kUnmapUsage, stdout);
    return 0;
  }
  if (rest->size() != 1) return usage_error(kUnmap, "expected one DIR", kUnmapUsage);
  uint32_t timeout_ms =
      common->timeout_ms == CommonOptions{}.timeout_ms ? 60000 : common->timeout_ms;
  std::string dir = absolute_path(rest->front());
  pid_t pid = read_frontend_state(frontend_state_file("map", dir));
  int rc = run_fusermount(dir);
  if (rc == 127 && ::geteuid() == 0) rc = ::umount2(dir.c_str(), 0) == 0 ? 0 : errno;
  if (rc != 0)
    return fail(kUnmap, Status::Error(EBUSY, "cannot unmount " + dir +
                                                 " (is it mapped? a loop device still on it? "
                                                 "`losetup -j FILE` shows it)"));
  if (pid != 0 && !wait_process_exit(pid, timeout_ms))
    return fail(kUnmap, Status::Error(ETIMEDOUT, "unmounted " + dir + ", but its process " +
                                                     std::to_string(pid) +
                                                     " did not exit in time"));
  return 0;
}

}  // namespace strata::cli
