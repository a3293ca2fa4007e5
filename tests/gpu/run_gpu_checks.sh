#!/usr/bin/env bash
# Live capture on a CUDA machine (CI never runs this). Profiles the demo models with eager and
# sdpa in bf16 and fp32 on the GPU, writes everything under $OUT (default /tmp/out):
#   $OUT/demo/...            traces, sidecars, reports (python -m attnprof.demo --device cuda)
#   $OUT/capture_summary.json  per run: calls, captured PyTorch choice vs the Report's backend
#   $OUT/verify_gpu.json       attnprof.verify on the GPU: eager -> SDPA, forced math -> default, bf16
#                              autocast of fp32, each a Report's verification section (CUDA events)
#   $OUT/log.txt
# Usage (repo root, attnprof pip-installed in .venv or the current python):
#   OUT=/tmp/out bash tests/gpu/run_gpu_checks.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
nvidia-smi || true
"$PY" - "$OUT" <<'PYEOF'
import json, os, sys, time, traceback
import torch
out = sys.argv[1]
import attnprof
from attnprof import demo
assert torch.cuda.is_available(), "no CUDA device"
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
      torch.cuda.get_device_name(0), flush=True)
summary = []
for dtype in (torch.bfloat16, torch.float32):
    for model in demo._models():
        for attn in ("eager", "sdpa"):
            run = f"{model.name}-{attn}-{str(dtype).removeprefix('torch.')}"
            t0 = time.time()
            try:
                torch.manual_seed(0)
                net = model.build(attn).to("cuda", dtype=dtype if model.name != "vit" else dtype).eval()
                inputs = model.inputs(torch.device("cuda"))
                inputs = {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in inputs.items()}
                with torch.no_grad():
                    net(**inputs)
                    with attnprof.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                      torch.profiler.ProfilerActivity.CUDA],
                                          record_shapes=True, profile_memory=True) as prof:
                        net(**inputs)
                d = os.path.join(out, "runs", run)
                os.makedirs(d, exist_ok=True)
                prof.export_chrome_trace(os.path.join(d, "trace.json"))
                report = attnprof.analyze(os.path.join(d, "trace.json"))
                report.save_json(os.path.join(d, "report.json"))
                report.save_markdown(os.path.join(d, "report.md"))
                calls = [{"module": c["module"], "backend": c["backend"], "kernels": [k["name"][:80] for k in c["kernels"]],
                          "choice": (c.get("capture") or {}).get("pytorch_choice"),
                          "predicted": (c.get("explanation") or {}).get("predicted_backend"),
                          "consistent": (c.get("explanation") or {}).get("consistent")} for c in report.calls]
                summary.append({"run": run, "seconds": round(time.time() - t0, 2), "captured": len(prof.capture.records),
                                "calls": calls, "missing": report.source["missing"]})
                print(run, "ok", len(calls), "calls", {c["backend"] for c in calls}, flush=True)
            except Exception:
                summary.append({"run": run, "error": traceback.format_exc()})
                print(run, "FAILED", traceback.format_exc(), flush=True)
json.dump(summary, open(os.path.join(out, "capture_summary.json"), "w"), indent=1)
PYEOF
"$PY" - "$OUT" <<'PYEOF'
import json, os, sys, traceback
import torch, transformers as tf
from torch.nn.attention import SDPBackend, sdpa_kernel
import attnprof
out, results = sys.argv[1], {}
cfg = dict(hidden_size=1024, num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=16,
           intermediate_size=2816, vocab_size=1000, max_position_embeddings=4096)
def llama(attn, dtype):
    torch.manual_seed(0)
    return tf.LlamaForCausalLM(tf.LlamaConfig(attn_implementation=attn, **cfg)).to("cuda", dtype)
ids = torch.randint(0, 1000, (4, 2048), generator=torch.Generator().manual_seed(0)).cuda()
cases = {"eager_bf16": lambda: attnprof.verify(llama("eager", torch.bfloat16), {"input_ids": ids}, repeats=10),
         "forced_math_bf16": lambda: _forced(), "autocast_fp32": lambda: attnprof.verify(
             llama("sdpa", torch.float32), {"input_ids": ids}, fixes=["autocast_bf16"], repeats=10)}
def _forced():
    with sdpa_kernel(SDPBackend.MATH):
        return attnprof.verify(llama("sdpa", torch.bfloat16), {"input_ids": ids}, repeats=10)
for name, case in cases.items():
    try:
        results[name] = case().data["verification"]
        print(name, [(f["fix"], f["verdict"], round(f["speedup"], 2), f["speedup_ci"]) for f in results[name]["fixes"]], flush=True)
    except Exception:
        results[name] = {"error": traceback.format_exc()}
        print(name, "FAILED", results[name]["error"], flush=True)
json.dump(results, open(os.path.join(out, "verify_gpu.json"), "w"), indent=1)
PYEOF
"$PY" -m attnprof.demo --out "$OUT/demo" --device cuda --quiet || echo "demo failed: $?"
"$PY" -m pytest -q -x tests/test_capture_models.py -k "not naive" > "$OUT/pytest_cpu_capture.txt" 2>&1 || true
echo "done; see $OUT/capture_summary.json"
