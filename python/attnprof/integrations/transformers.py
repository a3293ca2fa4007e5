"""``transformers.Trainer`` integration: profile chosen training steps, write a Report per
profiled step, log headline scalars through the Trainer's own logging.

    from attnprof.integrations.transformers import AttentionProfilerCallback
    trainer = Trainer(model=model, args=args, train_dataset=train)
    trainer.add_callback(AttentionProfilerCallback(trainer, wait=1, warmup=1, active=2))
    trainer.train()   # -> <output_dir>/attnprof/step-3.report.json, .html, ... + "attnprof/..." logs

transformers is imported here, never by ``import attnprof``.
"""
from __future__ import annotations

import os
import warnings
from typing import Any, Callable

import torch
from transformers import TrainerCallback

from ..compare import compare
from ..profile import profile
from ..report import AttentionReport

_Action = torch.profiler.ProfilerAction
_RECORDING = (_Action.RECORD, _Action.RECORD_AND_SAVE)


def per_step_schedule(wait: int, warmup: int, active: int, repeat: int, skip_first: int) -> Callable[[int], Any]:
    """torch.profiler.schedule with every active step saved on its own (one trace, one Report
    per profiled step, rather than one per cycle of ``active`` steps)."""
    cycle = torch.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)

    def action(step: int):
        found = cycle(step)
        return _Action.RECORD_AND_SAVE if found in _RECORDING else found

    return action


class AttentionProfilerCallback(TrainerCallback):
    """Profiles the training steps torch's ``schedule(wait, warmup, active, repeat, skip_first)``
    picks (counted in optimizer steps from the start of training) with ``attnprof.profile``.

    Per profiled step N it writes, into ``output_dir`` (default ``<args.output_dir>/attnprof``):
    ``step-N.pt.trace.json`` (+ capture sidecar), ``step-N.report.json`` and ``step-N.html``
    (``-rank-R`` is added before the suffix when the run has several processes), and logs with
    ``trainer.log`` (so they reach ``log_history`` and every ``report_to`` integration):

    - ``attnprof/fused_time_fraction``, ``attnprof/attention_share``,
      ``attnprof/attention_device_time_us``: the Report's ``summary``;
    - ``attnprof/peak_attention_memory_bytes``: the largest ``layers[].cost.peak_bytes``;
    - ``attnprof/regression``: 1.0 when ``attnprof.compare`` (the ``attnprof diff`` verdict with
      its default thresholds) finds this step worse than the first profiled step, else 0.0
      (from the second profiled step on).

    The profiler, the capture hooks and the SDPA wrapper exist only from the first
    warm-up step of a window to its last active step: the other steps run exactly as without
    the callback. ``profiler_kwargs`` go to ``attnprof.profile`` (``activities``,
    ``record_shapes``, ``profile_memory``, ``with_stack``, ``heads`` ...).

    With ``verify=True``, once training ends, ``attnprof.verify`` applies each fix the last
    profiled step's findings suggest to the model, timed on the first training batch
    (``verify_options`` go to it: ``fixes``, ``repeats``, ``warmup``), and writes
    ``verified.report.json`` and ``verified.html`` beside the steps' files (``self.verification``).
    """

    def __init__(self, trainer: Any, *, wait: int = 1, warmup: int = 1, active: int = 2, repeat: int = 1,
                 skip_first: int = 0, output_dir: str | os.PathLike | None = None, verify: bool = False,
                 verify_options: dict | None = None, **profiler_kwargs: Any) -> None:
        self.trainer = trainer
        self.verify, self.verify_options = verify, dict(verify_options or {})
        self.verification: AttentionReport | None = None
        self.output_dir = None if output_dir is None else os.fspath(output_dir)
        self.profiler_kwargs = {"record_shapes": True, "profile_memory": True, **profiler_kwargs}
        self._action = per_step_schedule(wait, warmup, active, repeat, skip_first)
        self._prof: profile | None = None
        self._step = 0                       # global step being profiled (1-based, as the Trainer logs)
        self.reports: dict[int, AttentionReport] = {}   # global step -> its Report
        self._first: AttentionReport | None = None
        self._pending: dict[str, float] | None = None  # scalars of the step just saved, not yet logged

    # ---- Trainer events ---------------------------------------------------------------------

    def on_step_begin(self, args, state, control, **kwargs):
        if self._prof is None and self._action(state.global_step) != _Action.NONE:
            first = state.global_step
            self._prof = profile(schedule=lambda s: self._action(first + s), on_trace_ready=self._trace_ready,
                                 **self.profiler_kwargs)
            self._prof.start()
        self._step = state.global_step + 1

    def on_step_end(self, args, state, control, **kwargs):
        if self._prof is None:
            return
        with warnings.catch_warnings():
            # torch's note that a new cycle drops the last one's events: one Report per step is the point.
            warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle.*")
            self._prof.step()  # saves the step that just ended (on_trace_ready) when it was active
        if self._action(state.global_step) == _Action.NONE:
            self._close()
        self._log_pending(control)

    def on_train_end(self, args, state, control, **kwargs):
        if self._prof is not None:  # training ended inside a window: save what was recorded
            self._close()
            self._log_pending(control)
        if self.verify:
            self._verify_fixes()

    # ---- verification at the end ---------------------------------------------------------------

    def _verify_fixes(self) -> None:
        from ..verify import verify
        model = self.trainer.model
        device = next(model.parameters()).device
        batch = next(iter(self.trainer.get_train_dataloader()))
        inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
        latest = self.reports[max(self.reports)] if self.reports else None
        try:
            report = verify(model, inputs, report=latest, **self.verify_options)
        except (ValueError, TypeError, RuntimeError) as e:  # training is done; its Reports stand
            warnings.warn(f"attnprof: verifying the fixes failed ({type(e).__name__}: {e})", RuntimeWarning,
                          stacklevel=2)
            return
        base = os.path.join(os.path.dirname(self._paths()), "verified" + self._rank_suffix())
        report.save_json(base + ".report.json")
        report.save_html(base + ".html")
        self.verification = report

    # ---- one profiled step --------------------------------------------------------------------

    def _close(self) -> None:
        prof, self._prof = self._prof, None
        prof.stop()

    def _paths(self) -> str:
        args = self.trainer.args
        root = self.output_dir or os.path.join(args.output_dir, "attnprof")
        os.makedirs(root, exist_ok=True)
        return os.path.join(root, f"step-{self._step}{self._rank_suffix()}")

    def _rank_suffix(self) -> str:
        args = self.trainer.args
        return f"-rank-{args.process_index}" if args.world_size > 1 else ""

    def _trace_ready(self, prof: profile) -> None:
        base = self._paths()
        prof.export_chrome_trace(base + ".pt.trace.json")
        try:
            report = prof.attention_report()
        except ValueError as e:  # the core's one-line error: the step's Report is lost, training is not
            warnings.warn(f"attnprof: no Report for step {self._step} ({e}); training continues", RuntimeWarning,
                          stacklevel=2)
            return
        report.save_json(base + ".report.json")
        report.save_html(base + ".html")
        self.reports[self._step] = report
        self._pending = self._scalars(report)
        if self._first is None:
            self._first = report

    def _log_pending(self, control) -> None:
        """trainer.log: log_history and every report_to integration. It clears
        control.should_log (the Trainer's own loss log of this step), so that is restored."""
        if self._pending is None:
            return
        scalars, self._pending = self._pending, None
        should_log = control.should_log
        self.trainer.log(scalars)
        control.should_log = should_log

    def _scalars(self, report: AttentionReport) -> dict[str, float]:
        s = report.summary
        peaks = [layer["cost"]["peak_bytes"] for layer in report.layers if layer.get("cost")]
        scalars = {"attnprof/fused_time_fraction": float(s["fused_time_fraction"]),
                   "attnprof/attention_share": float(s["attention_share"]),
                   "attnprof/attention_device_time_us": float(s["attention_device_time_us"]),
                   "attnprof/peak_attention_memory_bytes": float(max(peaks, default=0))}
        if self._first is not None:
            scalars["attnprof/regression"] = 1.0 if compare(self._first, report).regression else 0.0
        return scalars
