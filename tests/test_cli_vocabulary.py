"""One front door: every command writes its answer with the same output flags, the flags several
commands share are spelled and explained once (docs/cli.md, "Flags every command shares"), old
spellings keep working with a deprecation line, and the Python API gives the CLI's answer."""
import csv
import io
import json
import re
from pathlib import Path

import pytest

import attnprof

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ["analyze", "scale", "heads", "predict", "whatif", "diff", "explain", "matrix"]
# The commands whose answer shows a table; the others must not offer --csv (docs/cli.md, "Which
# table --csv writes").
TABLE_COMMANDS = {"matrix", "analyze", "scale", "heads", "predict", "whatif", "explain", "diff"}
FORM_WORDS = {"--json": "as JSON", "--md": "as Markdown", "--html": "as a self-contained HTML page",
              "--text": "as the terminal shows it", "--csv": "as CSV"}


def help_lines(run_cli, command):
    """Each option of `command --help` -> the rest of its entry (CLI11 puts a long one on the next line)."""
    lines = run_cli(command, "--help", check_code=0).stdout.splitlines()
    helps = {}
    for i, line in enumerate(lines):
        m = re.match(r"^\s+(?:-\w,)?(--[a-z-]+)(.*)$", line)
        if not m:
            continue
        entry = m.group(2)
        if i + 1 < len(lines) and re.match(r"^\s{20,}\S", lines[i + 1]):
            entry += " " + lines[i + 1].strip()
        helps[m.group(1)] = " ".join(entry.split())
    return helps


def shared_flag_rows():
    text = (ROOT / "docs" / "cli.md").read_text()
    section = text.split("## Flags every command shares", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(--[a-z-]+)[^|]*\| (.+?) \| (.+?) \|$", section, re.M)
    assert len(rows) >= 10, "docs/cli.md lists the shared flags in a table"
    return rows


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_offers_the_output_forms_with_the_same_help(run_cli, command):
    lines = help_lines(run_cli, command)
    forms = ["--json", "--md", "--html", "--text"] + (["--csv"] if command in TABLE_COMMANDS else [])
    for flag in forms:
        assert flag in lines, f"{command} --help lacks {flag}"
        assert re.search(rf"(^|\s)write .+ {re.escape(FORM_WORDS[flag])} to FILE \('-' or no FILE: stdout\)$", lines[flag]), \
            (command, flag, lines[flag])
    assert "--quiet" in lines
    assert "--markdown" not in lines, "the old spelling is hidden from --help"
    if command not in TABLE_COMMANDS:
        assert "--csv" not in lines, f"{command} has no table, so no --csv"


def test_shared_flags_read_the_same_in_docs_and_in_every_commands_help(run_cli):
    helps = {command: help_lines(run_cli, command) for command in COMMANDS}
    for flag, commands, meaning in shared_flag_rows():
        named = [c.strip(" `") for c in commands.split(",")]
        for command in named:
            assert command in COMMANDS, (flag, command)
            assert " ".join(meaning.split()) in helps[command].get(flag, ""), (flag, command, helps[command].get(flag))


def test_forms_go_to_stdout_with_a_dash_and_then_the_terminal_view_is_not_printed(run_cli):
    proc = run_cli("explain", "--q", "1,8,1024,64", "--arch", "cpu", "--torch", "2.13", "--json", "-", check_code=0)
    assert "fused_choice" in json.loads(proc.stdout), proc.stdout
    assert "SDPA decision" not in proc.stdout
    quiet = run_cli("explain", "--q", "1,8,1024,64", "--arch", "cpu", "--quiet", check_code=0)
    assert quiet.stdout == ""


def test_matrix_writes_a_csv_table_with_its_header_first(run_cli, tmp_path):
    out = tmp_path / "m.csv"
    run_cli("matrix", "--gpu", "H100,CPU", "--dtype", "bf16,fp32", "--csv", str(out), "--quiet", check_code=0)
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert rows[0][:4] == ["GPU", "arch", "dtype", "SDPA picks"]
    assert [r[:3] for r in rows[1:]] == [["H100", "sm90", "bf16"], ["H100", "sm90", "fp32"],
                                         ["CPU", "cpu", "bf16"], ["CPU", "cpu", "fp32"]]


def test_a_text_answer_gets_an_html_page_without_script(run_cli, tmp_path):
    page = tmp_path / "e.html"
    run_cli("explain", "--q", "2,8,256,100", "--mask", "bool", "--html", str(page), "--quiet", check_code=0)
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html and "<script" not in html
    assert "flash" in html and "rejected" in html


def test_old_spellings_still_work_and_say_they_are_deprecated(run_cli, tmp_path):
    md = tmp_path / "m.md"
    old = run_cli("matrix", "--gpu", "H100", "--dtype", "bf16", "--markdown", "-o", str(md), check_code=0)
    assert "--markdown is deprecated, use --md" in old.stderr
    assert md.read_text().count("| H100 |") == 1
    lines = tmp_path / "in.jsonl"
    lines.write_text(json.dumps({"device": "cpu", "hd": 64, "dtype": "fp32", "Hq": 8, "Hkv": 8, "gqa": False, "Sq": 128,
                                 "Skv": 128, "mask": "none", "causal": False, "dropout": 0.0,
                                 "requires_grad": False}) + "\n")
    out = tmp_path / "out.jsonl"
    proc = run_cli("explain", "--batch", str(lines), "--arch", "cpu", "-o", str(out))
    new = run_cli("explain", "--inputs", str(lines), "--arch", "cpu", "--json", "-", check_code=0)
    assert proc.returncode == new.returncode == 0, proc.stderr
    assert "--batch is deprecated, use --inputs" in proc.stderr
    assert out.read_text() == new.stdout


def test_lengths_take_a_list_or_a_file_in_every_command(run_cli, tmp_path):
    counts = tmp_path / "lengths.txt"
    counts.write_text("512\n2048\n2048\n")
    from_file = run_cli("whatif", "--lengths", str(counts), "--model", "mistral-7b", "--window", "1024",
                        "--json", "-", check_code=0)
    from_list = run_cli("whatif", "--lengths", "512,2048,2048", "--model", "mistral-7b", "--window", "1024",
                        "--json", "-", check_code=0)
    strip = lambda doc: {k: v for k, v in json.loads(doc)["whatif"].items()}
    assert strip(from_file.stdout) == strip(from_list.stdout)
    predicted = json.loads(run_cli("predict", "--model", "gpt2", "--lengths", str(counts), "--json", "-",
                                   check_code=0).stdout)
    assert predicted["scaling"]["series"][0]["lengths"] == [512, 2048]


def test_python_explain_and_matrix_give_the_clis_answer(run_cli):
    cli = run_cli("explain", "--q", "2,8,256,100", "--mask", "bool", "--arch", "sm90", check_code=0).stdout
    assert attnprof.explain(q="2,8,256,100", mask="bool", arch="sm90") == cli
    cli_csv = run_cli("matrix", "--gpu", "H100", "--dtype", "bf16", "--csv", "-", check_code=0).stdout
    # the CLI's stdout was read as text, which turns CSV's CRLF line ends into LF
    assert attnprof.matrix(gpus=["H100"], dtypes=["bf16"], form="csv").replace("\r\n", "\n") == cli_csv
    cli_verdicts = run_cli("explain", "--q", "2,8,256,100", "--mask", "bool", "--csv", "-", check_code=0).stdout
    assert attnprof.explain(q="2,8,256,100", mask="bool", form="csv").replace("\r\n", "\n") == cli_verdicts
    with pytest.raises(ValueError, match="unknown form"):
        attnprof.matrix(form="pdf")
