"""`--csv` of every command that answers with a table: RFC 4180 that Python's csv module reads,
whose rows are the cells of the table the command's Markdown shows (docs/cli.md, "Which table
--csv writes"). The Markdown tables are read back here, so the two forms are compared cell by
cell; one small case per command is also checked against values worked out by hand."""
import csv
import io
import json
import re
import struct

import pytest


def csv_rows(text):
    return list(csv.reader(io.StringIO(text, newline="")))


def unescape(cell):
    """A Markdown cell as attnprof escapes it (markdown_escape) back to its text."""
    cell = re.sub(r"\\(.)", r"\1", cell)
    return cell.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def cells(line):
    return [unescape(part.strip()) for part in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def markdown_tables(markdown):
    """Every pipe table of a Markdown text as (title, header, rows); the title is the `### `
    heading above the table ("" when there is none)."""
    tables, title, lines, i = [], "", markdown.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("### "):
            title = lines[i][4:]
        if lines[i].startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|(\s*-+\s*\|)+", lines[i + 1]):
            header, rows, i = cells(lines[i]), [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            tables.append((title, header, rows))
            continue
        i += 1
    return tables


def answer(run_cli, *args):
    """(CSV rows, Markdown tables) of one command line: the two forms of one run."""
    csv_text = run_cli(*args, "--csv", "-", check_code=0).stdout
    markdown = run_cli(*args, "--md", "-", check_code=0).stdout
    return csv_rows(csv_text), markdown_tables(markdown)


def assert_one_table(rows, tables):
    assert len(tables) == 1, tables
    _, header, body = tables[0]
    assert rows[0] == header
    assert rows[1:] == body


def assert_all_tables_under_their_titles(rows, tables):
    """The CSV of several tables: a `table` column with the title, then every table's columns in
    the order first seen; a column the row's table lacks is empty."""
    assert tables, "the answer shows at least one table"
    columns = []
    for _, header, _ in tables:
        columns += [c for c in header if c not in columns]
    assert rows[0] == ["table"] + columns
    expected = []
    for title, header, body in tables:
        for row in body:
            full = [title] + [""] * len(columns)
            for column, cell in zip(header, row):
                full[1 + columns.index(column)] = cell
            expected.append(full)
    assert rows[1:] == expected


def column(rows, name, title_prefix):
    at = rows[0].index(name)
    return [r[at] for r in rows[1:] if r[0].startswith(title_prefix)]


def test_whatif_csv_is_its_markdown_table_with_the_figures_worked_by_hand(run_cli):
    rows, tables = answer(run_cli, "whatif", "--lengths", "512,2048,2048", "--model", "mistral-7b", "--window", "1024")
    assert_all_tables_under_their_titles(rows, tables)
    # mistral-7b (config.json): 32 layers, 32 query heads, 8 KV heads, head dim 128; KV in bf16.
    per_pair = 4 * 32 * 32 * 128  # QK^T and PV: 2 FLOPs per multiply-add, per layer and head
    full_pairs = 512 * 513 // 2 + 2 * (2048 * 2049 // 2)
    window_pairs = 512 * 513 // 2 + 2 * (1024 * 1025 // 2 + (2048 - 1024) * 1024)  # S <= W keeps all
    by_name = {r[1]: r[2:] for r in rows[1:]}
    assert per_pair * full_pairs == 2_268_950_691_840 and per_pair * window_pairs == 1_718_658_007_040
    assert by_name["attention FLOPs"] == ["2.27 TFLOP", "1.72 TFLOP",
                                          f"{100 * (1 - window_pairs / full_pairs):.1f}%"]
    kv_per_token = 32 * 2 * 8 * 128 * 2  # layers * (K and V) * KV heads * head dim * bytes: 128 KiB
    assert kv_per_token * (512 + 2048 + 2048) == 576 * 2**20  # the window keeps min(S, 1024) tokens:
    assert kv_per_token * (512 + 1024 + 1024) == 320 * 2**20
    assert by_name["KV cache (sum)"] == ["576.0 MiB", "320.0 MiB", f"{100 * (1 - 320 / 576):.1f}%"]
    assert by_name["KV cache (longest)"] == ["256.0 MiB", "128.0 MiB", ""]


def test_scale_csv_holds_every_table_it_shows_under_its_title(run_cli, fixtures_dir):
    folder = fixtures_dir / "h200-torch2.11" / "traces"
    lengths = [512, 1024, 2048, 4096]  # one trace per length, PyTorch's own pick
    traces = [folder / f"llama7b4l_sdpa_bf16_b4_s{n}.pt.trace.json.gz" for n in lengths]
    forced = sorted(folder.glob("llama7b4l_sdpa_bf16_b4_s2048_force_*.pt.trace.json.gz"))
    assert len(forced) >= 2, "forced-backend runs at one length give the advice table"
    rows, tables = answer(run_cli, "scale", *traces, *forced, "--gpu", "H200")
    assert_all_tables_under_their_titles(rows, tables)
    titles = [r[0] for r in rows[1:]]
    assert titles.count("Backend advice (forced-backend runs)") == 1, "one shape: one advice row"
    assert titles.count("Allocator replay against the recorded Total Reserved") == len(traces) + len(forced)
    scaled = [int(s) for s in column(rows, "S", "Scaling with sequence length")]
    assert sorted(set(scaled)) == lengths, scaled


def test_predict_csv_has_one_row_per_asked_length(run_cli):
    rows, tables = answer(run_cli, "predict", "--model", "gpt2", "--lengths", "512,1024,4096")
    assert_all_tables_under_their_titles(rows, tables)
    assert column(rows, "S", "") == ["512", "1024", "4096"]


def safetensors_bytes(tensors):
    """A safetensors file of F32 tensors (8-byte little-endian header length, JSON header, data)."""
    header, data = {}, b""
    for name, (shape, values) in tensors.items():
        raw = struct.pack(f"<{len(values)}f", *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def test_heads_csv_of_uniform_attention_has_the_values_worked_by_hand(run_cli, tmp_path):
    # q = k = 0: every one of the 8 keys gets weight 1/8 (docs/heads.md, section 2).
    B, H, S, D = 1, 2, 8, 4
    zeros = ([B, H, S, D], [0.0] * (B * H * S * D))
    path = tmp_path / "uniform.safetensors"
    path.write_bytes(safetensors_bytes({"layers.0.q": zeros, "layers.0.k": zeros}))
    rows, tables = answer(run_cli, "heads", path, "--sink-tokens", "2", "--special-tail", "0")
    assert_one_table(rows, tables)
    assert rows[0] == ["layer", "head", "entropy", "max weight", "sink/special", "output share", "blocks @95%",
                       "sink+window", "kind"]
    for head, row in enumerate(rows[1:]):
        # entropy / log n = 1 (uniform); max weight 1/8; 2 sink keys of 8 = 25%; no V: no output
        # share; one 64-block holds all the mass; the 256-token recall window sees every key.
        assert row[:8] == ["0", str(head), "1.000", "0.125", "25.0%", "-", "100.0%", "100.0%"], row
    assert len(rows) == 1 + H


def test_heads_csv_of_a_trace_is_the_header_alone(run_cli, fixtures_dir):
    trace = fixtures_dir / "h200-torch2.11" / "traces" / "gpt2_sdpa_fp16_b8_s1024.pt.trace.json.gz"
    rows = csv_rows(run_cli("heads", trace, "--csv", "-", check_code=0).stdout)
    assert rows == [["layer", "head", "entropy", "max weight", "sink/special", "output share", "blocks @95%",
                     "sink+window", "kind"]]


def test_explain_csv_is_its_markdown_table_one_row_per_failed_rule(run_cli):
    rows, tables = answer(run_cli, "explain", "--q", "2,8,256,100", "--mask", "bool", "--arch", "sm90")
    assert_one_table(rows, tables)
    assert rows[0] == ["backend", "verdict", "rule", "value", "why", "fix"]
    flash = [r for r in rows[1:] if r[0] == "flash"]
    assert flash and all(r[1] == "rejected" and r[2].startswith("flash.") and r[4] for r in flash), flash
    # A boolean mask: flash takes no attn_mask tensor, so that rule fails with the mask kind as value.
    assert ["flash.attn_mask", "attn_mask=bool"] in [r[2:4] for r in flash], flash
    math = [r for r in rows[1:] if r[0] == "math"]
    assert math == [["math", "eligible", "", "", "", ""]]


def test_explain_csv_of_json_lines_fails_before_any_file_is_written(run_cli, tmp_path):
    lines = tmp_path / "in.jsonl"
    lines.write_text(json.dumps({"device": "cpu", "hd": 64, "dtype": "fp32", "Hq": 8, "Hkv": 8, "gqa": False,
                                 "Sq": 128, "Skv": 128, "mask": "none", "causal": False, "dropout": 0.0,
                                 "requires_grad": False}) + "\n")
    out_json, out_csv = tmp_path / "out.json", tmp_path / "out.csv"
    proc = run_cli("explain", "--inputs", lines, "--arch", "cpu", "--json", out_json, "--csv", out_csv)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "not a table" in proc.stderr, proc.stderr
    assert not out_json.exists() and not out_csv.exists()


@pytest.mark.parametrize("args", [("predict", "--model", "gpt2", "--lengths", "512"),
                                  ("explain", "--q", "1,8,128,64", "--arch", "cpu")])
def test_csv_goes_to_a_file_atomically_and_not_to_stdout(run_cli, tmp_path, args):
    out = tmp_path / "t.csv"
    proc = run_cli(*args, "--csv", out, "--quiet", check_code=0)
    assert proc.stdout == ""
    assert out.read_bytes().split(b"\r\n")[0].count(b",") >= 1, "a header line ended by CRLF"
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    unwritable = run_cli(*args, "--csv", blocker / "t.csv")  # its folder is a file
    assert unwritable.returncode == 2 and len(unwritable.stderr.strip().splitlines()) == 1, unwritable.stderr
    assert "cannot write" in unwritable.stderr and blocker.read_text() == ""


def test_diff_csv_holds_each_pairs_metrics_and_per_layer_tables_as_its_markdown(run_cli, fixtures_dir):
    folder = fixtures_dir / "h200-torch2.11" / "traces"
    base, cand = (folder / f"llama7b4l_sdpa_bf16_b4_s{n}.pt.trace.json.gz" for n in (512, 1024))
    csv_proc = run_cli("diff", base, cand, "--csv", "-", check_code=1)  # doubling S is a regression
    md_proc = run_cli("diff", base, cand, "--md", "-", check_code=1)
    rows, tables = csv_rows(csv_proc.stdout), markdown_tables(md_proc.stdout)
    pair = "llama7b4l_sdpa_bf16_b4_s512 vs llama7b4l_sdpa_bf16_b4_s1024"
    titles = [f"{pair}: metrics", f"{pair}: per layer"]  # no ranks table: these are not fleet Reports
    assert [r[0] for r in rows[1:]] == [titles[0]] * 5 + [titles[1]] * 4, "5 metrics, 4 layers"
    # The Markdown's tables sit under the pair's heading; the CSV names each by the pair and its role.
    assert_all_tables_under_their_titles(rows, [(t, header, body) for t, (_, header, body) in zip(titles, tables)])
    assert column(rows, "Gate", titles[0]) == ["ok", "ok", "REGRESSION", "", "REGRESSION"]
    assert column(rows, "Layer", titles[1]) == ["0", "1", "2", "3"]
    assert set(column(rows, "Backend", titles[1])) == {"cudnn"}
    for cell in column(rows, "Device time", titles[1]):  # "32.7 us -> 85.5 us (+161.5%)"
        before, after, pct = map(float, re.fullmatch(r"([\d.]+) us -> ([\d.]+) us \(\+([\d.]+)%\)", cell).groups())
        assert abs(100 * (after / before - 1) - pct) < 0.5, cell  # the delta of the two shown times
