#!/usr/bin/env python3
"""Fails (exit 1, one line per literal) when a C++ string literal under --root holds JavaScript
or CSS: the dashboard's code lives in files (cpp/src/render/dashboard/, embedded at build time
by cmake/dashboard_assets.cmake), where node can parse it and an editor knows the language.

The literals come from clang's raw lexer (`clang -cc1 -dump-raw-tokens`: no preprocessing, so
comments, character literals, digit separators and raw strings are told apart as the compiler
tells them). A literal holds script when it has one of the shapes the dashboard's script is
written in (an arrow function, a const/let/var declaration, a function expression, a DOM call)
and style when it has a CSS rule (`selector { property: value; }`), two declarations in a row
or a <style> element with content. The hostile names the escaping tests feed the renderers
(`<script>alert(1)</script>`, `<img onerror=...>`) are markup around one call, none of these
shapes, so they may stay in the tests.

`--self-test` plants script, style and look-alikes that are neither in a scratch tree and fails
unless exactly the script and the style are reported.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

SCRIPT_SHAPES = {
    "arrow function": re.compile(r"(\)|\b[A-Za-z_$][\w$]*)\s*=>"),
    "declaration": re.compile(r"\b(const|let|var)\s+[A-Za-z_$][\w$]*\s*=[^=]"),
    "function expression": re.compile(r"\bfunction\s*[\w$]*\s*\("),
    "DOM call": re.compile(r"\.(addEventListener|appendChild|createElementNS|createElement|setAttribute"
                           r"|querySelectorAll|querySelector|getElementById)\s*\(|\.textContent\s*="),
}
STYLE_SHAPES = {
    "CSS rule": re.compile(r"[.#]?[A-Za-z][\w\-.#:>, ]*\{\s*-?[a-z][a-z-]*\s*:\s*[^;{}\n]+;"),
    "CSS declarations": re.compile(r"(?<![\w-])-?[a-z][a-z-]*\s*:\s*[^;:{}\"\n]+;\s*-?[a-z][a-z-]*\s*:\s*[^;{}\"\n]+;"),
    "<style> content": re.compile(r"<style[^>]*>\s*[^<\s]"),
}
SHAPES = [("script", k, v) for k, v in SCRIPT_SHAPES.items()] + [("style", k, v) for k, v in STYLE_SHAPES.items()]
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".h", ".hpp", ".inc")
# One token of the dump: kind 'spelling'<TAB>[flags]<TAB>Loc=<file:line:col>; a raw string's
# spelling spans lines.
TOKEN = re.compile(r"^(\w*string_literal) '(.*?)'\t[^\n]*?Loc=<[^\n]*:(\d+):\d+>$", re.MULTILINE | re.DOTALL)
RAW = re.compile(r'^(?:u8|[uUL])?R"([^(]*)\((.*)\)\1"$', re.DOTALL)
PLAIN = re.compile(r'^(?:u8|[uUL])?"(.*)"$', re.DOTALL)


ESCAPE = re.compile(r"\\(.)", re.DOTALL)
ESCAPED = {"n": "\n", "t": "\t", "r": "\r"}


def content_of(spelling):
    """The characters between a literal's quotes: a raw string's as they are, a plain one's with
    its escapes read (so "<style>\\n" is a tag and a line break)."""
    raw = RAW.match(spelling)
    if raw:
        return raw.group(2)
    plain = PLAIN.match(spelling)
    if not plain:
        return spelling
    return ESCAPE.sub(lambda e: ESCAPED.get(e.group(1), e.group(1)), plain.group(1))


def shape_of(text):
    """(kind, shape) of the first script or style shape in text, or None."""
    for kind, name, pattern in SHAPES:
        if pattern.search(text):
            return kind, name
    return None


def literals(clang, path):
    """(line, content) of every string literal of a C++ file, from clang's raw lexer."""
    dump = subprocess.run([clang, "-cc1", "-x", "c++", "-std=c++20", "-dump-raw-tokens", path],
                          capture_output=True, text=True, errors="replace")
    if dump.returncode != 0:
        raise RuntimeError(f"{clang} could not lex {path}: {dump.stderr.strip().splitlines()[:1]}")
    return [(int(m.group(3)), content_of(m.group(2))) for m in TOKEN.finditer(dump.stderr)]


def violations_in(clang, root, path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    # A literal is a substring of its file: a file with no shape anywhere needs no lexing.
    if shape_of(text) is None:
        return []
    out = []
    for line, content in literals(clang, path):
        found = shape_of(content)
        if found:
            rel = os.path.relpath(path, os.path.dirname(os.path.abspath(root)))
            out.append(f"{rel}:{line}: a string literal holds {found[0]} ({found[1]}): "
                       "the dashboard's code goes in cpp/src/render/dashboard/ (cmake/dashboard_assets.cmake)")
    return out


def check(clang, root):
    paths = sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.endswith(SOURCE_SUFFIXES))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = pool.map(lambda p: violations_in(clang, root, p), paths)
    return [line for found in results for line in found], len(paths)


PLANTED = {  # relative to the scratch tree's cpp/
    "src/page_script.cpp": 'const char* const kJs = R"js(\n'
                           "  const el = (tag) => document.createElement(tag);\n"
                           ')js";\n',
    "src/page_style.h": "#pragma once\n"
                        'inline const char* kCss = R"css(.card { border: 1px solid #ccc; })css";\n',
    "src/inline_style.cpp": 'const char* s = "<span style=\\"color: red; font-weight: 600;\\">";\n',
    "src/one_per_shape.cpp": 'const char* a = "let width = 760;";\n'
                             'const char* b = u8"return [1, 2].map(function (x) { return x; });";\n'
                             'const char* c = "node.addEventListener(\'click\', pin);";\n'
                             'const char* d = "<style>body{margin:0}</style>";\n',
    "src/look_alikes.cpp": "// const el = (tag) => document.createElement(tag);  (a comment, no literal)\n"
                           "/* \".card { border: 0; }\" */\n"
                           "char quote = '\"'; int n = 1'000'000; const char* a = \"plain ' text\";\n"
                           'std::string page = "<style>\\n" + css + "</style>\\n<script nonce=\\"" + nonce + "\\">\\n";\n'
                           'const char* hostile = "</script><script>document.title=\'pwned\'</script>";\n'
                           'const char* img = "<img src=x onerror=alert(1)>";\n'
                           'const char* nonce = "{:08x}{:08x}{:08x}";\n'
                           'const char* json = R"({"a": {"b": 1}, "c": "d; e"})";\n'
                           'auto cmp = [](int x) { return x; };  // C++ code around the literals\n',
}


def self_test(clang):
    with tempfile.TemporaryDirectory() as scratch:
        root = os.path.join(scratch, "cpp")
        for rel, text in PLANTED.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        errors, _ = check(clang, root)
    expected = ["cpp/src/inline_style.cpp:1: a string literal holds style (CSS declarations)",
                "cpp/src/one_per_shape.cpp:1: a string literal holds script (declaration)",
                "cpp/src/one_per_shape.cpp:2: a string literal holds script (function expression)",
                "cpp/src/one_per_shape.cpp:3: a string literal holds script (DOM call)",
                "cpp/src/one_per_shape.cpp:4: a string literal holds style (<style> content)",
                "cpp/src/page_script.cpp:1: a string literal holds script (arrow function)",
                "cpp/src/page_style.h:2: a string literal holds style (CSS rule)"]
    got = sorted(e.split(": the dashboard")[0] for e in errors)
    if got != expected:
        print("self-test: expected\n  " + "\n  ".join(expected) + "\ngot\n  " + "\n  ".join(got))
        return 1
    print(f"self-test: {len(expected)} planted literals found, no look-alike reported")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clang", required=True, help="clang, whose raw lexer finds the literals")
    ap.add_argument("--root", help="folder of C++ sources to check (cpp/)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if not os.path.isfile(args.clang):
        print(f"clang not found ({args.clang}): install the Debian package clang")
        return 1
    if args.self_test:
        return self_test(args.clang)
    if not args.root:
        ap.error("--root is required")
    errors, count = check(args.clang, args.root)
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"{count} C++ files: no string literal holds script or style")
    return 0


if __name__ == "__main__":
    sys.exit(main())
