"""The Report names options by concept, never by one front end's spelling: the CLI's `--torch`
or `--memory-cap` would be wrong advice to a Python user reading the same Report."""
import re

CLI_SPELLING = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from texts(v)


def test_reports_of_real_traces_spell_no_cli_option(run_cli, fixtures_dir, tmp_path):
    import json
    traces = sorted(fixtures_dir.glob("h200-torch2.11/traces/*.json*"))[:6] + \
        sorted(fixtures_dir.glob("tracelens/*.json*"))[:3]
    assert traces, "fixture traces"
    for trace in traces:
        out = tmp_path / "r.json"
        run_cli("analyze", str(trace), "--json", str(out), "--quiet", check_code=0)
        found = [t for t in texts(json.loads(out.read_text())) if CLI_SPELLING.search(t)]
        assert not found, (trace.name, found[:3])
    scale = tmp_path / "s.json"
    run_cli("predict", "--model", "llama-2-7b", "--memory-cap", "24GiB", "--json", str(scale), check_code=0)
    found = [t for t in texts(json.loads(scale.read_text())) if CLI_SPELLING.search(t)]
    assert not found, found[:3]
