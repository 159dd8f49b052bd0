#!/usr/bin/env python3
"""The import rules of ARCHITECTURE.md "Parts and layers", checked on src/ (CI runs it
before the tests; it reads files only, in well under a second).

Fails (exit 1) on:
  - an import circle between files (modules), e.g. a.rs uses b.rs and b.rs uses a.rs
    (a parent naming its own children, as a mod.rs does, is not counted);
  - an import circle between parts (a part is a top-level module; trace/ is two parts,
    trace::record and trace::analysis, beside trace itself);
  - an import that goes up the layers (LAYERS below, top first);
  - a named rule broken (RULES below: plan never imports report, ...).

An import is any path in code outside #[cfg(test)] items: `crate::a::b`, `super::x`,
`self::x`, `use crate::{a, b::c}` groups, and a child module named by its parent
(`child::f`). Comments and strings are skipped. Run from anywhere:
python3 contrib/dev/layering.py [--graph] [--src DIR] [--self-test]   (--graph prints the parts
and their imports; --src checks another tree; --self-test checks the checks on a made-up tree)"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
if "--src" in sys.argv:
    ROOT = sys.argv[sys.argv.index("--src") + 1]

# Parts, top first; a part may import parts further down this list, never up. One line
# per layer: parts on one line never import each other.
LAYERS = [
    ["main", "lib"],
    ["commands"],
    ["remote", "packaging"],
    ["man_sections"],
    ["watch"],  # `latscope watch`: runs the timer plan, reads its live atomics, serves metrics
    ["doctor"],  # `latscope doctor` judges planned runs through their own plans
    ["cyclictest", "suite"],
    ["runner"],
    ["plan"],
    ["cli_error"],
    ["cli"],
    ["build_info"],
    ["compare"],
    ["report"],
    ["import"],
    ["trace"],
    ["trace::analysis"],
    ["trace::record"],
    ["trace::event"],
    ["load", "probe"],
    ["choice_list"],
    ["progress"],
    ["isolate"],
    ["result"],
    ["output"],
    ["sysinfo"],
    ["warning"],
    ["interrupt"],
    ["error"],
    ["render"],  # the render kit: every renderer's tables, escaping, Markdown, HTML, SVG charts
    ["stats"],
    ["units"],
    ["sys"],
]

# The named rules: part -> parts it must never import (whatever the layers say).
RULES = {
    "plan": {"report", "compare", "cyclictest", "suite", "runner"},
    "report": {"plan", "probe", "runner", "cli", "cyclictest", "suite", "compare"},
    # One home for rendering: the comparison's views, doctor and the drop-in draw with the
    # render kit, never with report's renderers of a Run.
    "compare": {"report"},
    "doctor": {"report"},
    "cyclictest": {"report"},
}
# Parts that may import only these (sys: nothing of the crate; stats: units only).
ONLY = {
    "sys": set(),
    "stats": {"units"},
    "units": {"sys"},
    # The render kit knows no result type: strings, numbers and buckets in, bytes out.
    "render": {"units", "sys"},
}

# Modules that are left out (test-only code compiled into the library for now).
SKIP = {"parsers_never_panic"}


def module_of(rel):
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def part_of(module):
    if not module:
        return "lib"
    if module[0] == "trace" and len(module) > 1 and module[1] in ("record", "analysis", "event"):
        return "trace::" + module[1]
    return module[0]


def strip_code(text):
    """Drops comments, string/char literals and #[cfg(test)] items; keeps the rest."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not re.match(r"\w", text[i - 1:i] or " "):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            i = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""')
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4] if text[i + 1:i + 2] != "\\" else text[i:i + 12]):
            m = re.match(r"'(\\[^']*|[^\\'])'", text[i:])
            i += len(m.group(0)) if m else 1
        else:
            out.append(c)
            i += 1
    code = "".join(out)
    return drop_cfg_test(code)


def drop_cfg_test(code):
    """Removes each item under #[cfg(test)] (a braced block or a `mod x;` line)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]", code)
        if not m:
            return code
        j = m.end()
        brace, semi = code.find("{", j), code.find(";", j)
        if semi >= 0 and (brace < 0 or semi < brace):
            code = code[: m.start()] + code[semi + 1:]
            continue
        depth, k = 0, brace
        while k < len(code):
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        code = code[: m.start()] + code[k + 1:]


def test_only_children(text):
    return set(re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\([\w:]+\))?\s+)?mod\s+(\w+)\s*;", text))


def expand_groups(code):
    """`crate::a::{b, c::{d, e}}` -> `crate::a::b crate::a::c::d crate::a::c::e`."""
    pat = re.compile(r"((?:crate|super|self)(?:::\w+)*)::\{")
    while True:
        m = pat.search(code)
        if not m:
            return code
        depth, k = 0, m.end() - 1
        while k < len(code):
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        inner = code[m.end():k]
        items, depth, cur = [], 0, ""
        for ch in inner:
            if ch == "," and depth == 0:
                items.append(cur)
                cur = ""
                continue
            depth += ch == "{"
            depth -= ch == "}"
            cur += ch
        items.append(cur)
        flat = " ".join(
            m.group(1) + "::" + it.strip() if it.strip() not in ("self", "") else m.group(1)
            for it in items
        )
        code = code[: m.start()] + flat + code[k + 1:]


def load():
    files = {}
    for dirpath, _, names in os.walk(ROOT):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                files[module_of(rel)] = open(path, encoding="utf-8").read()
    skipped = set()
    for mod, text in files.items():
        for child in test_only_children(text):
            skipped.add(mod + (child,))
    for mod in list(files):
        if any(mod[: len(s)] == s for s in skipped) or (mod and mod[0] in SKIP):
            del files[mod]
    return files


def resolve(files, path):
    """The longest prefix of `path` that is a file module."""
    for k in range(len(path), -1, -1):
        if tuple(path[:k]) in files:
            return tuple(path[:k])
    return None


def edges_of(files):
    edges = defaultdict(set)
    for mod, text in files.items():
        code = expand_groups(strip_code(text))
        children = set(re.findall(r"\bmod\s+(\w+)\s*;", code))
        for m in re.finditer(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+)", code):
            segs = m.group(1).split("::")
            if segs[0] == "crate":
                path = segs[1:]
            else:
                cur = list(mod)
                while segs and segs[0] in ("super", "self"):
                    if segs[0] == "super":
                        cur = cur[:-1]
                    segs = segs[1:]
                path = cur + segs
            add(edges, mod, resolve(files, path))
        for m in re.finditer(r"(?<![\w:])(\w+)::", code):
            if m.group(1) in children:
                add(edges, mod, resolve(files, list(mod) + [m.group(1)] + nested(code, m.end())))
    return edges


def add(edges, mod, target):
    """Records mod -> target, except into mod's own children: a parent declares its
    children and may re-export or call them (Rust's mod.rs); a child naming its parent,
    a sibling or anything else is an import."""
    if target is not None and target[: len(mod)] != mod:
        edges[mod].add(target)


def nested(code, at):
    m = re.match(r"(\w+(?:::\w+)*)", code[at:])
    return m.group(1).split("::") if m else []


def cycles(nodes, edges):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def name(mod):
    return "::".join(mod) or "lib"


def self_test():
    """The checks on a tree made for them: each problem found, and only those."""
    import tempfile

    tree = {
        "lib.rs": "pub mod plan; pub mod report; pub mod stats; pub mod sys;",
        "plan/mod.rs": "pub mod a; pub mod b; pub use a::f; // crate::report::nothing\n",
        "plan/a.rs": "use super::b::g; pub fn f() { g() }",
        "plan/b.rs": "use crate::plan::a::f; pub fn g() { let _ = \"crate::report\"; }",
        "report/mod.rs": "use crate::{stats::{self, x}, plan::a};\n#[cfg(test)]\nmod t { use crate::sys; }",
        "stats/mod.rs": "pub fn x() { crate::sys::y() }",
        "sys/mod.rs": "pub fn y() {}",
    }
    want = {
        "import circle between files: plan::a <-> plan::b",
        "report imports plan, a part above or beside it (report uses plan::a)",
        "report must never import plan (report uses plan::a)",
        "stats may import only units, not sys (stats uses sys)",
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in tree.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").write(text)
        got = set(problems_in(root))
    if got != want:
        print("layering: self-test failed; missing:", sorted(want - got), "unexpected:", sorted(got - want))
        return 1
    print(f"layering: self-test ok ({len(want)} problems found in a made-up tree)")
    return 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    problems = problems_in(ROOT, graph="--graph" in sys.argv)
    for p in problems:
        print("layering:", p)
    if problems:
        print(f"layering: {len(problems)} problem(s); ARCHITECTURE.md 'The parts' says where things go")
        return 1
    print("layering: ok (no circle, every import goes down, the named rules hold)")
    return 0


def problems_in(root, graph=False):
    global ROOT
    ROOT = root
    files = load()
    files[()] = files.get((), "")
    edges = edges_of(files)
    rank = {p: i for i, layer in enumerate(LAYERS) for p in layer}
    problems = []
    part_edges, why = defaultdict(set), {}
    for a, targets in edges.items():
        for b in targets:
            pa, pb = part_of(a), part_of(b)
            if pa != pb:
                part_edges[pa].add(pb)
                why.setdefault((pa, pb), (a, b))
    for comp in cycles(files.keys(), edges):
        problems.append("import circle between files: " + " <-> ".join(name(m) for m in comp))
    for comp in cycles(set(part_edges) | {p for t in part_edges.values() for p in t}, part_edges):
        problems.append("import circle between parts: " + " <-> ".join(comp))
    for pa in sorted(part_edges):
        for pb in sorted(part_edges[pa]):
            a, b = why[(pa, pb)]
            where = f"({name(a)} uses {name(b)})"
            if pa not in rank or pb not in rank:
                missing = pa if pa not in rank else pb
                problems.append(f"part {missing} has no layer in contrib/dev/layering.py {where}")
            elif rank[pb] <= rank[pa]:
                problems.append(f"{pa} imports {pb}, a part above or beside it {where}")
            if pb in RULES.get(pa, ()):
                problems.append(f"{pa} must never import {pb} {where}")
            if pa in ONLY and pb not in ONLY[pa]:
                allowed = ", ".join(sorted(ONLY[pa])) or "nothing of the crate"
                problems.append(f"{pa} may import only {allowed}, not {pb} {where}")
    if graph:
        for p in sorted(part_edges, key=lambda p: rank.get(p, -1)):
            print(f"{p} -> {', '.join(sorted(part_edges[p], key=lambda q: rank.get(q, -1)))}")
    return problems


if __name__ == "__main__":
    sys.exit(main())
