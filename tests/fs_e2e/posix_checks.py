#!/usr/bin/python3
"""Syscall-level POSIX checks for the fs_e2e suite, on any directory.

    posix_checks.py SCRATCH_DIR [CHECK...]

Runs every check (or the named ones) in its own fresh directory under
SCRATCH_DIR and prints one line each: "ok NAME", "skip NAME: why" or
"FAIL NAME: what". Exit status 1 if any check failed. Debian's python3 only
(no pip modules): the errno values, locks and seeks shell tools cannot reach.
"""
import errno
import fcntl
import os
import shutil
import signal
import stat
import struct
import sys
import time
import traceback


class Skip(Exception):
    """A check that does not apply here (e.g. chown without root)."""


def expect_errno(codes, fn, *args, **kwargs):
    """Calls fn and requires it to fail with one of codes (an int or a tuple)."""
    codes = codes if isinstance(codes, tuple) else (codes,)
    try:
        fn(*args, **kwargs)
    except OSError as e:
        if e.errno in codes:
            return
        raise AssertionError(
            f"{fn.__name__}{args!r}: errno {errno.errorcode.get(e.errno, e.errno)}, "
            f"wanted {'/'.join(errno.errorcode[c] for c in codes)}") from e
    raise AssertionError(f"{fn.__name__}{args!r} succeeded, wanted "
                         f"{'/'.join(errno.errorcode[c] for c in codes)}")


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def write_file(path, data, mode=0o644):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def in_child(fn):
    """Runs fn() in a forked child (another process, for locks); its result is
    the child's exit status (0 when fn returned True)."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if fn() else 1)
        except BaseException:  # noqa: B036 - the child must never return
            traceback.print_exc()
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def other_user_may_enter(d, mode):
    """For the cases that act as another user: d gets `mode`; returns that
    user's uid (nobody), or skips the case when this is not root or other
    users cannot reach d (a mount without allow_other, or a parent's mode)."""
    if os.geteuid() != 0:
        raise Skip("needs root")
    os.chmod(d, mode)
    nobody = 65534
    if in_child(lambda: (os.setgid(nobody), os.setuid(nobody), os.stat(d)) and True) != 0:
        raise Skip("other users cannot reach the mount (allow_other, or a parent's mode)")
    return nobody


# ---- the checks: each gets a fresh, empty directory ----

def check_hard_links(d):
    a, b, c = (os.path.join(d, n) for n in "abc")
    write_file(a, b"one")
    check(os.stat(a).st_nlink == 1, "new file nlink != 1")
    os.link(a, b)
    os.link(a, c)
    sa, sb = os.stat(a), os.stat(b)
    check(sa.st_ino == sb.st_ino, "link has another inode")
    check(sa.st_nlink == 3 and sb.st_nlink == 3, f"nlink {sa.st_nlink}, wanted 3")
    with open(b, "ab") as f:
        f.write(b" two")
    check(read_file(c) == b"one two", "write through one link not seen through another")
    os.unlink(a)
    check(os.stat(b).st_nlink == 2, "nlink after unlink != 2")
    os.rename(b, c)  # same inode: POSIX says nothing happens
    check(os.path.exists(b) and os.stat(c).st_nlink == 2, "rename between hard links changed them")
    expect_errno(errno.EEXIST, os.link, b, c)
    os.mkdir(os.path.join(d, "dir"))
    expect_errno(errno.EPERM, os.link, os.path.join(d, "dir"), os.path.join(d, "dirlink"))
    os.mkdir(os.path.join(d, "dir", "s1"))
    os.mkdir(os.path.join(d, "dir", "s2"))
    n = os.stat(os.path.join(d, "dir")).st_nlink
    check(n in (1, 4), f"directory with 2 subdirectories has nlink {n} (wanted 4, or 1)")


def check_symlinks(d):
    target = "some/where/" + "x" * 1000
    link = os.path.join(d, "link")
    os.symlink(target, link)
    check(os.readlink(link) == target, "readlink differs")
    check(stat.S_ISLNK(os.lstat(link).st_mode), "lstat is not a symlink")
    check(os.lstat(link).st_size == len(target), "symlink size != target length")
    expect_errno(errno.ENOENT, os.stat, link)
    write_file(os.path.join(d, "file"), b"data")
    os.symlink("file", os.path.join(d, "good"))
    check(read_file(os.path.join(d, "good")) == b"data", "read through symlink")
    os.symlink("loop2", os.path.join(d, "loop1"))
    os.symlink("loop1", os.path.join(d, "loop2"))
    expect_errno(errno.ELOOP, os.open, os.path.join(d, "loop1"), os.O_RDONLY)
    expect_errno(errno.ELOOP, os.open, os.path.join(d, "good"), os.O_RDONLY | os.O_NOFOLLOW)
    os.mkdir(os.path.join(d, "sub"))
    os.symlink("../file", os.path.join(d, "sub", "up"))
    check(read_file(os.path.join(d, "sub", "up")) == b"data", "relative ../ symlink")
    os.unlink(link)
    check(not os.path.lexists(link), "symlink still there after unlink")


def check_rename(d):
    p = lambda *n: os.path.join(d, *n)  # noqa: E731
    write_file(p("a"), b"new")
    write_file(p("b"), b"old")
    old_ino = os.stat(p("a")).st_ino
    os.rename(p("a"), p("b"))
    check(not os.path.exists(p("a")) and read_file(p("b")) == b"new", "rename over a file")
    check(os.stat(p("b")).st_ino == old_ino, "renamed file changed inode")
    os.mkdir(p("d1"))
    os.mkdir(p("d2"))
    write_file(p("d1", "f"), b"in d1")
    os.rename(p("d1"), p("d2"))  # over an empty directory
    check(read_file(p("d2", "f")) == b"in d1" and not os.path.exists(p("d1")),
          "rename of a directory over an empty one")
    os.mkdir(p("d3"))
    write_file(p("d3", "g"), b"in d3")
    expect_errno((errno.ENOTEMPTY, errno.EEXIST), os.rename, p("d3"), p("d2"))
    check(read_file(p("d2", "f")) == b"in d1" and read_file(p("d3", "g")) == b"in d3",
          "failed rename changed something")
    os.mkdir(p("empty"))
    expect_errno(errno.EISDIR, os.rename, p("b"), p("empty"))
    expect_errno(errno.ENOTDIR, os.rename, p("empty"), p("b"))
    expect_errno(errno.EINVAL, os.rename, p("d2"), p("d2", "inside"))
    # Across directories, and back, with the entry moving atomically.
    os.rename(p("b"), p("d3", "b"))
    check(read_file(p("d3", "b")) == b"new" and not os.path.exists(p("b")), "rename across dirs")
    os.rename(p("d3"), p("d2", "d3"))
    check(read_file(p("d2", "d3", "g")) == b"in d3", "rename of a directory into another")
    check(sorted(os.listdir(d)) == ["d2", "empty"], f"listing after renames: {os.listdir(d)}")
    expect_errno(errno.ENOENT, os.rename, p("missing"), p("x"))


def check_mkdir_rmdir(d):
    p = lambda *n: os.path.join(d, *n)  # noqa: E731
    os.mkdir(p("a"))
    expect_errno(errno.EEXIST, os.mkdir, p("a"))
    write_file(p("a", "f"), b"")
    expect_errno((errno.ENOTEMPTY, errno.EEXIST), os.rmdir, p("a"))
    expect_errno(errno.ENOTDIR, os.rmdir, p("a", "f"))
    expect_errno(errno.EISDIR, os.unlink, p("a"))
    expect_errno(errno.ENOENT, os.mkdir, p("no", "such"))
    expect_errno(errno.ENOTDIR, os.mkdir, p("a", "f", "x"))
    os.unlink(p("a", "f"))
    os.rmdir(p("a"))
    check(not os.path.exists(p("a")), "rmdir left the directory")
    os.mkdir(p("m"), 0o700)
    check(stat.S_IMODE(os.stat(p("m")).st_mode) == 0o700 & ~current_umask(), "mkdir mode")


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_open_flags(d):
    p = lambda *n: os.path.join(d, *n)  # noqa: E731
    fd = os.open(p("x"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    expect_errno(errno.EEXIST, os.open, p("x"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    os.symlink("dangling", p("sl"))
    expect_errno(errno.EEXIST, os.open, p("sl"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    check(not os.path.exists(p("dangling")), "O_EXCL followed a symlink")
    # O_APPEND: two descriptors, interleaved writes, nothing overwritten.
    a = os.open(p("log"), os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
    b = os.open(p("log"), os.O_WRONLY | os.O_APPEND)
    for i in range(50):
        os.write(a if i % 2 == 0 else b, b"%02d\n" % i)
    os.close(a)
    os.close(b)
    check(read_file(p("log")) == b"".join(b"%02d\n" % i for i in range(50)), "O_APPEND lost writes")
    write_file(p("t"), b"z" * 10000)
    fd = os.open(p("t"), os.O_WRONLY | os.O_TRUNC)
    check(os.fstat(fd).st_size == 0, "O_TRUNC did not truncate")
    os.write(fd, b"short")
    os.close(fd)
    check(read_file(p("t")) == b"short", "content after O_TRUNC")
    expect_errno(errno.ENOENT, os.open, p("none"), os.O_RDONLY)
    expect_errno(errno.EISDIR, os.open, d, os.O_WRONLY)
    expect_errno(errno.ENOTDIR, os.open, p("t"), os.O_RDONLY | os.O_DIRECTORY)


def check_truncate_sparse(d):
    path = os.path.join(d, "f")
    write_file(path, b"0123456789")
    os.truncate(path, 1 << 20)
    data = read_file(path)
    check(len(data) == 1 << 20 and data[:10] == b"0123456789" and data[10:] == bytes(len(data) - 10),
          "truncate up: size or zeros wrong")
    os.truncate(path, 5)
    check(read_file(path) == b"01234", "truncate down")
    os.truncate(path, 100)
    check(read_file(path) == b"01234" + bytes(95), "truncate down then up shows stale bytes")
    fd = os.open(path, os.O_RDWR)
    try:
        os.ftruncate(fd, 0)
        check(os.fstat(fd).st_size == 0, "ftruncate to 0")
        hole_end = 64 << 20
        os.pwrite(fd, b"end", hole_end)
        os.fsync(fd)
        st = os.fstat(fd)
        check(st.st_size == hole_end + 3, f"sparse size {st.st_size}")
        check(os.pread(fd, 4096, hole_end // 2) == bytes(4096), "hole does not read as zeros")
        check(os.pread(fd, 10, hole_end) == b"end", "data after the hole")
        check(st.st_blocks * 512 < hole_end // 2,
              f"a 64 MiB hole takes {st.st_blocks * 512} bytes (not sparse)")
        # SEEK_DATA / SEEK_HOLE: a file system may answer generically (all
        # data, hole at EOF) but never wrongly.
        try:
            data_at = os.lseek(fd, 0, os.SEEK_DATA)
            hole_at = os.lseek(fd, 0, os.SEEK_HOLE)
        except OSError as e:
            if e.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                raise
        else:
            check(data_at <= hole_end, f"SEEK_DATA from 0 skipped the data: {data_at}")
            check(0 <= hole_at <= st.st_size, f"SEEK_HOLE from 0 out of range: {hole_at}")
            expect_errno(errno.ENXIO, os.lseek, fd, st.st_size + 1, os.SEEK_DATA)
    finally:
        os.close(fd)
    expect_errno(errno.EINVAL, os.truncate, path, -1)


def check_small_files_grow(d):
    """Small files (Strata keeps them inline, in their inode) growing past
    that, shrinking, and rewritten, read back at each step."""
    a = os.path.join(d, "a")
    head = os.urandom(100)
    write_file(a, head)
    check(read_file(a) == head, "a small file")
    tail = os.urandom(5 << 20)
    with open(a, "ab") as f:
        f.write(tail)
    check(read_file(a) == head + tail, "a small file appended to past 5 MiB")
    os.truncate(a, 50)
    check(read_file(a) == head[:50], "a grown file cut small again")
    b = os.path.join(d, "b")
    fd = os.open(b, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"abc")
        os.fsync(fd)
        os.pwrite(fd, b"Z" * 10, 4090)  # across 4 KiB
        want = b"abc" + bytes(4087) + b"Z" * 10
        check(os.pread(fd, 8192, 0) == want, "a small file written past 4 KiB, before close")
        os.ftruncate(fd, 2)
        check(os.pread(fd, 100, 0) == b"ab", "ftruncate of an open small file")
    finally:
        os.close(fd)
    check(read_file(b) == b"ab", "after close")
    write_file(b, b"short")
    check(read_file(b) == b"short", "rewritten with O_TRUNC")
    empty = os.path.join(d, "empty")
    write_file(empty, b"")
    os.truncate(empty, 3000)
    check(read_file(empty) == bytes(3000), "an empty file grown by truncate reads zeros")


def check_attributes(d):
    path = os.path.join(d, "f")
    write_file(path, b"x")
    for mode in (0o600, 0o640, 0o755, 0o4755, 0o2750, 0o000):
        os.chmod(path, mode)
        got = stat.S_IMODE(os.stat(path).st_mode)
        check(got == mode, f"chmod {mode:o} reads back {got:o}")
    os.chmod(path, 0o644)
    os.mkdir(os.path.join(d, "sticky"))
    os.chmod(os.path.join(d, "sticky"), 0o1777)
    check(stat.S_IMODE(os.stat(os.path.join(d, "sticky")).st_mode) == 0o1777, "sticky dir mode")
    # utimens with nanoseconds, and symlink times without following.
    os.utime(path, ns=(1_234_567_891_123_456_789, 1_000_000_000_987_654_321))
    st = os.stat(path)
    check(st.st_atime_ns == 1_234_567_891_123_456_789, f"atime_ns {st.st_atime_ns}")
    check(st.st_mtime_ns == 1_000_000_000_987_654_321, f"mtime_ns {st.st_mtime_ns}")
    os.symlink("f", os.path.join(d, "sl"))
    os.utime(os.path.join(d, "sl"), ns=(5_000_000_000, 6_000_000_000), follow_symlinks=False)
    check(os.lstat(os.path.join(d, "sl")).st_mtime_ns == 6_000_000_000, "symlink mtime")
    check(os.stat(path).st_mtime_ns == 1_000_000_000_987_654_321, "lutimes followed the link")
    before = time.time_ns()
    os.utime(path)  # now
    check(os.stat(path).st_mtime_ns >= before - 2_000_000_000, "utime(now) mtime")
    # A write moves mtime and ctime forward.
    os.utime(path, ns=(0, 0))
    with open(path, "ab") as f:
        f.write(b"y")
    st = os.stat(path)
    check(st.st_mtime_ns > 0 and st.st_ctime_ns > 0, "write did not update mtime/ctime")
    if os.geteuid() != 0:
        expect_errno(errno.EPERM, os.chown, path, 0, 0)
        return
    os.chown(path, 1234, 5678)
    st = os.stat(path)
    check((st.st_uid, st.st_gid) == (1234, 5678), f"chown reads back {st.st_uid}:{st.st_gid}")
    os.chown(os.path.join(d, "sl"), 4321, 8765, follow_symlinks=False)
    check(os.lstat(os.path.join(d, "sl")).st_uid == 4321, "lchown")
    check(os.stat(path).st_uid == 1234, "lchown followed the link")
    os.chown(path, -1, 42)
    check((os.stat(path).st_uid, os.stat(path).st_gid) == (1234, 42), "chown of the group alone")


def check_name_lengths(d):
    ok = os.path.join(d, "n" * 255)
    write_file(ok, b"255")
    check(read_file(ok) == b"255" and "n" * 255 in os.listdir(d), "255-byte name")
    os.rename(ok, os.path.join(d, "m" * 255))
    long = os.path.join(d, "n" * 256)
    expect_errno(errno.ENAMETOOLONG, os.open, long, os.O_CREAT | os.O_WRONLY, 0o644)
    expect_errno(errno.ENAMETOOLONG, os.stat, long)
    expect_errno(errno.ENAMETOOLONG, os.mkdir, long)
    expect_errno(errno.ENAMETOOLONG, os.rename, os.path.join(d, "m" * 255), long)
    expect_errno(errno.ENAMETOOLONG, os.symlink, "t", long)
    check(os.listdir(d) == ["m" * 255], f"listing after refused names: {os.listdir(d)}")
    # Two bytes of UTF-8 per character: 127 characters fit, 128 do not.
    write_file(os.path.join(d, "é" * 127), b"")
    expect_errno(errno.ENAMETOOLONG, write_file, os.path.join(d, "é" * 128), b"")


def check_name_bytes(d):
    bd = os.fsencode(d)
    every = bytes(b for b in range(1, 256) if b != ord("/"))
    write_file(os.path.join(bd, every), b"every byte")
    singles = [bytes([b]) for b in range(1, 256) if b not in (ord("/"), ord("."))]
    for name in singles:
        write_file(os.path.join(bd, name), name)
    names = set(os.listdir(bd))
    check(every in names, "the name with every byte is not listed")
    missing = [n for n in singles if n not in names]
    check(not missing, f"single-byte names missing from the listing: {missing[:5]}")
    check(len(names) == len(singles) + 1, f"{len(names)} names listed, wanted {len(singles) + 1}")
    check(read_file(os.path.join(bd, every)) == b"every byte", "read of the every-byte name")
    for name in singles:
        check(read_file(os.path.join(bd, name)) == name, f"content of {name!r}")
    os.rename(os.path.join(bd, every), os.path.join(bd, every[::-1]))
    check(read_file(os.path.join(bd, every[::-1])) == b"every byte", "rename of the every-byte name")


def check_deep_path(d):
    """A chain of directories ~4000 bytes deep below d, walked with dir fds
    (the absolute path, with the mount's prefix, may pass PATH_MAX)."""
    component = "d" * 199
    depth = 20  # 20 * (199 + 1) = 4000 bytes
    fds = [os.open(d, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for _ in range(depth):
            os.mkdir(component, dir_fd=fds[-1])
            fds.append(os.open(component, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        fd = os.open("leaf", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fds[-1])
        os.write(fd, b"deep")
        os.close(fd)
        rel = "/".join([component] * depth) + "/leaf"
        check(len(rel) >= 4000, f"relative path only {len(rel)} bytes")
        # The same file by its 4005-byte relative path, from d.
        fd = os.open(rel, os.O_RDONLY, dir_fd=fds[0])
        check(os.read(fd, 10) == b"deep", "read by the long relative path")
        os.close(fd)
        too_long = os.path.join(d, rel, "x" * (4200 - len(rel)))
        expect_errno(errno.ENAMETOOLONG, os.stat, too_long)
        check(os.stat(rel, dir_fd=fds[0]).st_size == 4, "stat by the long path")
    finally:
        for fd in fds:
            os.close(fd)
    shutil.rmtree(os.path.join(d, component))
    check(os.listdir(d) == [], "the deep tree was not removed")


def check_flock(d):
    path = os.path.join(d, "lock")
    write_file(path, b"")
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)

    def try_lock(kind):
        def attempt():
            cfd = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(cfd, kind | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                return False
        return attempt

    check(in_child(try_lock(fcntl.LOCK_EX)) == 1, "flock: a second process got LOCK_EX")
    check(in_child(try_lock(fcntl.LOCK_SH)) == 1, "flock: a second process got LOCK_SH over LOCK_EX")
    fcntl.flock(fd, fcntl.LOCK_SH)
    check(in_child(try_lock(fcntl.LOCK_SH)) == 0, "flock: two shared locks refused")
    check(in_child(try_lock(fcntl.LOCK_EX)) == 1, "flock: LOCK_EX granted over LOCK_SH")
    fcntl.flock(fd, fcntl.LOCK_UN)
    check(in_child(try_lock(fcntl.LOCK_EX)) == 0, "flock: LOCK_EX refused after unlock")
    # A blocking waiter is woken by the unlock (bounded by an alarm).
    fcntl.flock(fd, fcntl.LOCK_EX)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(20)
        cfd = os.open(path, os.O_RDWR)
        os.write(w, b"w")
        fcntl.flock(cfd, fcntl.LOCK_EX)
        os._exit(0)
    os.close(w)
    os.read(r, 1)
    time.sleep(0.2)
    fcntl.flock(fd, fcntl.LOCK_UN)
    _, status = os.waitpid(pid, 0)
    check(os.waitstatus_to_exitcode(status) == 0, "flock: a blocked waiter was not woken")
    os.close(r)
    os.close(fd)


def check_fcntl_locks(d):
    path = os.path.join(d, "lock")
    write_file(path, bytes(1000))
    fd = os.open(path, os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX, 100, 0)  # bytes 0..99

    def try_lock(kind, length, start):
        def attempt():
            cfd = os.open(path, os.O_RDWR)
            try:
                fcntl.lockf(cfd, kind | fcntl.LOCK_NB, length, start)
                return True
            except OSError as e:
                if e.errno in (errno.EAGAIN, errno.EACCES):
                    return False
                raise
        return attempt

    check(in_child(try_lock(fcntl.LOCK_EX, 10, 50)) == 1, "fcntl: overlapping write lock granted")
    check(in_child(try_lock(fcntl.LOCK_SH, 1, 99)) == 1, "fcntl: read lock over a write lock granted")
    check(in_child(try_lock(fcntl.LOCK_EX, 100, 100)) == 0, "fcntl: disjoint range refused")

    def getlk():
        cfd = os.open(path, os.O_RDWR)
        # struct flock on x86_64: short type, short whence, off_t start, off_t len, pid_t pid
        req = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 10, 1, 0)
        got = struct.unpack("hhqqi", fcntl.fcntl(cfd, fcntl.F_GETLK, req)[:struct.calcsize("hhqqi")])
        return got[0] == fcntl.F_WRLCK and got[4] == os.getppid() and got[2] == 0 and got[3] == 100

    check(in_child(getlk) == 0, "fcntl: F_GETLK does not name the holder and its range")
    fcntl.lockf(fd, fcntl.LOCK_UN, 50, 0)  # split: 50..99 stay locked
    check(in_child(try_lock(fcntl.LOCK_EX, 50, 0)) == 0, "fcntl: unlocked half still locked")
    check(in_child(try_lock(fcntl.LOCK_EX, 1, 75)) == 1, "fcntl: kept half not locked")
    os.close(fd)  # closing any fd drops the process's locks
    check(in_child(try_lock(fcntl.LOCK_EX, 0, 0)) == 0, "fcntl: locks survive close")


def check_statfs(d):
    st = os.statvfs(d)
    check(st.f_bsize > 0 and st.f_frsize > 0, f"block sizes {st.f_bsize}/{st.f_frsize}")
    check(st.f_blocks > 0, "f_blocks is 0")
    check(st.f_bfree <= st.f_blocks and st.f_bavail <= st.f_blocks,
          f"free {st.f_bfree} / avail {st.f_bavail} above total {st.f_blocks}")
    check(st.f_namemax >= 255, f"f_namemax {st.f_namemax}")
    check(st.f_files == 0 or st.f_ffree <= st.f_files, "free inodes above total")


def check_unlinked_open_file(d):
    path = os.path.join(d, "f")
    payload = os.urandom(300_000)
    write_file(path, payload)
    fd = os.open(path, os.O_RDWR)
    os.unlink(path)
    check(not os.path.exists(path) and os.listdir(d) == [], "unlinked name still there")
    check(os.fstat(fd).st_nlink == 0, f"nlink of an unlinked open file {os.fstat(fd).st_nlink}")
    check(os.pread(fd, len(payload), 0) == payload, "unlinked open file unreadable")
    os.pwrite(fd, b"more", len(payload))
    check(os.pread(fd, 4, len(payload)) == b"more", "unlinked open file unwritable")
    # A new file of the same name is another file.
    write_file(path, b"new")
    check(os.pread(fd, 3, 0) == payload[:3], "the new name replaced the open file's data")
    os.close(fd)
    check(read_file(path) == b"new", "the new file")


def check_set_id_bits(d):
    """What Linux does to set-id bits (write(2), truncate(2), chown(2) man
    pages; fs/attr.c): a write or truncate by another user drops S_ISUID,
    and S_ISGID when the group may execute or the writer is not in the
    file's group; root's write keeps them (CAP_FSETID); chown drops S_ISUID
    and S_ISGID only with group execute. Needs root and a mount other users
    may enter (allow_other)."""
    nobody = other_user_may_enter(d, 0o777)

    def as_nobody(fn):
        def run():
            os.setgroups([])
            os.setgid(nobody)
            os.setuid(nobody)
            fn()
            return True
        return run

    def mode(p):
        return os.stat(p).st_mode & 0o7777

    def setid_file(name, m):
        p = os.path.join(d, name)
        write_file(p, b"x" * 100)
        os.chmod(p, m)
        check(mode(p) == m, f"chmod {oct(m)} of {name} gave {oct(mode(p))}")
        return p

    def append(p):
        with open(p, "ab") as f:
            f.write(b"more")

    # S_ISGID without g+x, writer outside the group: a local filesystem
    # drops it; FUSE without FUSE_HANDLE_KILLPRIV_V2 keeps it (the kernel's
    # fuse_setattr drops S_ISGID only with g+x), so either passes.
    for name, m, after in (("w_suid", 0o4777, (0o777,)), ("w_sgid_gx", 0o2777, (0o777,)),
                           ("w_sgid_nogx", 0o2767, (0o767, 0o2767))):
        p = setid_file(name, m)
        check(in_child(as_nobody(lambda: append(p))) == 0, f"another user cannot append to {name}")
        check(mode(p) in after, f"{name} after another user's write: {oct(mode(p))}")
        check(os.path.getsize(p) == 104, f"{name}: the write is not all there")
    p = setid_file("t_suid", 0o4777)
    check(in_child(as_nobody(lambda: os.truncate(p, 10))) == 0, "another user cannot truncate t_suid")
    check(mode(p) == 0o777, f"t_suid after another user's truncate: {oct(mode(p))}")
    check(os.path.getsize(p) == 10, "t_suid: the truncate did not happen")
    p = setid_file("root_w", 0o6755)
    append(p)
    check(mode(p) == 0o6755, f"root's write changed root_w's mode to {oct(mode(p))}")
    p = setid_file("c_both", 0o6755)
    os.chown(p, 1, 1)
    check(mode(p) == 0o755, f"chown of a 6755 file left {oct(mode(p))}")
    p = setid_file("c_sgid_nogx", 0o2745)
    os.chown(p, 1, 1)
    check(mode(p) == 0o2745, f"chown of a 2745 file left {oct(mode(p))} (S_ISGID without g+x stays)")
    dd = os.path.join(d, "dir")
    os.mkdir(dd)
    os.chmod(dd, 0o2775)
    os.chown(dd, 1, 1)
    check(mode(dd) == 0o2775, f"chown of a set-gid directory left {oct(mode(dd))}")


def check_permissions(d):
    """Mode bits against another user (path_resolution(7), open(2),
    access(2), unlink(2)): search (x) on each directory of a path, read (r)
    to list a directory or read a file, write (w) to write a file or to add
    or remove names, and a sticky directory keeps others' names. Root looks
    at everything first, so that a client answering from its caches is
    checked too. Needs root and a mount other users may enter (allow_other)
    whose permissions are enforced (passthrough_ll only with
    -o default_permissions: it runs every call as its own user, so that its
    runs set FS_E2E_SERVER_OWNS_FILES=1: files belong to root there)."""
    nobody = other_user_may_enter(d, 0o755)

    def errno_as_nobody(fn):
        """fn() run by user nobody: 0, or the errno it failed with."""
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(nobody)
                os.setuid(nobody)
                fn()
                os._exit(0)
            except OSError as e:
                os._exit(e.errno if 0 < e.errno < 250 else 250)
            except BaseException:  # noqa: B036 - the child must never return
                traceback.print_exc()
                os._exit(251)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)

    def expect(code, what, fn):
        got = errno_as_nobody(fn)
        check(got == code, f"{what}: {errno.errorcode.get(got, got) if got else 'success'}, "
              f"expected {errno.errorcode[code] if code else 'success'}")

    def mkdir(name, mode):
        p = os.path.join(d, name)
        os.mkdir(p)
        os.chmod(p, mode)
        return p

    def create(p, mode=0o644):
        write_file(p, b"data")
        os.chmod(p, mode)

    def warm(p):  # root's own look: entries, attributes and missing names cached
        if os.path.isdir(p):
            for n in os.listdir(p):
                os.lstat(os.path.join(p, n))
        for n in ("missing", "new"):
            check(not os.path.exists(os.path.join(p, n)), f"{p}/{n} exists")

    private = mkdir("private", 0o700)
    create(os.path.join(private, "secret"))
    ro = mkdir("ro", 0o755)
    create(os.path.join(ro, "f"))
    create(os.path.join(ro, "f600"), 0o600)
    noread = mkdir("noread", 0o711)
    create(os.path.join(noread, "g"))
    sticky = mkdir("sticky", 0o1777)
    create(os.path.join(sticky, "roots"), 0o666)
    os.setxattr(os.path.join(ro, "f"), "user.tag", b"open")
    os.setxattr(os.path.join(ro, "f600"), "user.tag", b"closed")
    for p in (private, ro, noread, sticky):
        warm(p)
    for n in ("f", "f600"):  # the values cached as root read them
        os.getxattr(os.path.join(ro, n), "user.tag")

    def write_new(p):
        with open(p, "wb") as f:
            f.write(b"x")

    def open_w(p):
        os.close(os.open(p, os.O_WRONLY))

    def access_is(p, mode, want):
        if os.access(p, mode) != want:
            raise OSError(errno.EPROTO, f"access({p}, {mode}) is not {want}")

    expect(errno.EACCES, "stat in a 0700 directory", lambda: os.stat(os.path.join(private, "secret")))
    expect(errno.EACCES, "lookup of a missing name in a 0700 directory",
           lambda: os.stat(os.path.join(private, "missing")))
    expect(errno.EACCES, "listing a 0700 directory", lambda: os.listdir(private))
    expect(errno.EACCES, "create in a 0700 directory", lambda: write_new(os.path.join(private, "new")))
    expect(0, "reading a 0644 file", lambda: read_file(os.path.join(ro, "f")))
    expect(errno.EACCES, "opening a 0644 file for writing", lambda: open_w(os.path.join(ro, "f")))
    expect(errno.EACCES, "truncating a 0644 file", lambda: os.truncate(os.path.join(ro, "f"), 0))
    expect(errno.EACCES, "reading a 0600 file", lambda: read_file(os.path.join(ro, "f600")))
    expect(0, "reading a user. xattr of a 0644 file",
           lambda: os.getxattr(os.path.join(ro, "f"), "user.tag"))
    expect(errno.EACCES, "reading a user. xattr of a 0600 file",
           lambda: os.getxattr(os.path.join(ro, "f600"), "user.tag"))
    expect(errno.EACCES, "setting a user. xattr of a 0644 file",
           lambda: os.setxattr(os.path.join(ro, "f"), "user.tag", b"mine"))
    expect(errno.EACCES, "create in a 0755 directory", lambda: write_new(os.path.join(ro, "new")))
    expect(errno.EACCES, "mkdir in a 0755 directory", lambda: os.mkdir(os.path.join(ro, "new")))
    expect(errno.EACCES, "unlink in a 0755 directory", lambda: os.unlink(os.path.join(ro, "f")))
    expect(errno.EACCES, "rename in a 0755 directory",
           lambda: os.rename(os.path.join(ro, "f"), os.path.join(ro, "new")))
    expect(0, "listing a 0755 directory", lambda: os.listdir(ro))
    expect(0, "access(2) of a 0644 file", lambda: (
        access_is(os.path.join(ro, "f"), os.R_OK, True),
        access_is(os.path.join(ro, "f"), os.W_OK, False),
        access_is(os.path.join(ro, "f"), os.X_OK, False),
        access_is(private, os.X_OK, False)))
    expect(errno.EACCES, "listing a 0711 directory", lambda: os.listdir(noread))
    expect(0, "stat in a 0711 directory", lambda: os.stat(os.path.join(noread, "g")))
    expect(errno.EPERM, "unlink of another's file in a sticky directory",
           lambda: os.unlink(os.path.join(sticky, "roots")))
    mine = os.path.join(sticky, "mine")
    expect(0, "create in a sticky directory", lambda: write_new(mine))
    if os.environ.get("FS_E2E_SERVER_OWNS_FILES") == "1":
        os.unlink(mine)  # passthrough_ll made it as its own user (root)
    else:
        owner = os.stat(mine).st_uid
        check(owner == nobody, f"a file user nobody made belongs to uid {owner}")
        expect(0, "unlink of one's own file in a sticky directory", lambda: os.unlink(mine))
    expect(0, "writing another's 0666 file in a sticky directory",
           lambda: write_new(os.path.join(sticky, "roots")))
    # Nothing above changed what root sees.
    check(sorted(os.listdir(ro)) == ["f", "f600"], f"ro holds {sorted(os.listdir(ro))}")
    check(read_file(os.path.join(private, "secret")) == b"data", "private/secret changed")


def check_readdir(d):
    names = {f"entry{i:04d}" for i in range(600)}
    for n in names:
        write_file(os.path.join(d, n), b"")
    check(set(os.listdir(d)) == names, "listing of 600 entries")
    for n in list(names)[:300]:
        os.unlink(os.path.join(d, n))
    left = set(os.listdir(d))
    check(len(left) == 300 and left < names, "listing after unlinking half")
    # Unlinking while iterating: every remaining entry is seen at most once.
    seen = []
    with os.scandir(d) as it:
        for entry in it:
            seen.append(entry.name)
            os.unlink(entry.path)
    check(len(seen) == len(set(seen)), "readdir returned an entry twice")
    check(os.listdir(d) == [], "entries left")


CHECKS = {name[len("check_"):]: fn for name, fn in globals().items() if name.startswith("check_")}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    scratch = sys.argv[1]
    wanted = sys.argv[2:] or list(CHECKS)
    failed = 0
    for name in wanted:
        d = os.path.join(scratch, name)
        os.makedirs(d)
        t0 = time.monotonic()
        try:
            CHECKS[name](d)
        except Skip as e:
            print(f"skip {name}: {e}", flush=True)
            continue
        except Exception as e:  # noqa: BLE001 - every failure is reported, then the next check
            failed += 1
            print(f"FAIL {name}: {e}", flush=True)
            traceback.print_exc(file=sys.stderr)
            continue
        print(f"ok {name} ({time.monotonic() - t0:.2f} s)", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
