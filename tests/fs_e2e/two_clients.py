#!/usr/bin/env python3
"""Close-to-open between two `strata mount`s of one file system: A creates,
rewrites, appends, renames and unlinks; after each of A's closes, B lists,
stats and reads, and must never see a stale entry or stale content.

  two_clients.py MNT_A MNT_B [ROUNDS]
"""
import errno
import os
import sys

a_root, b_root = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 40
a = os.path.join(a_root, "cto")
b = os.path.join(b_root, "cto")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("two_clients: FAIL: " + what, file=sys.stderr)


def write_a(name, data, mode="wb"):
    with open(os.path.join(a, name), mode) as f:
        f.write(data)


def read_b(name):
    with open(os.path.join(b, name), "rb") as f:
        return f.read()


def gone_on_b(name, step):
    check(name not in os.listdir(b), f"{step}: B still lists {name}")
    try:
        os.stat(os.path.join(b, name))
        check(False, f"{step}: B can still stat {name}")
    except OSError as e:
        check(e.errno == errno.ENOENT, f"{step}: stat {name} on B: {e}")
    try:
        read_b(name)
        check(False, f"{step}: B can still open {name}")
    except OSError as e:
        check(e.errno == errno.ENOENT, f"{step}: open {name} on B: {e}")


os.mkdir(a)
check(os.path.isdir(b), "B does not see the directory A made")
for i in range(rounds):
    f, g, d = f"f{i}", f"g{i}", f"d{i}"
    # B looks first, so that whatever it caches is about to be stale.
    check(f not in os.listdir(b), f"round {i}: B lists {f} before A made it")
    v1 = f"first {i} ".encode() * (1 + i * 37)
    write_a(f, v1)
    check(f in os.listdir(b), f"round {i}: B does not list {f} after A's close")
    st = os.stat(os.path.join(b, f))
    check(st.st_size == len(v1), f"round {i}: B stats {f} at {st.st_size} bytes, not {len(v1)}")
    check(read_b(f) == v1, f"round {i}: B reads stale content of {f} (create)")
    # Rewritten shorter (O_TRUNC), then appended to.
    v2 = f"second {i}".encode()
    write_a(f, v2)
    check(os.stat(os.path.join(b, f)).st_size == len(v2), f"round {i}: B's size of {f} after rewrite")
    check(read_b(f) == v2, f"round {i}: B reads stale content of {f} (rewrite)")
    write_a(f, b"+tail", "ab")
    check(read_b(f) == v2 + b"+tail", f"round {i}: B reads stale content of {f} (append)")
    # Renamed: the old name is gone, the new one has the content.
    os.rename(os.path.join(a, f), os.path.join(a, g))
    gone_on_b(f, f"round {i} rename")
    check(g in os.listdir(b), f"round {i}: B does not list {g} after the rename")
    check(read_b(g) == v2 + b"+tail", f"round {i}: B reads the wrong content under {g}")
    # A directory made and removed, with B having looked inside.
    os.mkdir(os.path.join(a, d))
    write_a(os.path.join(d, "x"), b"x")
    check(os.listdir(os.path.join(b, d)) == ["x"], f"round {i}: B's listing of {d}")
    check(read_b(os.path.join(d, "x")) == b"x", f"round {i}: B reads stale content of {d}/x")
    os.unlink(os.path.join(a, d, "x"))
    os.rmdir(os.path.join(a, d))
    gone_on_b(d, f"round {i} rmdir")
    # Unlinked: gone on B too.
    os.unlink(os.path.join(a, g))
    gone_on_b(g, f"round {i} unlink")
    if len(failures) > 20:
        break
# Asynchronous metadata: in a directory A made, A's creates, setattrs,
# renames and unlinks return before the MDS has them, and its closed
# files are written out later. B looking inside revokes A's lease, which
# sends and waits for all of it first.
many_a, many_b = os.path.join(a, "many"), os.path.join(b, "many")
os.mkdir(many_a)
expect = {}
for j in range(60):
    data = f"file {j} ".encode() * (j * 13 + 1)
    write_a(os.path.join("many", f"t{j}"), data)
    os.chmod(os.path.join(many_a, f"t{j}"), 0o640)
    if j % 3 == 0:
        os.rename(os.path.join(many_a, f"t{j}"), os.path.join(many_a, f"r{j}"))
        expect[f"r{j}"] = data
    elif j % 3 == 1:
        os.unlink(os.path.join(many_a, f"t{j}"))
    else:
        expect[f"t{j}"] = data
os.mkdir(os.path.join(many_a, "sub"))
write_a(os.path.join("many", "sub", "deep"), b"deep")
check(sorted(os.listdir(many_b)) == sorted(list(expect) + ["sub"]),
      "B's listing of a directory A filled asynchronously")
for name, data in expect.items():
    st = os.stat(os.path.join(many_b, name))
    check(st.st_size == len(data), f"B stats {name} at {st.st_size} bytes, not {len(data)}")
    check(st.st_mode & 0o777 == 0o640, f"B sees mode {oct(st.st_mode & 0o777)} on {name}")
    check(read_b(os.path.join("many", name)) == data, f"B reads stale content of many/{name}")
check(read_b(os.path.join("many", "sub", "deep")) == b"deep", "B reads many/sub/deep")
for name in expect:
    os.unlink(os.path.join(many_a, name))
os.unlink(os.path.join(many_a, "sub", "deep"))
os.rmdir(os.path.join(many_a, "sub"))
os.rmdir(many_a)
check(not os.path.exists(many_b), "B still sees the directory A removed")

# Times: B must see the mtime and ctime A's own stat shows, however long
# after the write the close came (the writeback cache sends the pages at
# close; the data changed at the write, which the kernel's times record).
import time  # noqa: E402

for i, (pause_before_write, size) in enumerate([(0, 100), (0.3, 100), (0, 100000), (0.3, 100000)]):
    name = f"times{i}"
    fd = os.open(os.path.join(a, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    time.sleep(pause_before_write)
    os.write(fd, b"t" * size)
    time.sleep(0.3)
    os.close(fd)
    sa = os.stat(os.path.join(a, name))
    sb = os.stat(os.path.join(b, name))
    check((sb.st_mtime_ns, sb.st_ctime_ns) == (sa.st_mtime_ns, sa.st_ctime_ns),
          f"{name}: B sees mtime/ctime {sb.st_mtime_ns}/{sb.st_ctime_ns}, "
          f"A {sa.st_mtime_ns}/{sa.st_ctime_ns}")
    os.unlink(os.path.join(a, name))

check(os.listdir(b) == [], f"B lists leftovers: {os.listdir(b)}")
if failures:
    print(f"two_clients: {len(failures)} stale views", file=sys.stderr)
    sys.exit(1)
print(f"two_clients: ok ({rounds} rounds)")
