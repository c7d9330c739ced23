// Which /dev/nbdN to use: the kernel's NBD devices as sysfs shows them.
// A device is in use while /sys/block/nbdN/pid exists (the driver creates
// it when NBD_DO_IT starts the device and removes it when the device is
// torn down). Both roots are parameters so tests can use a fake tree.
#pragma once

#include <sys/types.h>

#include <string>

namespace strata::rbd {

// "nbdN" for "/dev/nbdN" (any directory, N decimal digits), else "".
std::string nbd_device_name(const std::string &device);

// True when dev_root holds at least one nbdN entry (the driver is loaded).
bool kernel_nbd_present(const std::string &dev_root = "/dev");

// The process serving `device` (sysfs_root/block/nbdN/pid): > 0 in use,
// 0 free, -ENODEV when sysfs does not know the device, -EINVAL when the
// name is not nbdN.
long nbd_device_owner(const std::string &device, const std::string &sysfs_root = "/sys");

// The free device with the lowest N, as dev_root + "/nbdN". "" with *why
// set (naming sysfs_root) when there is none or the driver is absent.
// Another process may take it before us: attaching then fails with EBUSY.
std::string pick_free_nbd_device(const std::string &sysfs_root, const std::string &dev_root,
                                 std::string *why);

}  // namespace strata::rbd
