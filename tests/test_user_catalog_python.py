"""attnprof.analyze(..., kernels=, gpu_spec=) reads the same user files as the CLI's --kernels and
--gpu-spec, with the same answer: a kernel the built-in catalog does not know becomes a call."""
import gzip
import json

import attnprof

KERNELS = {
    "kernels": [{"pattern": "acme_dot_product", "match": "prefix", "library": "acme_kernels", "vendor": "amd",
                 "backend": "external", "direction": "forward"}],
    "ops": [{"name": "acme::dot_product_fwd", "library": "acme", "layout": "BHSD",
             "args": {"query": 0, "key": 1, "value": 2, "dropout": 3, "causal": 4, "scale": 6}}],
}


def renamed_trace(fixtures_dir, tmp_path):
    """The compiled-flash fixture with its attention op, inner op and kernel renamed to names no
    built-in catalog entry knows."""
    text = gzip.open(fixtures_dir / "tracelens" / "torch_compile_triton_trace.json.gz", "rt").read()
    for old, new in (("aten::_scaled_dot_product_flash_attention", "acme::dot_product_fwd"),
                     ("aten::_flash_attention_forward", "acme::dot_product_impl"),
                     ('"attn_fwd"', '"acme_dot_product_kernel"')):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "custom.json"
    path.write_text(text)
    return path


def test_python_kernels_file_gives_the_clis_calls(fixtures_dir, tmp_path, run_cli):
    trace = renamed_trace(fixtures_dir, tmp_path)
    kernels = tmp_path / "kernels.json"
    kernels.write_text(json.dumps(KERNELS))
    assert attnprof.analyze(str(trace)).calls == []
    calls = attnprof.analyze(str(trace), kernels=kernels).calls
    assert len(calls) == 1 and calls[0]["library"] == "acme_kernels" and calls[0]["op"] == "acme::dot_product_fwd"
    # B=8, Hq=16, S=4096, D=128 as the fixture records them: 2 * B * H * (D + Dv) * S * S
    assert calls[0]["flops_useful"] == 2 * 8 * 16 * 256 * 4096 * 4096
    out = tmp_path / "cli.json"
    run_cli("analyze", str(trace), "--kernels", str(kernels), "--json", str(out), "--quiet", check_code=0)
    assert json.loads(out.read_text())["calls"][0]["flops_useful"] == calls[0]["flops_useful"]


def test_python_gpu_spec_file_replaces_the_datasheet_ceilings(fixtures_dir, tmp_path):
    spec = tmp_path / "gpu.toml"
    spec.write_text('name = "my H100"\nbandwidth_gbs = 1000\n[tflops]\nbf16 = 100\n')
    trace = fixtures_dir / "tracelens" / "torch_compile_triton_trace.json.gz"
    mine = attnprof.analyze(str(trace), gpu_spec=spec).data
    assert "my H100" in json.dumps(mine)
    bad = tmp_path / "bad.json"
    bad.write_text('{"bandwidth_gbs": -1}')
    try:
        attnprof.analyze(str(trace), gpu_spec=bad)
    except ValueError as e:
        assert "bad.json" in str(e)
    else:
        raise AssertionError("a bad GPU spec must raise")
