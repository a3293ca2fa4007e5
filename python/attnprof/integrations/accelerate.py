"""``accelerate`` integration: ``accelerator.profile()`` with the attention capture.

    from accelerate import Accelerator
    from accelerate.utils import ProfileKwargs
    from attnprof.integrations.accelerate import profile
    accelerator = Accelerator(kwargs_handlers=[ProfileKwargs(record_shapes=True)])
    with profile(accelerator) as prof:          # instead of: with accelerator.profile() as prof:
        train()
    attnprof.analyze(prof).show()

``profile(accelerator)`` runs ``accelerator.profile()`` with the accelerator's ``ProfileKwargs``
(or the one given), every field kept, and yields an ``attnprof.profile``. With
``output_trace_dir`` accelerate exports the trace there as ``profile_<process index>.json``;
attnprof writes the capture sidecar beside it and ``attnprof.analyze(prof)`` reads that file.
accelerate is imported here, never by ``import attnprof``.
"""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

import torch
from accelerate.utils import ProfileKwargs

from ..profile import profile as attnprof_profile

# ProfileKwargs fields that are not torch.profiler.profile arguments of the same name.
_CONVERTED = {"activities", "schedule_option", "output_trace_dir"}


@dataclass
class AttentionProfileKwargs(ProfileKwargs):
    """``ProfileKwargs`` whose ``build()`` makes an ``attnprof.profile`` (attention capture on);
    pass it to ``accelerator.profile(...)``. (``Accelerator(kwargs_handlers=...)`` accepts only
    accelerate's own classes: keep ``ProfileKwargs`` there and use ``profile(accelerator)``.)"""

    heads: bool = False

    @classmethod
    def of(cls, kwargs: ProfileKwargs, heads: bool = False) -> "AttentionProfileKwargs":
        """The same settings as ``kwargs``, with the capture."""
        return cls(**{f.name: getattr(kwargs, f.name) for f in dataclasses.fields(ProfileKwargs)}, heads=heads)

    def build(self) -> attnprof_profile:
        torch_kwargs = {f.name: getattr(self, f.name) for f in dataclasses.fields(ProfileKwargs)
                        if f.name not in _CONVERTED}
        activities = None if self.activities is None else [self._get_profiler_activity(a) for a in self.activities]
        schedule = None if self.schedule_option is None else torch.profiler.schedule(**self.schedule_option)
        return attnprof_profile(activities=activities, schedule=schedule, heads=self.heads, attention_profile=True,
                                **torch_kwargs)


@contextmanager
def profile(accelerator: Any, profile_handler: ProfileKwargs | None = None, heads: bool = False) -> Iterator[attnprof_profile]:
    """``accelerator.profile(profile_handler)`` with the attention capture added."""
    handler = profile_handler or accelerator.profile_handler or ProfileKwargs()
    with accelerator.profile(AttentionProfileKwargs.of(handler, heads=heads)) as prof:
        yield prof
