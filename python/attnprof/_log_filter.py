"""The stderr filter process of attnprof._quiet: copies its stdin to its stdout, leaving out the
lines that start with one of the byte prefixes given as arguments (hex) and contain the marker
that follows each prefix ("-" = none).

It runs as its own process, started by path with ``python -I``, and imports nothing of attnprof
or torch: when the profiled process dies, this one still reads to the pipe's end, so a crash
message written inside a capture window reaches the terminal. A line ends at "\\n" or "\\r"
(progress bars redraw with "\\r"); text that cannot start a filtered line passes at once."""
import os
import sys


def rules_from(argv: list[str]) -> list[tuple[bytes, bytes]]:
    pairs = zip(argv[0::2], argv[1::2])
    return [(bytes.fromhex(prefix), b"" if marker == "-" else bytes.fromhex(marker)) for prefix, marker in pairs]


def dropped(line: bytes, rules: list[tuple[bytes, bytes]]) -> bool:
    return any(line.startswith(prefix) and marker in line for prefix, marker in rules)


def may_become_dropped(start: bytes, rules: list[tuple[bytes, bytes]]) -> bool:
    """Whether an unfinished line could still turn out to be one to leave out."""
    return any(prefix.startswith(start) or start.startswith(prefix) for prefix, _ in rules)


def next_line_end(buffer: bytes) -> int:
    ends = [i for i in (buffer.find(b"\n"), buffer.find(b"\r")) if i >= 0]
    return min(ends) if ends else -1


def run(rules: list[tuple[bytes, bytes]], read_fd: int = 0, write_fd: int = 1) -> None:
    pending, passing = b"", False   # passing: the start of this line was already let through
    while chunk := os.read(read_fd, 65536):
        pending += chunk
        while (end := next_line_end(pending)) >= 0:
            line, pending = pending[:end + 1], pending[end + 1:]
            if passing or not dropped(line, rules):
                os.write(write_fd, line)
            passing = False
        if pending and (passing or not may_become_dropped(pending, rules)):
            os.write(write_fd, pending)
            pending, passing = b"", True
    if pending and (passing or not dropped(pending, rules)):
        os.write(write_fd, pending)


if __name__ == "__main__":
    run(rules_from(sys.argv[1:]))
