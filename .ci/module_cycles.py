#!/usr/bin/env python3
"""Fails when two modules of the crate depend on each other, directly or through others.

    python3 .ci/module_cycles.py [SRC_DIR]      check the crate (default: src), exit 1 on a cycle
    python3 .ci/module_cycles.py --self-test    show that the check finds the cycles it should

What counts as a dependency: a path that names an item of another module of the crate, in a `use`
declaration or inline in code (`crate::a::b::Item`, `super::x::f`, `self::y::Z`), outside comments,
string literals and `#[cfg(test)] mod tests` blocks. A path is attributed to the deepest module it
names (a `pub use` of a child's item in a parent counts as the parent's).

What counts as a cycle: at every level of the module tree, the children of one module form a graph
(an edge a -> b when anything inside a depends on anything inside b); any strongly connected component
of two or more children is a cycle. A module and its own descendants are not compared with each other
(a `mod.rs` declares and re-exports its children, and children use their parent's items), so
`store -> store::leads` is never a cycle, while `store::leads <-> store::outbox` and
`config <-> knowledge` are.

cargo-modules' `dependencies --acyclic` was tried first and rejected: version 0.27.0 (the newest that
builds with this toolchain, Rust 1.95) took 15 minutes to build on two cores, and its check runs on a
graph of items in which a type owns its methods and a method uses its type, so on this crate it stops at
`api::events::EventsRequest` <-> `EventsRequest::validate`: every method that takes or returns its own
type is a "cycle" to it, whatever the modules do. This script (standard library only, well under a
second) checks modules, and ARCHITECTURE.md states the same definition.
"""

import os
import re
import sys
import tempfile
from collections import defaultdict

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
INLINE_PATH = re.compile(r"\b((?:crate|super|self)(?:::" + IDENT + r")+)")
USE_DECL = re.compile(r"\buse\s+((?:crate|super|self)::[^;]*);", re.S)


def strip(src):
    """Source without string literals, comments and the unit tests at the end of a file."""
    src = re.sub(r'r(#*)"(?:.|\n)*?"\1', '""', src)
    src = re.sub(r'"(?:[^"\\\n]|\\.|\\\n)*"', '""', src)
    src = re.sub(r"/\*(?:.|\n)*?\*/", "", src)
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"'(?:[^'\\\n]|\\.)'", "' '", src)  # char literals such as '{'
    while True:
        start = re.search(r"#\[cfg\(test\)\]\s*mod\s+" + IDENT + r"\s*\{", src)
        if not start:
            return src
        depth, i = 0, start.end() - 1
        while i < len(src):
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            if depth == 0:
                break
            i += 1
        src = src[: start.start()] + src[i + 1 :]


MOD_DECL = re.compile(r"((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;")


def modules(root):
    """Module path (a tuple) -> file, following `mod x;` from lib.rs; test-only modules are left out."""
    out = {}
    pending = [((), os.path.join(root, "lib.rs"))]
    while pending:
        module, path = pending.pop()
        out[module] = path
        with open(path, encoding="utf-8") as f:
            src = re.sub(r"//[^\n]*", "", f.read())
        base = os.path.dirname(path)
        if os.path.basename(path) not in ("lib.rs", "mod.rs"):
            base = os.path.join(base, os.path.basename(path)[:-3])
        for attrs, child in MOD_DECL.findall(src):
            if "cfg(test)" in attrs.replace(" ", ""):
                continue
            explicit = re.search(r'path\s*=\s*"([^"]+)"', attrs)
            if explicit:
                candidates = [os.path.join(os.path.dirname(path), explicit.group(1))]
            else:
                candidates = [os.path.join(base, child + ".rs"), os.path.join(base, child, "mod.rs")]
            found = next((c for c in candidates if os.path.isfile(c)), None)
            if found is None:
                raise SystemExit(f"{path}: cannot find the file of module {child}")
            pending.append((module + (child,), found))
    return out


def expand_use(tree):
    """`a::{b, c::{d, e}, f as g}` -> ['a::b', 'a::c::d', 'a::c::e', 'a::f']."""
    tree = re.sub(r"\s+as\s+" + IDENT, "", tree)
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)::\{(.*)\}$", tree)
    if not m:
        return [tree]
    prefix, body = m.group(1), m.group(2)
    items, depth, current = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    if current:
        items.append(current)
    out = []
    for item in items:
        if item == "self":
            out.append(prefix)
        elif item:
            out.extend(expand_use(prefix + "::" + item))
    return out


def resolve(current, path, known):
    """The deepest known module a `crate::`, `super::` or `self::` path names, or None."""
    segments = path.split("::")
    if segments[0] == "crate":
        base, segments = [], segments[1:]
    else:
        base = list(current)
        while segments and segments[0] in ("super", "self"):
            if segments[0] == "super":
                base = base[:-1]
            segments = segments[1:]
    full = base + segments
    for i in range(len(full), -1, -1):
        if tuple(full[:i]) in known:
            return tuple(full[:i])
    return None


def dependencies(root):
    known = modules(root)
    edges = defaultdict(set)
    for module, path in known.items():
        with open(path, encoding="utf-8") as f:
            src = strip(f.read())
        paths = set(INLINE_PATH.findall(src))
        for tree in USE_DECL.findall(src):
            paths.update(expand_use(tree))
        for p in paths:
            target = resolve(module, p, known)
            if target is not None and target != module:
                edges[module].add(target)
    return edges


def sibling_graphs(edges):
    """For each parent module, the graph of its children: child -> children it depends on, with why."""
    graph = defaultdict(lambda: defaultdict(set))
    for a, targets in edges.items():
        for b in targets:
            k = 0
            while k < min(len(a), len(b)) and a[k] == b[k]:
                k += 1
            if k == len(a) or k == len(b):
                continue  # one contains the other
            graph[a[:k]][(a[: k + 1], b[: k + 1])].add((a, b))
    return graph


def strongly_connected(nodes, succ):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(succ.get(v, ())):
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

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def cycles(root):
    found = []
    for parent, pairs in sorted(sibling_graphs(dependencies(root)).items()):
        succ = defaultdict(set)
        for a, b in pairs:
            succ[a].add(b)
        nodes = set(succ) | {b for s in succ.values() for b in s}
        for comp in strongly_connected(nodes, succ):
            members = set(comp)
            why = [(a, b, sorted(pairs[(a, b)])) for a, b in sorted(pairs) if a in members and b in members]
            found.append((comp, why))
    return found


def name(m):
    return "crate::" + "::".join(m) if m else "crate"


def report(found):
    for comp, why in found:
        print("import cycle: " + " <-> ".join(name(m) for m in comp))
        for a, b, via in why:
            shown = ", ".join(f"{name(x)} uses {name(y)}" for x, y in via[:3])
            print(f"    {name(a)} -> {name(b)}  ({shown})")


def self_test():
    tree = {
        "lib.rs": "pub mod a; pub mod b; pub mod c; pub mod d;",
        "a/mod.rs": "pub mod x; pub mod y;\npub use x::Thing;",
        "a/x.rs": "use super::y::helper;\n// crate::b::Ignored in a comment\npub struct Thing;",
        "a/y.rs": 'use crate::a::x::Thing;\npub fn helper() { let _ = "crate::b::f"; }',
        "b.rs": "use crate::{c::Cee, d};\npub fn f() {}",
        "c.rs": "pub struct Cee;\npub fn g() { crate::b::f() }",
        "d.rs": "pub fn h() {}\n#[cfg(test)]\nmod tests { use crate::b::f; }",
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in tree.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        got = [[name(m) for m in comp] for comp, _ in cycles(root)]
    want = [["crate::b", "crate::c"], ["crate::a::x", "crate::a::y"]]
    if got != want:
        print(f"self-test failed: found {got}, expected {want}")
        return 1
    print("self-test: the check finds a::x <-> a::y and b <-> c, and nothing in comments, strings or tests")
    return 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    root = next((a for a in argv[1:] if not a.startswith("-")), "src")
    found = cycles(root)
    if found:
        report(found)
        print(f"{len(found)} import cycle(s) between modules of the crate")
        return 1
    count = len(modules(root))
    print(f"module cycles: none among {count} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
