#!/usr/bin/env python3
"""What of a running latscope is resident, and why its program text is (bench/README.md,
"Peak memory"). Starts BINARY with ARGS under the latency-test lock, and AFTER seconds into
the run prints the resident kB of each mapping (smaps), then for BINARY's text mapping the
resident kB and the page-cache folios it is mapped in (pagemap and kpageflags: a run of
pages from a compound head through its tails is one folio). Peak RSS: bench/rss.sh (a
child of Python would count Python's own pages from before its exec).

With --cold the binary's pages are dropped from the page cache first (fsync, then
POSIX_FADV_DONTNEED), so the run reads it as after a reboot, through readahead; otherwise
the cache holds it as it was last written or read (a fresh `cp` leaves small folios).

Usage (root: pagemap frame numbers and kpageflags need it):
    bench/resident-text.py [--cold] [--after S] BINARY ARGS...
    e.g. bench/resident-text.py target/release/latscope timer -p 95 -i 1000 -l 3000 -a 1 -q --dma-latency 0
"""
import collections
import fcntl
import os
import struct
import subprocess
import sys
import time

LOCK = "/tmp/latscope-latency-tests.lock"
KPF_COMPOUND_HEAD = 15
KPF_COMPOUND_TAIL = 16


def mappings(pid):
    """(start, end, perms, path) of each mapping."""
    out = []
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            parts = line.split()
            start, end = (int(x, 16) for x in parts[0].split("-"))
            out.append((start, end, parts[1], parts[5] if len(parts) > 5 else ""))
    return out


def rss_by_mapping(pid):
    """Resident kB by (path, perms), from smaps."""
    rss = collections.Counter()
    key = None
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            first = line.split()[0]
            if "-" in first and not first.endswith(":"):
                parts = line.split()
                key = (parts[5] if len(parts) > 5 else "[anon]", parts[1])
            elif first == "Rss:":
                rss[key] += int(line.split()[1])
    return rss


def folios(pid, start, end):
    """Resident kB of [start, end) and the folios (in pages) its resident pages belong to."""
    sizes = []
    resident = 0
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap, open("/proc/kpageflags", "rb") as kpf:
        pagemap.seek(start // 4096 * 8)
        entries = pagemap.read((end - start) // 4096 * 8)
        current = 0
        for i in range(len(entries) // 8):
            entry = struct.unpack_from("<Q", entries, i * 8)[0]
            if not entry >> 63:
                if current:
                    sizes.append(current)
                current = 0
                continue
            resident += 4
            kpf.seek((entry & ((1 << 55) - 1)) * 8)
            flags = struct.unpack("<Q", kpf.read(8))[0]
            if flags >> KPF_COMPOUND_TAIL & 1:
                current += 1
            else:
                if current:
                    sizes.append(current)
                current = 1 if flags >> KPF_COMPOUND_HEAD & 1 else 0
                if not current:
                    sizes.append(1)
        if current:
            sizes.append(current)
    return resident, collections.Counter(sizes)


def main():
    args = sys.argv[1:]
    after = 2.0
    cold = False
    while args[:1] in (["--after"], ["--cold"]):
        if args[0] == "--cold":
            cold, args = True, args[1:]
        else:
            after, args = float(args[1]), args[2:]
    if not args:
        sys.exit(__doc__)
    binary = os.path.realpath(args[0])
    if cold:
        fd = os.open(binary, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(after)
        if child.poll() is not None:
            sys.exit(f"{args[0]} ended within {after} s: give a longer run or a shorter --after")
        rss = rss_by_mapping(child.pid)
        text = [m for m in mappings(child.pid) if m[3] == binary and "x" in m[2]]
        if not text:
            sys.exit(f"no executable mapping of {binary} (a script or another binary?)")
        resident, sizes = folios(child.pid, text[0][0], text[0][1])
        child.wait()
    print(f"# {' '.join(args)}, {after} s into the run{', page cache dropped first' if cold else ''}")
    for (path, perms), kb in rss.most_common():
        if kb:
            print(f"{kb:7d} kB  {perms}  {path}")
    print(f"text of {binary}: {resident} kB resident, in folios of (pages: count) "
          f"{dict(sorted(sizes.items()))}")


if __name__ == "__main__":
    main()
