"""docs/architecture.md states the stage graph that CMakeLists.txt declares.

The graph is written once, in the attnprof_stage(...) calls; the doc shows it twice: a drawing
of each stage's direct arrows (what it reaches through them it may use) and a table of every
stage with its folder, public headers and declared dependencies. Both are compared with
cmake/check_layering.py's reading of CMakeLists.txt, so neither needs a build.
"""
from __future__ import annotations

import fnmatch
import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARCHITECTURE = REPO / "docs" / "architecture.md"

_spec = importlib.util.spec_from_file_location("check_layering", REPO / "cmake" / "check_layering.py")
check_layering = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_layering)

TABLE_HEADER = "| stage | folder | public headers | uses |"
ARROW = re.compile(r"([a-z]+(?:, [a-z]+)*) -+> ([a-z]+(?:, [a-z]+)*)")
HEADER_NAME = re.compile(r"`([\w/*.]+\.h)`")


def stage_graph_section(markdown: str) -> str:
    start = markdown.index("## The stage graph")
    end = markdown.index("\n## ", start + 1)
    return markdown[start:end]


def doc_table(section: str) -> dict:
    """{stage: {"folder", "headers" (names and globs), "deps" (set)}} from the stage table."""
    lines = section[section.index(TABLE_HEADER):].splitlines()
    rows = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        stage, folder, headers, uses = (cell.strip() for cell in line.strip("|").split("|"))
        deps = set() if uses == "(nothing)" else {d.strip() for d in uses.split(",")}
        rows[stage] = {"folder": folder.strip("`"), "headers": HEADER_NAME.findall(headers), "deps": deps}
    return rows


def doc_drawing(section: str) -> tuple[dict, set]:
    """The drawing's arrows {stage: set of stages it points to} and every stage it names."""
    drawing = section.split("```")[1]
    arrows, named = {}, set()
    for sources, targets in ARROW.findall(drawing):
        for source in sources.split(", "):
            arrows.setdefault(source, set()).update(targets.split(", "))
        named.update(sources.split(", "), targets.split(", "))
    return arrows, named


def direct_dependencies(graph: dict, stage: str) -> set:
    """The declared dependencies of a stage that no other of its dependencies already reaches."""
    deps = graph[stage]["deps"]
    return {d for d in deps
            if not any(other != d and d in check_layering.closure(graph, other) for other in deps)}


def table_differences(graph: dict, table: dict) -> list[str]:
    problems = [f"stage {s} is declared but not in the table" for s in sorted(graph.keys() - table.keys())]
    problems += [f"the table lists {s}, which CMakeLists.txt does not declare" for s in sorted(table.keys() - graph.keys())]
    for stage in sorted(graph.keys() & table.keys()):
        row, declared = table[stage], graph[stage]
        if row["folder"] != f"cpp/src/{stage}":
            problems.append(f"{stage}: folder {row['folder']}, not cpp/src/{stage}")
        if row["deps"] != set(declared["deps"]):
            problems.append(f"{stage}: the table says it uses {sorted(row['deps'])}, "
                            f"CMakeLists.txt declares {sorted(declared['deps'])}")
        unlisted = [h for h in declared["headers"] if not any(fnmatch.fnmatch(h, n) for n in row["headers"])]
        unknown = [n for n in row["headers"] if not fnmatch.filter(declared["headers"], n)]
        if unlisted:
            problems.append(f"{stage}: public headers {unlisted} are missing from the table")
        if unknown:
            problems.append(f"{stage}: the table lists headers {unknown} that the stage does not declare")
    return problems


def drawing_differences(graph: dict, arrows: dict, named: set) -> list[str]:
    problems = [f"the drawing does not name stage {s}" for s in sorted(graph.keys() - named)]
    problems += [f"the drawing names {s}, which is no stage" for s in sorted(named - graph.keys())]
    for stage in sorted(graph):
        drawn, direct = arrows.get(stage, set()), direct_dependencies(graph, stage)
        if drawn != direct:
            problems.append(f"{stage}: drawn pointing to {sorted(drawn)}, its direct dependencies are {sorted(direct)}")
    return problems


def declared_graph() -> dict:
    return check_layering.declared_stages((REPO / "CMakeLists.txt").read_text())


def test_the_stage_table_lists_every_declared_stage_with_its_folder_headers_and_dependencies():
    section = stage_graph_section(ARCHITECTURE.read_text())
    assert table_differences(declared_graph(), doc_table(section)) == []


def test_the_stage_drawing_points_each_stage_at_its_direct_dependencies():
    section = stage_graph_section(ARCHITECTURE.read_text())
    assert drawing_differences(declared_graph(), *doc_drawing(section)) == []


def test_declared_stages_reads_the_dependencies_and_headers_of_each_call():
    cmake = """
function(attnprof_stage name)
endfunction()
attnprof_stage(low HEADERS low.h PRIVATE_LIBS ZLIB::ZLIB)
# a comment between the calls
attnprof_stage(top DEPS low mid
               HEADERS top.h sections/a.h)
"""
    assert check_layering.declared_stages(cmake) == {
        "low": {"deps": [], "headers": ["low.h"]},
        "top": {"deps": ["low", "mid"], "headers": ["top.h", "sections/a.h"]},
    }


def test_a_table_or_drawing_that_drifted_from_the_graph_is_reported():
    graph = {"low": {"deps": [], "headers": ["low.h", "sections/a.h"]},
             "mid": {"deps": ["low"], "headers": ["mid.h"]},
             "top": {"deps": ["mid", "low"], "headers": ["top.h"]}}
    section = """## The stage graph
```
 top     top ----> mid, low
         mid ----> low
```
| stage | folder | public headers | uses |
|---|---|---|---|
| low | `cpp/src/low` | `low.h` | (nothing) |
| mid | `cpp/src/mid` | `mid.h`, `gone.h` | low |
| top | `cpp/src/top` | `top.h` | mid |
"""
    # top also declares low, which it reaches through mid: the table must list it, the
    # drawing must not draw it.
    assert table_differences(graph, doc_table(section)) == [
        "low: public headers ['sections/a.h'] are missing from the table",
        "mid: the table lists headers ['gone.h'] that the stage does not declare",
        "top: the table says it uses ['mid'], CMakeLists.txt declares ['low', 'mid']",
    ]
    assert drawing_differences(graph, *doc_drawing(section)) == [
        "top: drawn pointing to ['low', 'mid'], its direct dependencies are ['mid']",
    ]
