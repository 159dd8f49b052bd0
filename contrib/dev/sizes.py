#!/usr/bin/env python3
"""The size limits of the charter on src/ and tests/: no function over 80 lines (signature to closing
brace, outside #[cfg(test)] items) and no file over 800 lines, unless the file's opening
`//!` comment says why in a line starting `//! Size:` (that line exempts the file's
length, and the functions it names in backticks, e.g. "//! Size: `resolve` is cyclictest's
option table as one match").

python3 contrib/dev/sizes.py            lists what is over and exits 1 if anything is (CI)
python3 contrib/dev/sizes.py --report   lists the same and exits 0 (a survey)"""
import os
import re
import sys

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROOTS = [os.path.join(TOP, "src"), os.path.join(TOP, "tests")]
MAX_FN_LINES = 80
MAX_FILE_LINES = 800
FN = re.compile(
    r'^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?'
    r'(?:extern\s+"[^"]*"\s+)?fn\s+(\w+)'
)


def code_of(line):
    """The line without its comment and with strings and chars emptied (brace counting)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return re.sub(r"//.*", "", line)


def block_end(lines, i):
    """Index of the line closing the block that opens at or after line i (None: no block,
    as in a declaration ending in `;`)."""
    depth, started = 0, False
    for j in range(i, len(lines)):
        code = code_of(lines[j])
        if not started and ";" in code and "{" not in code:
            return None
        depth += code.count("{") - code.count("}")
        started = started or "{" in code
        if started and depth <= 0:
            return j
    return len(lines) - 1


def exemptions(lines):
    """(file exempt, exempt function names) from the opening `//! Size:` lines."""
    said, names = False, set()
    for line in lines:
        if not line.startswith("//!"):
            break
        text = line[3:].strip()
        if text.startswith("Size:"):
            said = True
            names.update(re.findall(r"`(\w+)`", text))
    return said, names


def check_file(path, rel):
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    said, names = exemptions(lines)
    over = []
    if len(lines) > MAX_FILE_LINES and not said:
        over.append(f"{rel}: {len(lines)} lines (limit {MAX_FILE_LINES})")
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("#[cfg(test)]"):
            end = block_end(lines, i + 1)
            i = (end if end is not None else i) + 1
            continue
        m = FN.match(lines[i])
        if m:
            end = block_end(lines, i)
            if end is not None:
                n = end - i + 1
                if n > MAX_FN_LINES and m.group(1) not in names:
                    over.append(f"{rel}:{i + 1}: fn {m.group(1)} is {n} lines (limit {MAX_FN_LINES})")
        i += 1
    return over


def main():
    report_only = "--report" in sys.argv
    over = []
    for root in ROOTS:
        for dirpath, _, names in sorted(os.walk(root)):
            for name in sorted(names):
                if name.endswith(".rs"):
                    path = os.path.join(dirpath, name)
                    over += check_file(path, os.path.relpath(path, TOP))
    for line in over:
        print("sizes:", line)
    verdict = f"{len(over)} over the limits" if over else "every file and function within the limits"
    print(f"sizes: {verdict}" + (" (report only)" if report_only and over else ""))
    return 1 if over and not report_only else 0


if __name__ == "__main__":
    sys.exit(main())
