#!/usr/bin/env python3
"""Presses the arm64 lab's power button N times through QEMU's QMP socket: each
`system_powerdown` raises the virt machine's PL061 line 3 (QEMU's gpio-key) and QEMU drops
it ~100 ms later, so one press is two edges made outside the guest.

Usage: press.py SOCKET N [INTERVAL_MS]   (INTERVAL_MS between presses, default 250; at
least 150, so each press's fall comes before the next rise)
Prints `arm64-lab: pressed N` when done (run.sh shows it with the guest's console).
Python's standard library speaks QMP's line-delimited JSON; no QMP package is needed.
"""
import json, socket, sys, time


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: press.py SOCKET N [INTERVAL_MS]")
    path, count = sys.argv[1], int(sys.argv[2])
    interval_ms = int(sys.argv[3]) if len(sys.argv) == 4 else 250
    if interval_ms < 150:
        sys.exit(f"press.py: INTERVAL_MS {interval_ms}: at least 150 (the key stays down 100 ms)")
    sock = socket.socket(socket.AF_UNIX)
    for _ in range(100):
        try:
            sock.connect(path)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit(f"press.py: cannot connect to QMP at {path}")
    replies = sock.makefile("r")

    def command(name):
        sock.sendall(json.dumps({"execute": name}).encode() + b"\n")
        while True:
            reply = json.loads(replies.readline())
            if "return" in reply:
                return
            if "error" in reply:
                sys.exit(f"press.py: {name}: {reply['error'].get('desc')}")

    json.loads(replies.readline())  # the greeting
    command("qmp_capabilities")
    for i in range(count):
        if i:
            time.sleep(interval_ms / 1000)
        command("system_powerdown")
    # The last press's fall comes 100 ms after its rise.
    time.sleep(0.15)
    print(f"arm64-lab: pressed {count}", flush=True)


main()
