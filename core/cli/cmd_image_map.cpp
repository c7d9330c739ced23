// `strata image map POOL/NAME[@SNAP]` and `strata image unmap`: an image
// as /dev/nbdN through the kernel's NBD client (the rbd plugin's kernel
// export) where the nbd driver is loaded, or, with --at DIR, as one file
// over FUSE (its file export) for kernels without it: `losetup
// --direct-io=on DIR/NAME` then gives a real block device. map goes to the
// background once the device or the file is there, like `strata mount`.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/background_frontend.h"
#include "cli/cmd_client_common.h"
#include "cli/commands.h"
#include "cli/image_export_runner.h"
#include "image_spec.h"
#include "nbd_device_picker.h"

namespace strata::cli {

namespace {

const char *kMap = "image map";
const char *kUnmap = "image unmap";

const char *kMapUsage =
    "usage: strata image map POOL/NAME[@SNAP] [--device /dev/nbdN|auto] [--read-only]\n"
    "       strata image map POOL/NAME[@SNAP] --at DIR [--file-name NAME] [--read-only]\n"
    "                        [--foreground] [--set key=value]... [common options]\n"
    "  Where the kernel has the nbd driver (/dev/nbd* exists), attaches the image as a\n"
    "  block device through the kernel's NBD client (--device, default auto: the free\n"
    "  /dev/nbdN with the lowest N; root only), prints the device and goes to the background.\n"
    "  With --at DIR (for kernels without nbd), exposes it as the one file DIR/NAME (NAME:\n"
    "  the image's name, or --file-name) over FUSE instead; for a block device then:\n"
    "    losetup --direct-io=on -f --show DIR/NAME\n"
    "  A snapshot is mapped read-only; a read-write map holds the image's exclusive lock.\n"
    "  `strata image unmap /dev/nbdN` (after umount) or `strata image unmap DIR` (after\n"
    "  `losetup -d` of any loop device on the file) ends it.\n"
    "  exit status: 0 mapped (with --foreground: unmapped cleanly); 1 failure; 2 usage\n";

const char *kUnmapUsage =
    "usage: strata image unmap /dev/nbdN|DIR [--timeout SECONDS]\n"
    "  /dev/nbdN: refuses while the device is mounted or held, else stops the `image map`\n"
    "  serving it (NBD_DISCONNECT). DIR: unmounts the file (fusermount3 -u). Then waits\n"
    "  until the map's process flushed the image, released its lock and exited (at most\n"
    "  --timeout, default 60 seconds).\n";

// Where the kernel path looks for devices.
const char *kDevRoot = "/dev";
const char *kSysfsRoot = "/sys";

// A map's process serves a block device the kernel writes back through
// (directly, or a loop device on its file): if reclaiming memory for one of
// its allocations waited for that writeback, it would wait for itself.
// PR_SET_IO_FLUSHER makes the kernel reclaim without I/O for this process's
// threads (inherited by those started later, hence before anything starts).
// It needs CAP_SYS_RESOURCE: without it, say so and go on.
void mark_io_flusher() {
#ifdef PR_SET_IO_FLUSHER
  if (::prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) != 0)
    std::fprintf(stderr,
                 "strata image map: warning: PR_SET_IO_FLUSHER: %s (under memory pressure "
                 "writeback to the device may stall)\n",
                 std::strerror(errno));
#endif
}

// The `image map` for a kernel device: `device` is "/dev/nbdN" or "auto".
int map_kernel(ImageExportRun r, const rbd::ImageSpec &spec, std::string device) {
  if (device == "auto") {
    std::string why;
    device = rbd::pick_free_nbd_device(kSysfsRoot, kDevRoot, &why);
    if (device.empty()) return fail(kMap, Status::Error(ENODEV, "--device auto: " + why));
  } else if (rbd::nbd_device_name(device).empty()) {
    return usage_error(kMap, "--device " + device + ": not an nbd device (/dev/nbdN or auto)",
                       kMapUsage);
  }
  r.options.emplace_back("image", spec.text());
  r.options.emplace_back("export", "kernel");
  r.options.emplace_back("device", device);
  r.state_key = device;
  r.ready_text = device;
  return run_image_export(r);
}

// `image unmap /dev/nbdN`: the map's process disconnects the device when
// it stops (SIGTERM), so that is what this sends.
int unmap_kernel(const std::string &device, uint32_t timeout_ms) {
  pid_t pid = read_frontend_state(frontend_state_file("map", device));
  if (pid == 0) {
    long owner = rbd::nbd_device_owner(device, kSysfsRoot);
    std::string also = owner > 0 ? " (process " + std::to_string(owner) +
                                       " runs it: another user's map, or not strata's?)"
                                 : "";
    return fail(kUnmap, Status::Error(ENOENT, "no `strata image map` serves " + device + also));
  }
  // An exclusive open fails while a filesystem is mounted on the device
  // (or device-mapper holds it): disconnecting then would lose its data.
  int fd = ::open(device.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
  if (fd < 0 && errno == EBUSY)
    return fail(kUnmap, Status::Error(EBUSY, device + " is in use (mounted? umount it first)"));
  if (fd >= 0) ::close(fd);
  if (::kill(pid, SIGTERM) != 0)
    return fail(kUnmap, Status::Error(errno, "cannot signal process " + std::to_string(pid)));
  if (!wait_process_exit(pid, timeout_ms))
    return fail(kUnmap, Status::Error(ETIMEDOUT, "the map of " + device + " (process " +
                                                     std::to_string(pid) +
                                                     ") did not exit in time"));
  return 0;
}

}  // namespace

int cmd_image_map(std::vector<std::string> args) {
  ArgList list(std::move(args));
  auto common = take_common_options(list);
  if (!common.ok()) return usage_error(kMap, common.status().message(), kMapUsage);
  auto at = list.take("--at");
  auto file_name = list.take("--file-name");
  auto device = list.take("--device");
  for (auto *r : {&at, &file_name, &device})
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
  if (*at && *device) return usage_error(kMap, "give --at DIR or --device, not both", kMapUsage);
  if (*file_name && !*at) return usage_error(kMap, "--file-name goes with --at DIR", kMapUsage);

  mark_io_flusher();
  ImageExportRun r;
  r.cmd = kMap;
  r.common = *common;
  if (read_only) r.options.emplace_back("read_only", "true");
  r.state_kind = "map";
  r.background = !foreground;
  if (*device) return map_kernel(r, *spec, **device);
  if (!*at) {
    if (rbd::kernel_nbd_present(kDevRoot)) return map_kernel(r, *spec, "auto");
    return usage_error(kMap,
                       "this kernel has no nbd driver (no /dev/nbd*): give --at DIR to map the "
                       "image as a file",
                       kMapUsage);
  }
  std::string dir = absolute_path(**at);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return fail(kMap, Status::Error(errno, "--at " + dir));
  if (!S_ISDIR(st.st_mode))
    return fail(kMap, Status::Error(ENOTDIR, "--at " + dir + " is not a directory"));

  r.options.emplace_back("image", spec->text());
  r.options.emplace_back("export", "file");
  r.options.emplace_back("at", dir);
  if (*file_name) r.options.emplace_back("file_name", **file_name);
  r.state_key = dir;
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
  if (rest->size() != 1) return usage_error(kUnmap, "expected one /dev/nbdN or DIR", kUnmapUsage);
  uint32_t timeout_ms =
      common->timeout_ms == CommonOptions{}.timeout_ms ? 60000 : common->timeout_ms;
  const std::string &what = rest->front();
  if (what.rfind("/dev/", 0) == 0 && !rbd::nbd_device_name(what).empty())
    return unmap_kernel(what, timeout_ms);
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
