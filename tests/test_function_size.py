"""Functions a person can hold in mind: lizard (a maintained complexity analyser) measures every
function of the engine (cpp/, less its tests) and the Python package (python/), and none may
have more than MAX_NLOC lines of code or a cyclomatic complexity over MAX_CCN unless a reason is
written directly above it:

    // long: a dispatch over the fixed set of Kineto keys; split, it would hide the set
    # long: <why>          (Python)

The comment may stand anywhere in the comment block above the function's first line (above a
`template <...>` line or decorators too). A reason above a function within the limits is stale
and fails as well, so reasons do not outlive the length they excused (docs/architecture.md,
"Conventions").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import lizard

REPO = Path(__file__).resolve().parents[1]
MAX_NLOC = 60  # lines of code, blank and comment lines not counted
MAX_CCN = 15
MIN_REASON_WORDS = 3
SOURCE_DIRS = ("cpp", "python")
EXCLUDED_DIRS = ("cpp/tests",)  # tests are read as tables of cases, not held in mind as logic
SUFFIXES = {".cpp", ".cc", ".h", ".hpp", ".py"}

REASON = {False: re.compile(r"^//\s*long:\s*(?P<why>.*)$"), True: re.compile(r"^#\s*long:\s*(?P<why>.*)$")}


@dataclass(frozen=True)
class Offence:
    path: str
    line: int
    name: str
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name}: {self.what}"


def source_files(root: Path) -> list[Path]:
    files = []
    for top in SOURCE_DIRS:
        for path in sorted((root / top).rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.suffix in SUFFIXES and path.is_file() and not rel.startswith(EXCLUDED_DIRS):
                files.append(path)
    return files


def is_declaration_head(text: str, python: bool) -> bool:
    """A line between a function's comment block and its name: decorators in Python; in C++ a
    template line, a return type or attributes (anything that ends no statement, block or label)."""
    if python:
        return text.startswith("@")
    return bool(text) and not text.startswith("#") and not text.endswith((";", "{", "}", ":"))


def reason_above(lines: list[str], first_line: int, python: bool) -> str | None:
    """The text of a `long:` comment in the comment block directly above line `first_line`
    (1-based) and the declaration's head; None when there is none."""
    comment = "#" if python else "//"
    for text in (line.strip() for line in reversed(lines[:first_line - 1])):
        if text.startswith(comment):
            if match := REASON[python].match(text):
                return match.group("why").strip()
        elif not is_declaration_head(text, python):
            return None
    return None


def offences_in(path: Path, root: Path) -> list[Offence]:
    rel = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for fn in lizard.analyze_file(str(path)).function_list:
        too_long = fn.nloc > MAX_NLOC
        too_complex = fn.cyclomatic_complexity > MAX_CCN
        reason = reason_above(lines, fn.start_line, python=path.suffix == ".py")
        size = f"{fn.nloc} lines of code, CCN {fn.cyclomatic_complexity}"
        if (too_long or too_complex) and reason is None:
            found.append(Offence(rel, fn.start_line, fn.name,
                                 f"{size} (limits {MAX_NLOC}, {MAX_CCN}): split it, or write "
                                 f"`long: <why>` above it"))
        elif (too_long or too_complex) and len(reason.split()) < MIN_REASON_WORDS:
            found.append(Offence(rel, fn.start_line, fn.name,
                                 f"{size}: the reason '{reason}' says too little"))
        elif reason is not None and not (too_long or too_complex):
            found.append(Offence(rel, fn.start_line, fn.name,
                                 f"{size}, within the limits: the `long:` reason above it is stale"))
    return found


def offences(root: Path) -> list[Offence]:
    return [o for path in source_files(root) for o in offences_in(path, root)]


def test_no_function_is_long_or_complex_without_a_reason_above_it():
    found = offences(REPO)
    assert not found, f"{len(found)} function(s):\n" + "\n".join(map(str, found))


# ---- the check itself, on planted sources ---------------------------------------------------

def cpp_function(name: str, statements: int, branches: int = 0) -> str:
    body = [f"  int x{i} = {i};" for i in range(statements)]
    body += [f"  if (a == {i}) return {i};" for i in range(branches)]
    return f"int {name}(int a) {{\n" + "\n".join(body) + "\n  return a;\n}\n"


def plant(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def names_of(found: list[Offence]) -> dict[str, str]:
    return {o.name: o.what for o in found}


def test_check_reports_long_and_complex_functions_without_a_reason(tmp_path):
    # Lines of code: the signature, the statements, the return and the closing brace; CCN: 1 + the ifs.
    plant(tmp_path, "cpp/src/a.cpp",
          cpp_function("long_one", 58) + "\n"                      # 1 + 58 + 1 + 1 = 61 lines
          + cpp_function("complex_one", 0, branches=15) + "\n"     # CCN 1 + 15 = 16
          + cpp_function("at_the_limits", 43, branches=14))       # 1 + 43 + 14 + 2 = 60 lines, CCN 15
    found = names_of(offences(tmp_path))
    assert set(found) == {"long_one", "complex_one"}
    assert found["long_one"].startswith("61 lines of code, CCN 1 ")
    assert found["complex_one"].startswith("18 lines of code, CCN 16 ")


def test_check_accepts_a_reason_above_the_declaration_head(tmp_path):
    plant(tmp_path, "cpp/src/a.cpp",
          "// long: one case per Kineto phase, a table to read top down\n"
          "template <typename T>\n" + cpp_function("with_reason", 80)
          + "\n// the reason must name why\n// long: yes\n" + cpp_function("too_short_a_reason", 80))
    plant(tmp_path, "python/pkg/m.py",
          "# long: a table of cases written as code\n@decorator\ndef table(a):\n"
          + "".join(f"    x{i} = {i}\n" for i in range(70)) + "    return a\n")
    found = names_of(offences(tmp_path))
    assert set(found) == {"too_short_a_reason"}
    assert "says too little" in found["too_short_a_reason"]


def test_check_reports_a_stale_reason_and_skips_the_tests(tmp_path):
    plant(tmp_path, "cpp/src/a.cpp", "// long: it once was a long function\n" + cpp_function("short_now", 3))
    plant(tmp_path, "cpp/tests/a_test.cpp", cpp_function("long_test_table", 90))
    found = names_of(offences(tmp_path))
    assert set(found) == {"short_now"}
    assert "stale" in found["short_now"]
