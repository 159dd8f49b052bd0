#!/usr/bin/env python3
"""Records what the real cyclictest 2.4 does with every command line of the invocation
corpus (tests/fixtures/cyclictest_corpus/corpus.json), on this machine, into
recorded.json beside it: exit code, how long it ran, its stdout and stderr (the first and
last lines, with counts), and the files it wrote. tests/it/cyclictest_corpus.rs runs the
same lines through `latscope cyclictest` and compares with this record; nothing of it is
written by hand.

Run as root with rt-tests 2.4 installed (apt-get install rt-tests), on a quiet-ish
machine, from the repository's root:

    python3 contrib/dev/record-cyclictest-corpus.py
"""

import json
import os
import pathlib
import platform
import signal
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "tests" / "fixtures" / "cyclictest_corpus"
# Lines kept from each end of an output (the test keeps as many of latscope's).
KEEP = 40


def version():
    out = subprocess.run(["cyclictest", "--help"], capture_output=True, text=True)
    first = (out.stdout.splitlines() or [""])[0]
    if first.strip() != "cyclictest V 2.40":
        sys.exit(f"needs cyclictest 2.4 (apt-get install rt-tests), found: {first!r}")
    return first.strip()


def text_record(data):
    """The first and last KEEP lines of an output, with its size (bytes decoded as
    UTF-8, escapes kept)."""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return {
        "bytes": len(data),
        "lines": len(lines),
        "escapes": text.count("\x1b["),
        "head": lines[:KEEP],
        "tail": lines[-KEEP:] if len(lines) > KEEP else [],
        "ends_with_newline": text.endswith("\n"),
    }


def run_one(entry):
    with tempfile.TemporaryDirectory(prefix="ct-corpus-") as d:
        args = [a.replace("{dir}", d) for a in entry["args"]]
        out_path = pathlib.Path(d) / ".stdout"
        err_path = pathlib.Path(d) / ".stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            started = time.monotonic()
            child = subprocess.Popen(
                ["cyclictest"] + args, stdout=out, stderr=err, stdin=subprocess.DEVNULL
            )
            stop_ms = entry.get("stop_ms")
            try:
                code = child.wait(timeout=stop_ms / 1000 if stop_ms else 30)
            except subprocess.TimeoutExpired:
                if not stop_ms:
                    child.kill()
                    raise
                child.send_signal(signal.SIGINT)
                code = child.wait(timeout=30)
            elapsed_ms = round((time.monotonic() - started) * 1000)
        files = {}
        for path in sorted(pathlib.Path(d).iterdir()):
            if path.name.startswith("."):
                continue
            files[path.name] = text_record(path.read_bytes())
            if path.suffix == ".json":
                files[path.name]["text"] = path.read_text()
        return {
            "exit_code": code,
            "elapsed_ms": elapsed_ms,
            "stdout": text_record(out_path.read_bytes()),
            "stderr": text_record(err_path.read_bytes()),
            "files": files,
        }


def main():
    if os.geteuid() != 0:
        sys.exit("run as root: the corpus uses SCHED_FIFO and cpu_dma_latency")
    corpus = json.loads((CORPUS / "corpus.json").read_text())
    record = {
        "about": "Written by contrib/dev/record-cyclictest-corpus.py from the real cyclictest; do not edit.",
        "cyclictest": version(),
        "machine": {
            "online_cpus": len(os.sched_getaffinity(0)),
            "kernel": platform.release(),
        },
        "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "runs": {},
    }
    for entry in corpus["runs"]:
        print(f"{entry['id']}: cyclictest {' '.join(entry['args'])}", file=sys.stderr)
        if "--tracemark" in entry["args"]:
            with TracingRestored():
                record["runs"][entry["id"]] = run_one(entry)
        else:
            record["runs"][entry["id"]] = run_one(entry)
    (CORPUS / "recorded.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def mounts():
    return pathlib.Path("/proc/self/mounts").read_text().splitlines()


class TracingRestored:
    """--tracemark stops the kernel's tracing (tracing_on 0) and cyclictest mounts
    debugfs for it and leaves it mounted: both are put back as they were."""

    def __enter__(self):
        self.mounts = mounts()
        self.dir = tempfile.mkdtemp(prefix="ct-tracefs-")
        subprocess.run(["mount", "-t", "tracefs", "nodev", self.dir], check=True)
        self.tracing_on = (pathlib.Path(self.dir) / "tracing_on").read_text()
        return self

    def __exit__(self, *exc):
        (pathlib.Path(self.dir) / "tracing_on").write_text(self.tracing_on)
        subprocess.run(["umount", self.dir], check=True)
        os.rmdir(self.dir)
        # What cyclictest mounted (debugfs, and tracefs automounted inside it), deepest
        # first.
        new = [line.split()[1] for line in mounts() if line not in self.mounts]
        for target in sorted(new, key=len, reverse=True):
            subprocess.run(["umount", target], check=False)
        return False


if __name__ == "__main__":
    main()
