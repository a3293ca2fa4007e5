"""Helper, not tests: a tiny Chrome DevTools Protocol client over --remote-debugging-pipe, for the
dashboard tests and bench/dashboard_bench.py: open a file in headless Chromium, wait for the dashboard
to draw, collect console errors and uncaught exceptions, evaluate JavaScript, take a screenshot."""
from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium process with one page, driven through fds 3 (in) and 4 (out)."""

    def __init__(self, width: int = 1400, height: int = 1000):
        binary = chromium_binary()
        if binary is None:
            raise RuntimeError("chromium is not installed (it is in the Makefile's APT_PACKAGES)")
        self._profile = tempfile.mkdtemp(prefix="attnprof-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire_pipes():  # runs in the child before exec: CDP wants fd 3 (read) and 4 (write)
            # Move both ends out of the way first: a pipe end may itself be fd 3 or 4.
            read_end, write_end = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(read_end, 3)  # dup2 makes the target inheritable
            os.dup2(write_end, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--disable-gpu", "--no-sandbox", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--allow-file-access-from-files", f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=wire_pipes)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next_id = 0
        self._responses: dict[int, dict] = {}
        self._messages: queue.Queue = queue.Queue()
        self.events: list[dict] = []
        threading.Thread(target=self._read_loop, daemon=True).start()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.call(domain, session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def _read_loop(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_chrome, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self._messages.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self._messages.put(json.loads(raw))

    def _pump(self, timeout: float) -> bool:
        try:
            msg = self._messages.get(timeout=timeout)
        except queue.Empty:
            return False
        if msg is None:
            raise RuntimeError("chromium closed the DevTools pipe")
        if "id" in msg:
            self._responses[msg["id"]] = msg
        else:
            self.events.append(msg)
        return True

    def call(self, method: str, params: dict | None = None, session: bool = False, timeout: float = 60):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while self._next_id not in self._responses:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no answer to {method}")
            self._pump(0.1)
        answer = self._responses.pop(self._next_id)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluate failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, path: Path, ready_timeout: float = 30) -> float:
        """Navigates to the file and waits for the dashboard's data-ready mark; returns seconds."""
        start = time.monotonic()
        self.call("Page.navigate", {"url": path.resolve().as_uri()}, session=True)
        deadline = start + ready_timeout
        while time.monotonic() < deadline:
            ready = self.evaluate("document.readyState === 'complete' && "
                                  "!!document.body && document.body.getAttribute('data-ready') === '1'")
            if ready:
                return time.monotonic() - start
            if self.errors():
                break
            time.sleep(0.02)
        raise TimeoutError(f"dashboard did not finish drawing; errors: {self.errors()}")

    def errors(self) -> list[str]:
        """Uncaught exceptions, console.error/assert calls and error-level log entries."""
        for _ in range(50):  # drain what already arrived
            if not self._pump(0.01):
                break
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(json.dumps(params.get("args", []))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(params["entry"].get("text", "")[:500])
        return out

    def screenshot(self, path: Path, selector: str | None = None, scale: float = 1.0):
        """The whole page, or the element `selector` matches, at `scale` (0.5: half size)."""
        params = {"format": "png", "captureBeyondViewport": True}
        if selector is not None or scale != 1.0:
            box = json.loads(self.evaluate(
                "(() => { const e = " + (f"document.querySelector({json.dumps(selector)})" if selector else
                                          "document.documentElement") +
                "; const r = e.getBoundingClientRect(); return JSON.stringify({x: r.left + scrollX, "
                "y: r.top + scrollY, width: Math.max(r.width, e.scrollWidth), height: Math.max(r.height, e.scrollHeight)}); })()"))
            params["clip"] = dict(box, scale=scale)
        data = self.call("Page.captureScreenshot", params, session=True)
        path.write_bytes(base64.b64decode(data["data"]))

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:  # noqa: BLE001 - closing is best effort; the process is killed below
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def keep_screenshot(path: Path):
    """ATTNPROF_SCREENSHOT_DIR=dir keeps the screenshots for a person to look at."""
    target = os.environ.get("ATTNPROF_SCREENSHOT_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)


# Facts about the drawn dashboard, read from the DOM.
DOM_FACTS = """JSON.stringify({
  title: document.title,
  sections: [...document.querySelectorAll('section[data-section]')].map(s => s.id),
  why: Object.fromEntries([...document.querySelectorAll('section[data-section]')].map(
    s => [s.id, s.querySelector('p.why') ? s.querySelector('p.why').textContent : null])),
  cells: [...document.querySelectorAll('#activation-map-svg rect.cell')].map(r => ({
    layer: Number(r.dataset.layer), component: r.dataset.component, cls: r.dataset.class,
    fill: r.getAttribute('fill')})),
  attentionNodes: [...document.querySelectorAll('#model-graph-svg g.node.attention')].map(g => ({
    path: g.dataset.path, cls: g.dataset.class})),
  images: document.images.length,
  scripts: document.scripts.length,
  bodyText: document.body.innerText,
  svgText: [...document.querySelectorAll('svg text')].map(t => t.textContent).join('\\n'),
  pwned: window.pwned === true,
  renderMs: window.attnprofRenderMs,
})"""


# --- Reports for the renderer tests, built from the kernels of real H200 traces -------------------
# (kernel names, timestamps and correlation ids are the trace's; the call grouping mirrors what the
# extraction stage finds in these traces: one cuDNN kernel per layer, or QK^T gemm + softmax + AV gemm).

import gzip  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
CUDNN_TRACE = FIXTURES / "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz"
EAGER_TRACE = FIXTURES / "h200-torch2.11/traces/llama7b4l_eager_bf16_b4_s512.pt.trace.json.gz"


def load_kernels(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    return sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])


def kernel_ref(e: dict, component: str) -> dict:
    return {"name": e["name"], "component": component, "ts_ns": round(e["ts"] * 1000),
            "device_time_us": e["dur"], "stream": e["args"]["stream"], "correlation": e["args"]["correlation"]}


def _report(path: Path, calls: list[dict], device: str = "NVIDIA H200") -> dict:
    layers = []
    for c in calls:
        c["device_time_us"] = sum(k["device_time_us"] for k in c["kernels"])
        layers.append({"index": c["layer"], "module": c["module"], "backends": [c["backend"]],
                       "call_ids": [c["id"]], "fused_time_fraction": 1.0 if c["fused"] else 0.0,
                       "device_time_us": c["device_time_us"]})
    total = sum(c["device_time_us"] for c in calls)
    fused = sum(c["device_time_us"] for c in calls if c["fused"])
    return {"schema_version": "1.0", "tool_version": "test",
            "source": {"files": [str(path)], "device_name": device, "arch": "sm90"},
            "calls": calls, "layers": layers,
            "summary": {"call_count": len(calls), "fused_call_count": sum(c["fused"] for c in calls),
                        "fused_time_fraction": fused / total if total else 0.0,
                        "fused_call_fraction": sum(c["fused"] for c in calls) / len(calls) if calls else 0.0,
                        "attention_device_time_us": total, "has_gpu": True},
            "findings": []}


def _call(i: int, backend: str, fused: bool, kernels: list[dict]) -> dict:
    return {"id": i, "layer": i, "module": f"model.layers.{i}.self_attn", "backend": backend, "fused": fused,
            "direction": "forward", "op": "aten::scaled_dot_product_attention", "kernels": kernels,
            "shape": {"B": 4, "Hq": 32, "Hkv": 32, "Sq": 2048, "Skv": 2048, "D": 128, "Dv": 128, "dtype": "bf16"}}


def cudnn_report() -> dict:
    """The 4 cuDNN attention kernels of the Llama-7B-dims trace, one fused call per layer."""
    kernels = [e for e in load_kernels(CUDNN_TRACE) if "cudnn" in e["name"]]
    return _report(CUDNN_TRACE, [_call(i, "cudnn", True, [kernel_ref(e, "fused")]) for i, e in enumerate(kernels)])


def eager_report() -> dict:
    """The eager trace: per layer the QK^T gemm before each softmax, the softmax, the AV gemm after."""
    kernels = load_kernels(EAGER_TRACE)
    calls = []
    for i, e in enumerate(kernels):
        if "softmax" not in e["name"]:
            continue
        qk = next(k for k in reversed(kernels[:i]) if k["name"].startswith("nvjet"))
        av = next(k for k in kernels[i + 1:] if k["name"].startswith("nvjet"))
        calls.append(_call(len(calls), "eager", False,
                           [kernel_ref(qk, "qk"), kernel_ref(e, "softmax"), kernel_ref(av, "av")]))
    return _report(EAGER_TRACE, calls)


def original_trace_event_count(path: Path) -> int:
    with gzip.open(path, "rt") as f:
        return len(json.load(f)["traceEvents"])
