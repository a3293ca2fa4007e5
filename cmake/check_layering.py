#!/usr/bin/env python3
"""Proves the stage graph of cpp/src (declared in CMakeLists.txt, written to stage_graph.json).

Fails (exit 1, one line per violation) when
  - a file of stage S includes a public header owned by a stage S neither is nor reaches
    through its declared dependencies (an upward or sideways dependency),
  - a file includes another stage's private header ("<stage>/x.h" from cpp/src),
  - a public header includes a header its owning stage may not use,
  - a folder of cpp/src is no stage, a public header belongs to no stage or to two,
  - the declared graph has a cycle or names an unknown stage,
  - with --libs: a stage's static library refers to a symbol that only a stage it does not
    reach defines (nm), which catches a use the includes hide (a hand-written declaration).

Why a script over the include graph rather than building each stage alone: it reads about
a hundred files in well under a second, where compiling every stage a second time against only
its dependencies would cost minutes on two cores; a stage can only call what it can include,
so the include graph is the dependency graph. `--self-test` checks that the checker finds a
planted violation of each kind.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
STAGE_CALL = re.compile(r"^attnprof_stage\(([^)]*)\)", re.MULTILINE)
STAGE_LISTS = ("DEPS", "HEADERS", "PRIVATE_LIBS")


def declared_stages(cmake_text):
    """The graph of the attnprof_stage(name DEPS ... HEADERS ... PRIVATE_LIBS ...) calls of a
    CMakeLists.txt, as CMake writes it to stage_graph.json: {name: {"deps", "headers"}}. Read
    from the source, so a check of the docs needs no configured build; main() proves that it
    reads what CMake wrote."""
    graph = {}
    for call in STAGE_CALL.finditer(cmake_text):
        words = re.sub(r"#.*", "", call.group(1)).split()
        lists, current = {k: [] for k in STAGE_LISTS}, None
        for word in words[1:]:
            if word in lists:
                current = word
            elif current:
                lists[current].append(word)
        graph[words[0]] = {"deps": lists["DEPS"], "headers": lists["HEADERS"]}
    return graph


def closure(graph, stage):
    seen, todo = set(), [stage]
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        todo.extend(graph[s]["deps"])
    return seen


def find_cycle(graph):
    state = {}

    def visit(s, path):
        state[s] = "open"
        for d in graph[s]["deps"]:
            if state.get(d) == "open":
                return path + [s, d]
            if d not in state:
                found = visit(d, path + [s])
                if found:
                    return found
        state[s] = "done"
        return None

    for s in graph:
        if s not in state:
            found = visit(s, [])
            if found:
                return found
    return None


def includes_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def check(graph, root):
    errors = []
    src = os.path.join(root, "cpp", "src")
    inc = os.path.join(root, "cpp", "include", "attnprof")
    for s, node in graph.items():
        for d in node["deps"]:
            if d not in graph:
                errors.append(f"stage {s} depends on unknown stage {d}")
    if errors:
        return errors
    cycle = find_cycle(graph)
    if cycle:
        return ["stage graph has a cycle: " + " -> ".join(cycle)]

    owner = {}
    for s, node in graph.items():
        for h in node["headers"]:
            if h in owner:
                errors.append(f"public header attnprof/{h} is owned by both {owner[h]} and {s}")
            owner[h] = s
    for dirpath, _, files in os.walk(inc):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), inc).replace(os.sep, "/")
            if rel.endswith(".h") and rel not in owner:
                errors.append(f"cpp/include/attnprof/{rel} belongs to no stage (add it to HEADERS in CMakeLists.txt)")
    for h in owner:
        if not os.path.isfile(os.path.join(inc, h)):
            errors.append(f"stage {owner[h]} declares attnprof/{h}, which does not exist")

    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for d in folders:
        if d not in graph:
            errors.append(f"cpp/src/{d}/ is no stage (declare it with attnprof_stage in CMakeLists.txt)")

    def judge(file_label, stage, included):
        allowed = closure(graph, stage)
        for name in included:
            if name.startswith("attnprof/"):
                h = name[len("attnprof/"):]
                o = owner.get(h)
                if o is not None and o not in allowed:
                    errors.append(f"{file_label} ({stage}) includes {name} of stage {o}, "
                                  f"which {stage} does not depend on")
            else:
                first = name.split("/", 1)[0]
                if "/" in name and first in graph and first != stage:
                    errors.append(f"{file_label} ({stage}) includes {name}, a private header of stage {first}")

    for d in folders:
        if d not in graph:
            continue
        for dirpath, _, files in os.walk(os.path.join(src, d)):
            for f in sorted(files):
                if f.endswith((".cpp", ".h")):
                    path = os.path.join(dirpath, f)
                    judge(os.path.relpath(path, root), d, includes_of(path))
    for h, s in sorted(owner.items()):
        path = os.path.join(inc, h)
        if os.path.isfile(path):
            judge(f"cpp/include/attnprof/{h}", s, includes_of(path))
    return errors


def library_symbols(path):
    """(strongly defined, undefined) symbol names of a static library, from nm -P."""
    out = subprocess.run(["nm", "-P", path], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or line.endswith(":"):
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDBR":
            defined.add(name)
    return defined, undefined


def check_symbols(graph, lib_dir):
    errors = []
    symbols = {}
    for s in graph:
        path = os.path.join(lib_dir, f"libattnprof_{s}.a")
        if not os.path.isfile(path):
            return [f"{path} not found (build the stage libraries first)"]
        symbols[s] = library_symbols(path)
    definer = {}
    for s, (defined, _) in symbols.items():
        for name in defined:
            definer.setdefault(name, set()).add(s)
    for s, (_, undefined) in symbols.items():
        allowed = closure(graph, s)
        for name in sorted(undefined):
            owners = definer.get(name)
            if owners and not owners & allowed:
                errors.append(f"libattnprof_{s}.a uses {name}, defined only by stage "
                              f"{', '.join(sorted(owners))}, which {s} does not depend on")
    return errors


def self_test():
    """A small tree with one violation of each kind; every one must be reported."""
    graph = {"low": {"deps": [], "headers": ["low.h"]},
             "mid": {"deps": ["low"], "headers": ["mid.h"]},
             "top": {"deps": ["mid"], "headers": ["top.h"]},
             "side": {"deps": ["low"], "headers": ["side.h"]}}
    files = {
        "cpp/include/attnprof/low.h": '#include "attnprof/mid.h"\n',        # upward, in a header
        "cpp/include/attnprof/mid.h": '#include "attnprof/low.h"\n',
        "cpp/include/attnprof/top.h": "",
        "cpp/include/attnprof/side.h": "",
        "cpp/include/attnprof/orphan.h": "",                                 # no owner
        "cpp/src/low/a.cpp": '#include "attnprof/low.h"\n',
        "cpp/src/mid/b.cpp": '#include "attnprof/side.h"\n',                # sideways
        "cpp/src/mid/p.h": "",
        "cpp/src/top/c.cpp": '#include "attnprof/low.h"\n#include "mid/p.h"\n',  # private header
        "cpp/src/side/d.cpp": "",
        "cpp/src/stray/e.cpp": "",                                           # folder without stage
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        errors = check(graph, root)
        expected = ["low.h (low) includes attnprof/mid.h", "b.cpp (mid) includes attnprof/side.h",
                    "a private header of stage mid", "orphan.h belongs to no stage", "cpp/src/stray/ is no stage"]
        missing = [e for e in expected if not any(e in line for line in errors)]
        if "top/c.cpp (top) includes attnprof/low.h" in "\n".join(errors):
            missing.append("a reachable stage (top -> mid -> low) was reported as a violation")
        cyclic = dict(graph, low={"deps": ["top"], "headers": ["low.h"]})
        if not check(cyclic, root) or "cycle" not in check(cyclic, root)[0]:
            missing.append("the cycle low -> top -> mid -> low was not reported")
    for m in missing:
        print(f"check_layering self-test: not detected: {m}", file=sys.stderr)
    return 1 if missing else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", help="stage_graph.json written by CMake")
    ap.add_argument("--root", help="source tree root")
    ap.add_argument("--libs", help="directory of the built libattnprof_<stage>.a: also check their symbols")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    with open(args.graph) as f:
        graph = json.load(f)
    for node in graph.values():  # CMake writes [""] for an empty list
        node["deps"] = [d for d in node["deps"] if d]
        node["headers"] = [h for h in node["headers"] if h]
    with open(os.path.join(args.root, "CMakeLists.txt")) as f:
        errors = [] if declared_stages(f.read()) == graph else [
            "declared_stages() reads CMakeLists.txt differently from CMake's stage_graph.json"]
    errors = errors or check(graph, args.root)
    if not errors and args.libs:
        errors = check_symbols(graph, args.libs)
    for e in errors:
        print(f"check_layering: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
