#!/usr/bin/python3
"""Writes a small, deterministic source-like tree for the fs_e2e suite.

    make_tree.py DIR [FILES]

About FILES regular files (default 2000, ~8 MB) spread over nested
directories, with what a real tree has and a file system must keep: empty
files and directories, executables, symlinks (relative and dangling), hard
links, names with spaces and UTF-8, and fixed mtimes (so that tar d and rsync
compare something meaningful). The same arguments always give the same tree.
"""
import os
import random
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    root = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 2000
    rng = random.Random(12)
    os.makedirs(root, exist_ok=True)
    dirs = [root]
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "zeta"]
    stamp = 1_700_000_000
    files = []
    for i in range(count):
        if i % 40 == 0:
            parent = rng.choice(dirs)
            if parent.count(os.sep) - root.count(os.sep) < 6:
                name = f"{rng.choice(words)}_{i}"
                if i % 200 == 0:
                    name += " with space é"
                path = os.path.join(parent, name)
                os.mkdir(path)
                dirs.append(path)
        parent = rng.choice(dirs)
        path = os.path.join(parent, f"f{i}_{rng.choice(words)}.{rng.choice('chsx')}")
        # Mostly small files, a few larger ones; some empty.
        roll = rng.random()
        size = 0 if roll < 0.03 else rng.randint(1, 200_000) if roll > 0.98 else rng.randint(1, 6000)
        with open(path, "wb") as f:
            f.write(rng.randbytes(size))
        os.chmod(path, 0o755 if i % 17 == 0 else 0o644)
        files.append(path)
    for j in range(5):
        os.mkdir(os.path.join(rng.choice(dirs), f"empty_dir_{j}"))
    for j in range(30):
        target = rng.choice(files)
        link = os.path.join(rng.choice(dirs), f"link_{j}")
        os.symlink(os.path.relpath(target, os.path.dirname(link)), link)
    os.symlink("no/such/target", os.path.join(root, "dangling"))
    for j in range(20):
        target = rng.choice(files)
        os.link(target, os.path.join(os.path.dirname(target), f"hard_{j}"))
    # Fixed times, deepest first so that a directory's own time is set after
    # its contents were touched.
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (stamp, stamp), follow_symlinks=False)
        os.utime(dirpath, (stamp, stamp))


if __name__ == "__main__":
    main()
