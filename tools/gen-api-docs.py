#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates the API reference from the public headers, so it cannot drift from them:
docs/API.md and the section-3 man pages docs/man/umem_*.3 (one per header).

  tools/gen-api-docs.py           rewrite the generated files
  tools/gen-api-docs.py --check   exit 1 (with a diff) when a generated file is out of date

The text is the headers' own comments: a comment directly above a declaration (or a run of
declarations with no blank line between them) documents it. libumem.7 is written by hand.
"""
import difflib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INC = os.path.join(ROOT, "include", "umem")

# page -> (headers, one-line summary). pool_fast.h only contributes its top comment (threading
# and memory ordering) and its constants: its structs are private. umem.h only includes.
PAGES = {
    "umem_common": (["common.h"], "libumem version, options structs, the print callback and a hash mixer"),
    "umem_area": (["area.h"], "the UMEM area: one mmap'd region cut into pages"),
    "umem_pool": (["pool.h", "pool_fast.h"], "page_pool-style buffer pools on a UMEM area"),
    "umem_classes": (["classes.h"], "size classes: one pool per buffer size"),
    "umem_port": (["port.h"], "AF_XDP ports whose buffers come from umem pools"),
    "umem_steer": (["steer.h", "steer_abi.h"], "the steering XDP program and its control API"),
    "umem_idle": (["idle.h"], "an idle policy for polling loops: spin while busy, sleep when idle"),
    "umem_csum": (["csum.h"], "the Internet checksum for frames in the UMEM"),
    "umem_lpm": (["lpm.h"], "longest-prefix match for IPv4 and IPv6 with lock-free readers"),
}
PRIVATE_TYPES = {"pool_fast.h"}
NOT_DOCUMENTED = {"umem.h", "fault.h"}  # fault.h: test builds only, not installed


def comment_text(raw):
    """Lines of a /* */ comment without the markers, indentation after ' * ' kept."""
    out = []
    for ln in raw:
        s = ln.strip()
        s = re.sub(r"^/\*+", "", s)
        s = re.sub(r"\*/$", "", s)
        s = re.sub(r"^\* ?", "", s) if ln.strip().startswith("*") else s.lstrip()
        out.append(s.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def func_name(decl):
    m = re.search(r"\b(umem_\w+)\s*\(", decl)
    return m.group(1) if m else None


def parse(path):
    """Returns (top comment lines, type blocks, function groups) of one header.
    type block: list of source lines (comment included); group: (comment lines, [decls])."""
    lines = open(path).read().split("\n")
    top, types, groups = [], [], []
    i, n = 0, len(lines)
    comment = None      # raw lines of the last comment, until a blank line
    group = None        # the function group being extended
    guard = None
    while i < n:
        ln = lines[i]
        s = ln.strip()
        if s.startswith("/*"):
            raw = [ln]
            while "*/" not in lines[i]:
                i += 1
                raw.append(lines[i])
            i += 1
            if "SPDX-License-Identifier" in s:
                continue
            if not top and not types and not groups and guard is None:
                top = comment_text(raw)
            else:
                comment, group = raw, None
            continue
        if not s:
            comment, group = None, None
            i += 1
            continue
        if guard is None and s.startswith("#ifndef UMEM_") and s.endswith("_H"):
            guard = s.split()[1]
            i += 2  # the guard's #define
            continue
        if s.startswith("#if"):  # conditional blocks: extern "C", overridable macros
            depth = 0
            while i < n:
                t = lines[i].strip()
                depth += t.startswith("#if")
                depth -= t.startswith("#endif")
                i += 1
                if depth == 0:
                    break
            comment = group = None
            continue
        if s.startswith("#define UMEM_"):
            block = [ln]
            while lines[i].endswith("\\"):
                i += 1
                block.append(lines[i])
            i += 1
            if block[0].split()[1].startswith("UMEM__"):  # internals of the inline paths
                continue
            types.append((comment or []) + block)
            comment = None
            continue
        if re.match(r"^(struct|enum) \w+ \{$|^typedef ", s):
            block = [ln]
            if s.startswith("typedef"):
                while not lines[i].rstrip().endswith(";"):
                    i += 1
                    block.append(lines[i])
            else:
                while lines[i].rstrip() != "};":
                    i += 1
                    block.append(lines[i])
            i += 1
            if os.path.basename(path) not in PRIVATE_TYPES:
                types.append((comment or []) + block)
            comment = group = None
            continue
        if s.startswith("UMEM_API ") or s.startswith("static inline "):
            decl = [s]
            while ";" not in lines[i] and "{" not in lines[i]:
                i += 1
                decl.append(lines[i].strip())
            body = "{" in lines[i] and ";" not in lines[i]
            i += 1
            if body:  # an inline definition: documented where it is declared
                while lines[i].rstrip() != "}":
                    i += 1
                i += 1
                continue
            text = re.sub(r"\s+", " ", " ".join(decl)).replace("( ", "(")
            text = re.sub(r"^UMEM_API ", "", text)
            if func_name(text) is None or func_name(text).startswith("umem__"):
                continue
            if group is None:
                group = (comment_text(comment) if comment else [], [])
                groups.append(group)
                comment = None
            group[1].append(text)
            continue
        i += 1  # forward declarations, #include, #endif, extern "C" braces
    return top, types, groups


def merge_types(types):
    """Consecutive #define blocks print as one block."""
    out = []
    for b in types:
        if out and b[0].startswith("#define") and out[-1][-1].startswith("#define"):
            out[-1] = out[-1] + b
        else:
            out.append(list(b))
    return out


def wrap_decl(decl, width=76):
    """One declaration wrapped at argument boundaries, continuation lines under the '('."""
    if len(decl) <= width:
        return [decl]
    head, rest = decl.split("(", 1)
    indent = " " * (len(head) + 1)
    parts = [p.strip() for p in rest.split(",")]
    lines, cur = [], head + "("
    for k, p in enumerate(parts):
        piece = p + ("," if k < len(parts) - 1 else "")
        if cur.strip() and not cur.endswith("(") and len(cur) + 1 + len(piece) > width:
            lines.append(cur)
            cur = indent + piece
        else:
            cur = cur + ("" if cur.endswith("(") else " ") + piece
    lines.append(cur)
    return lines


# ---- roff ----

def resc(s):
    s = s.replace("\\", "\\e")
    return "\\&" + s if s.startswith((".", "'")) else s


def blocks(lines):
    """Comment text as blocks: ('p', text) paragraphs, ('item', text) for '- ' list items
    (continuation lines joined), ('pre', lines) for other indented runs (tables, grammars)."""
    out, item_ind = [], -1
    for ln in lines:
        s, ind = ln.strip(), len(ln) - len(ln.lstrip())
        if not s:
            out.append(("gap", None))
            item_ind = -1
        elif s.startswith("- "):
            out.append(("item", s[2:]))
            item_ind = ind
        elif item_ind >= 0 and ind > item_ind:
            out[-1] = ("item", out[-1][1] + " " + s)
        elif ind > 0 and out and out[-1][0] == "pre":
            out[-1][1].append(ln.rstrip())
        elif ind > 0:
            out.append(("pre", [ln.rstrip()]))
            item_ind = -1
        elif out and out[-1][0] == "p":
            out[-1] = ("p", out[-1][1] + " " + s)
            item_ind = -1
        else:
            out.append(("p", s))
            item_ind = -1
    return out


def roff_paragraphs(lines):
    out, prev = [], None
    for kind, val in blocks(lines):
        if kind == "gap":
            prev = "gap"
            continue
        if kind == "item":
            out += [".IP \\(bu 2", resc(val)]
        elif kind == "pre":
            if prev not in (None,):
                out.append(".PP" if prev == "gap" or prev == "item" else ".sp 0")
            out += roff_code(val)
        else:
            if prev in ("gap", "item", "pre"):
                out.append(".PP")
            out.append(resc(val))
        prev = kind
    return out


def md_paragraphs(lines):
    out = []
    for kind, val in blocks(lines):
        if kind == "gap":
            continue
        if kind == "item":
            out.append("- " + val)
            continue
        if out and not out[-1].startswith("- ") or out and kind != "item":
            out.append("")
        if kind == "pre":
            out += ["```text"] + val + ["```"]
        else:
            out.append(val)
    return out


def roff_code(lines):
    out = [".nf"]
    for ln in lines:
        out.append(resc(ln.expandtabs(4)) if ln.strip() else "")
    out.append(".fi")
    return out


def version():
    text = open(os.path.join(INC, "common.h")).read()
    major = re.search(r"#define UMEM_VERSION_MAJOR (\d+)", text).group(1)
    minor = re.search(r"#define UMEM_VERSION_MINOR (\d+)", text).group(1)
    return f"{major}.{minor}"


def man_page(page, headers, summary, parsed, ver):
    names = [func_name(d) for h in headers for _, ds in parsed[h][2] for d in ds]
    out = [".\\\" SPDX-License-Identifier: MIT",
           ".\\\" Generated from include/umem/%s by tools/gen-api-docs.py: edit the header, not this file."
           % ", include/umem/".join(headers),
           f'.TH {page.upper()} 3 "" "libumem {ver}" "libumem Programmer\'s Manual"',
           ".SH NAME",
           f"{', '.join(names) or page} \\- {summary}",
           ".SH SYNOPSIS", ".nf"]
    out.append(f".B #include <umem/{headers[0]}>")
    out.append("")
    for h in headers:
        for _, ds in parsed[h][2]:
            for d in ds:
                out += [resc(x) for x in wrap_decl(d)]
    out += [".fi", ".PP", "Link with \\fB\\-lumem\\fP (pkg-config: \\fBlibumem\\fP;"
            " CMake: \\fBfind_package(umem)\\fP, target \\fBumem::umem\\fP)."]
    out.append(".SH DESCRIPTION")
    out += roff_paragraphs(parsed[headers[0]][0])
    types = [b for h in headers for b in merge_types(parsed[h][1])]
    if types:
        out.append(".SH TYPES AND CONSTANTS")
        for b in types:
            out += [".PP"] + roff_code(b)
    groups = [g for h in headers for g in parsed[h][2]]
    if groups:
        out.append(".SH FUNCTIONS")
        for comment, ds in groups:
            out.append(".PP")
            out.append(".nf")
            for d in ds:
                out += ["\\fB" + resc(x) + "\\fP" for x in wrap_decl(d)]
            out.append(".fi")
            if comment:
                out += [".RS"] + roff_paragraphs(comment) + [".RE"]
    for h in headers[1:]:
        if parsed[h][0] and h in PRIVATE_TYPES:
            out.append(".SH THREADING AND MEMORY ORDERING")
            out += roff_paragraphs(parsed[h][0])
    out += [".SH RETURN VALUE",
            "Functions returning \\fBint\\fP return 0 (or a count) on success and a negative errno"
            " value on failure; constructors return NULL and set \\fIerrno\\fP.",
            "Every failure is also described in a message through the print callback"
            " (see \\fBumem_set_print\\fP(3)), prefixed \\(lqlibumem: \\(rq.",
            ".SH SEE ALSO"]
    others = [p for p in PAGES if p != page]
    out.append(",\n".join(["\\fBlibumem\\fP(7)"] + [f"\\fB{p}\\fP(3)" for p in others]))
    return "\n".join(out) + "\n"


def api_md(parsed, ver):
    out = [f"# libumem {ver} API reference", "",
           "Generated from `include/umem/*.h` by `tools/gen-api-docs.py` (the test `docs_api` fails",
           "when it is out of date): edit the headers, then run the script. The same text is in the",
           "section-3 man pages (`man umem_pool`, ...); concepts are in `man libumem` (docs/man/libumem.7)",
           "and [GETTING-STARTED.md](GETTING-STARTED.md).", "",
           "Conventions: functions returning `int` return 0 (or a count) or a negative errno;",
           "constructors return NULL and set `errno`; options structs start with `size_t sz`",
           "(use `UMEM_OPTS()`); `#include <umem/umem.h>` includes everything.", ""]
    for page, (headers, summary) in PAGES.items():
        out += [f"## {page}: {summary}", ""]
        for h in headers:
            top, types, groups = parsed[h]
            out += [f"### `<umem/{h}>`", ""]
            out += md_paragraphs(top) + [""]
            for b in merge_types(types):
                out += ["```c"] + [ln.expandtabs(4) for ln in b] + ["```", ""]
            for comment, ds in groups:
                out += ["```c"] + [x for d in ds for x in wrap_decl(d, 96)] + ["```"]
                if comment:
                    out += [""] + md_paragraphs(comment)
                out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main():
    check = "--check" in sys.argv[1:]
    headers = sorted(f for f in os.listdir(INC) if f.endswith(".h"))
    covered = {h for hs, _ in PAGES.values() for h in hs}
    missing = [h for h in headers if h not in covered and h not in NOT_DOCUMENTED]
    if missing:
        sys.exit(f"gen-api-docs: no page for include/umem/{', '.join(missing)}: add it to PAGES")
    parsed = {h: parse(os.path.join(INC, h)) for h in covered}
    ver = version()
    files = {os.path.join("docs", "API.md"): api_md(parsed, ver)}
    for page, (hs, summary) in PAGES.items():
        files[os.path.join("docs", "man", page + ".3")] = man_page(page, hs, summary, parsed, ver)
    stale = 0
    for rel, text in files.items():
        path = os.path.join(ROOT, rel)
        old = open(path).read() if os.path.exists(path) else ""
        if old == text:
            continue
        if check:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       rel, rel + " (from the headers)", n=1))
        else:
            with open(path, "w") as f:
                f.write(text)
            print(f"gen-api-docs: wrote {rel}")
    if stale:
        print(f"gen-api-docs: {stale} file(s) out of date: run tools/gen-api-docs.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
