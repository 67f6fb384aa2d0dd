#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The dependency rules of docs/ARCHITECTURE.md, checked on the include lines:

  1. include/umem/ includes only include/umem/ (and system headers);
  2. no include cycle among the project headers of lib/ and include/umem/;
  3. apps/ and tools/ include, of the project, only include/umem/, their own folder,
     tools/common/ and skeletons of BPF programs in their own folder;
  4. bpf/ includes only include/umem/ and its own folder;
  5. the hot-path table of docs/ARCHITECTURE.md is true: each hot function is defined in its
     row's file only, every file defining one is in the table, and no hot-path file includes a
     control-plane header (directly or through project headers);
  6. every source file of lib/, include/umem/ and apps/ is in a room of docs/ARCHITECTURE.md
     (named by its path in a rooms table; a folder named as a whole covers its files unless
     some of them are named one by one), and every file a rooms table names exists;
  7. no include cycle among the rooms of an application: a room is a .c and its .h (or a
     header alone), and room A depends on room B when A's .c or .h includes B's header;
  8. no application, tool or test declares a library-private symbol (extern ... umem__*): the
     library's test hooks come from a header of include/umem/ (umem/fault.h);
  9. no script of tools/ sources a file of test/ (tests may use tools, not the reverse);
 10. a test program's source under test/ is named <what>_test.c, never test_<what>.c;
 11. a test script that says it skips exits 77 (ctest's skip) on that line or the next two.

  check_layout.py [ROOT]      exit 1 naming every violation
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
CONTROL = {"bpf/libbpf.h", "bpf/bpf.h", "xdp/libxdp.h", "xdp_attach.h", "steer_internal.h"}
errors = []


def rel(path):
    return os.path.relpath(path, ROOT)


def sources(top):
    for d, _, files in os.walk(os.path.join(ROOT, top)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def resolve(path, kind, name):
    """The project file an include names, or None (a system header). Skeletons resolve to
    their .bpf.c."""
    here = os.path.dirname(path)
    if kind == "<":
        cand = [os.path.join(ROOT, "include", name)] if name.startswith("umem/") else []
    else:
        cand = [os.path.join(here, name), os.path.join(ROOT, "lib", name),
                os.path.join(ROOT, "include", name), os.path.join(ROOT, "tools", "common", name)]
    for c in cand:
        if os.path.isfile(c):
            return os.path.normpath(c)
    if name.endswith(".skel.h"):
        bpf = name[:-len(".skel.h")] + ".bpf.c"
        for c in (os.path.join(here, bpf), os.path.join(ROOT, "bpf", bpf)):
            if os.path.isfile(c):
                return os.path.normpath(c)
    return None


def under(path, top):
    return rel(path).startswith(top.rstrip("/") + "/")


# Rules 1, 3, 4: where each room's includes may point.
for top in ("include/umem", "lib", "apps", "tools", "bpf"):
    for path in sources(top):
        for kind, name in includes(path):
            target = resolve(path, kind, name)
            if target is None:
                if kind == '"' and not name.endswith(".skel.h"):
                    errors.append("%s: #include \"%s\" is no project file" % (rel(path), name))
                continue
            same_dir = os.path.dirname(target) == os.path.dirname(path)
            ok = {
                "include/umem": under(target, "include/umem"),
                "lib": under(target, "include/umem") or under(target, "lib") or under(target, "bpf"),
                "bpf": under(target, "include/umem") or same_dir,
            }.get(top)
            if ok is None:  # apps, tools
                ok = under(target, "include/umem") or same_dir or under(target, "tools/common")
            if not ok:
                errors.append("%s includes %s: %s may include only %s" % (
                    rel(path), rel(target), top, {
                        "include/umem": "include/umem/",
                        "lib": "include/umem/, lib/ and bpf/ skeletons",
                        "bpf": "include/umem/ and its own folder",
                    }.get(top, "include/umem/, its own folder and tools/common/")))

# Rule 2: no cycle among the headers of lib/ and include/umem/.
graph = {}
for top in ("include/umem", "lib"):
    for path in sources(top):
        graph[path] = [t for k, n in includes(path) if (t := resolve(path, k, n)) and t.endswith(".h")]


def cycles(deps):
    """The cycles of a graph (node -> successors), each once, from its smallest node."""
    state, found = {}, set()

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(deps.get(node, ())):
            if state.get(nxt) == 1:
                cyc = stack[stack.index(nxt):]
                i = cyc.index(min(cyc))
                found.add(tuple(cyc[i:] + cyc[:i]))
            elif nxt in deps and not state.get(nxt):
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(deps):
        if not state.get(node):
            visit(node, [])
    return sorted(found)


for cyc in cycles(graph):
    errors.append("include cycle: " + " -> ".join(rel(c) for c in cyc + (cyc[0],)))

# Rule 5: the hot-path table.
doc = os.path.join(ROOT, "docs", "ARCHITECTURE.md")
with open(doc, encoding="utf-8") as f:
    text = f.read()
m = re.search(r"^## Hot path\n(.*?)(?=^## |\Z)", text, re.M | re.S)
hot = {}
for row in (m.group(1).splitlines() if m else []):
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    if len(cells) == 2 and cells[0].startswith("`"):
        hot[cells[0].strip("`")] = re.findall(r"`(\w+)`", cells[1])
if len(hot) < 3:
    errors.append("docs/ARCHITECTURE.md: no hot-path table (## Hot path, | `file` | `functions` |)")

DEF = re.compile(r"^[A-Za-z_][^;{}()#=]*?\b(\w+)\s*\(", re.M)


def definitions(path):
    """Names of the functions a C file defines (a declarator at the line start whose
    parameter list is followed by a body)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        s = f.read()
    out = set()
    for d in DEF.finditer(s):
        depth, i = 0, d.end() - 1
        while i < len(s):
            depth += {"(": 1, ")": -1}.get(s[i], 0)
            if depth == 0:
                break
            i += 1
        rest = s[i + 1:].lstrip()
        if rest.startswith("{") or re.match(r"__attribute__\s*\(\(.*?\)\)\s*\{", rest, re.S):
            out.add(d.group(1))
    return out


defined = {}
for top in ("include/umem", "lib"):
    for path in sources(top):
        for name in definitions(path):
            defined.setdefault(name, set()).add(rel(path))
all_hot = {fn: f for f, fns in hot.items() for fn in fns}
for f, fns in hot.items():
    if not os.path.isfile(os.path.join(ROOT, f)):
        errors.append("docs/ARCHITECTURE.md: hot-path file %s does not exist" % f)
    for fn in fns:
        where = defined.get(fn, set())
        if where != {f}:
            errors.append("hot function %s: defined in %s, the docs say %s" % (
                fn, ", ".join(sorted(where)) or "no file", f))
for fn, where in sorted(defined.items()):
    if fn in all_hot:
        for w in where - set(hot):
            errors.append("%s defines hot function %s but is not a hot-path file in the docs" % (w, fn))


def reach(path, seen):
    """Every include name reachable from path through project headers."""
    names = set()
    for kind, name in includes(path):
        names.add(name)
        t = resolve(path, kind, name)
        if t and t.endswith(".h") and t not in seen:
            seen.add(t)
            names |= reach(t, seen)
    return names


for f in hot:
    p = os.path.join(ROOT, f)
    if os.path.isfile(p):
        bad = sorted(n for n in reach(p, set()) if n in CONTROL or n.endswith(".skel.h"))
        if bad:
            errors.append("hot-path file %s reaches control-plane headers: %s" % (f, ", ".join(bad)))

# Rule 6: every file in a room.
rooms_files, rooms_dirs = set(), set()
for sec in re.finditer(r"^## Rooms[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S):
    for row in sec.group(1).splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 2 or not row.lstrip().startswith("|"):
            continue
        for tok in re.findall(r"`([^`]+)`", cells[1]):
            if "*" in tok or "<" in tok or not tok.startswith(("lib/", "include/", "apps/", "bpf/", "tools/", "test/")):
                continue
            (rooms_dirs if tok.endswith("/") else rooms_files).add(tok)
if not rooms_files:
    errors.append("docs/ARCHITECTURE.md: no rooms table (## Rooms, | room | `files` | what |)")
for tok in sorted(rooms_files | rooms_dirs):
    if not os.path.exists(os.path.join(ROOT, tok)):
        errors.append("docs/ARCHITECTURE.md names %s in a room, but there is no such file" % tok)
named_in = {os.path.dirname(f) + "/" for f in rooms_files}
for top in ("lib", "include/umem", "apps"):
    for path in sources(top):
        r = rel(path)
        d = os.path.dirname(r) + "/"
        if r in rooms_files or (d in rooms_dirs and d not in named_in):
            continue
        errors.append("%s is in no room of docs/ARCHITECTURE.md (name it in a rooms table)" % r)

# Rule 7: no cycle among the rooms of an application.
def room_of(path):
    b = os.path.basename(path)
    for ext in (".bpf.c", ".skel.h", ".c", ".h"):
        if b.endswith(ext):
            return os.path.join(os.path.dirname(path), b[:-len(ext)])
    return path


for app in sorted(d for d in os.listdir(os.path.join(ROOT, "apps")) if os.path.isdir(os.path.join(ROOT, "apps", d))):
    deps = {}
    for path in sources(os.path.join("apps", app)):
        src = room_of(path)
        deps.setdefault(src, set())
        for k, n in includes(path):
            t = resolve(path, k, n)
            if t and os.path.dirname(t) == os.path.dirname(path) and room_of(t) != src:
                deps[src].add(room_of(t))
    for cyc in cycles(deps):
        errors.append("include cycle among the rooms of apps/%s: %s" % (
            app, " -> ".join(os.path.basename(c) for c in cyc + (cyc[0],))))

# Rule 8: no library-private symbol declared outside lib/.
EXTERN = re.compile(r"^[^\n/]*\bextern\b[^;]*?\b(umem__\w+)", re.M)
for top in ("apps", "tools", "test"):
    for path in sources(top):
        with open(path, encoding="utf-8", errors="replace") as f:
            for m in EXTERN.finditer(f.read()):
                errors.append("%s declares the library-private %s: include its test header (umem/fault.h) "
                              "instead" % (rel(path), m.group(1)))

# Rule 9: tools/ never sources test/.
SOURCE = re.compile(r"^\s*(?:\.|source)\s+\S*\btest/\S*", re.M)
for d, _, files in os.walk(os.path.join(ROOT, "tools")):
    for f in sorted(files):
        if f.endswith(".sh"):
            with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                for m in SOURCE.finditer(fh.read()):
                    errors.append("%s sources a file of test/ (%s): shared shell code lives in "
                                  "tools/common/" % (rel(os.path.join(d, f)), m.group(0).strip()))

# Rule 10: one file naming scheme for tests.
for path in sources("test"):
    name = os.path.basename(path)
    if name.startswith("test_") and name.endswith(".c"):
        errors.append("%s: a test program's source is <what>_test.c, not test_<what>.c" % rel(path))

# Rule 11: a skip is a skip for ctest.
SKIP_MSG = re.compile(r"\b(?:echo|log|printf)\s+[\"']?skip", re.I)
for d, _, files in os.walk(os.path.join(ROOT, "test")):
    for f in sorted(files):
        if not f.endswith(".sh"):
            continue
        with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        for i, line in enumerate(lines):
            if SKIP_MSG.search(line) and not any("exit 77" in l for l in lines[i:i + 3]):
                errors.append("%s:%d says it skips but does not exit 77 there" % (
                    rel(os.path.join(d, f)), i + 1))

for e in errors:
    print("FAIL:", e)
if not errors:
    print("layout: %d headers without a cycle, apps/tools/bpf include rules hold, %d hot-path "
          "files and %d hot functions as documented, every file in a room, no cycle among the "
          "rooms of apps/, no private symbol declared outside lib/, tools/ sources nothing of test/, "
          "test sources named <what>_test.c, skips exit 77" % (len(graph), len(hot), len(all_hot)))
sys.exit(1 if errors else 0)
