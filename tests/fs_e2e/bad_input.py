#!/usr/bin/env python3
"""Bad input on a `strata mount`: each case must fail with its errno (not
hang, not EIO) and leave the file system working.

  bad_input.py MNT names|efbig MAX_FILE_SIZE
  bad_input.py MNT enospc
"""
import errno
import os
import sys

mnt, case = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("bad_input: FAIL: " + what, file=sys.stderr)


def expect_errno(want, what, fn, *args):
    try:
        fn(*args)
    except OSError as e:
        check(e.errno == want, f"{what}: {errno.errorcode.get(e.errno, e.errno)}, "
              f"not {errno.errorcode[want]}")
        return
    check(False, f"{what}: succeeded, not {errno.errorcode[want]}")


def still_works(after):
    d = os.path.join(mnt, "works")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, "probe")
    data = f"after {after}".encode() * 100
    with open(p, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    with open(p, "rb") as f:
        check(f.read() == data, f"after {after}: a new file reads back wrong")
    check("probe" in os.listdir(d), f"after {after}: a new file is not listed")
    os.unlink(p)


def create(p):
    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))


if case == "names":
    d = os.path.join(mnt, "names")
    os.mkdir(d)
    ok, long = "n" * 255, "n" * 256
    create(os.path.join(d, ok))
    check(ok in os.listdir(d), "a 255-byte name is not listed")
    expect_errno(errno.ENAMETOOLONG, "create with a 256-byte name", create, os.path.join(d, long))
    expect_errno(errno.ENAMETOOLONG, "mkdir with a 256-byte name", os.mkdir, os.path.join(d, long))
    expect_errno(errno.ENAMETOOLONG, "rename to a 256-byte name", os.rename,
                 os.path.join(d, ok), os.path.join(d, long))
    expect_errno(errno.ENAMETOOLONG, "symlink named with 256 bytes", os.symlink, "t",
                 os.path.join(d, long))
    expect_errno(errno.ENAMETOOLONG, "link to a 256-byte name", os.link, os.path.join(d, ok),
                 os.path.join(d, long))
    expect_errno(errno.ENAMETOOLONG, "stat of a 256-byte name", os.stat, os.path.join(d, long))
    check(os.listdir(d) == [ok], f"the directory holds {os.listdir(d)} after the refusals")
    # Multi-byte: 255 bytes fits, one more byte does not.
    u = "é" * 127 + "x"  # 255 bytes
    create(os.path.join(d, u))
    expect_errno(errno.ENAMETOOLONG, "create with a 256-byte UTF-8 name", create,
                 os.path.join(d, u + "y"))
    still_works("ENAMETOOLONG")
elif case == "efbig":
    limit = int(sys.argv[3])
    p = os.path.join(mnt, "big")
    fd = os.open(p, os.O_CREAT | os.O_RDWR, 0o644)
    os.pwrite(fd, b"head", 0)
    os.pwrite(fd, b"z", limit - 1)  # the last byte allowed
    expect_errno(errno.EFBIG, "pwrite past fs_max_file_size", os.pwrite, fd, b"zz", limit)
    expect_errno(errno.EFBIG, "ftruncate past fs_max_file_size", os.ftruncate, fd, limit + 1)
    try:
        os.fsync(fd)
    except OSError as e:
        check(False, f"fsync after the refused calls: {e} (an accepted write past the limit?)")
    try:
        os.close(fd)
    except OSError as e:
        check(False, f"close after the refused calls: {e}")
    check(os.stat(p).st_size == limit, f"size {os.stat(p).st_size} after the refusals, not {limit}")
    try:
        with open(p, "rb") as f:
            check(f.read(4) == b"head", "the file's head changed")
    except OSError as e:
        check(False, f"reopening the file after the refusals: {e}")
    expect_errno(errno.EFBIG, "truncate(path) past fs_max_file_size", os.truncate, p, limit + 4096)
    os.unlink(p)
    still_works("EFBIG")
elif case == "enospc":
    p = os.path.join(mnt, "full")
    err = None
    try:
        with open(p, "wb") as f:
            f.write(os.urandom(1 << 20))
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        err = e.errno
    check(err == errno.ENOSPC,
          f"writing on a full pool: {errno.errorcode.get(err, err) if err else 'no error'}, "
          "not ENOSPC")
else:
    sys.exit(f"bad_input.py: unknown case {case}")
if failures:
    sys.exit(1)
print(f"bad_input: {case} ok")
