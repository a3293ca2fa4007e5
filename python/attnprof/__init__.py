"""attnprof: attention profiler for PyTorch transformer models.

    import attnprof
    with attnprof.profile(attention_profile=True) as prof:   # same arguments as torch.profiler.profile
        model(**inputs)
    prof.attention_report().show()

The analysis runs in the C++ core (attnprof._core); this package captures and converts.
"""
from ._core import __version__
from ._core import explain, matrix  # the answers of `attnprof explain` / `attnprof matrix`
from .report import AttentionReport, analyze

__all__ = ["profile", "trace_handler", "analyze", "explain", "matrix", "AttentionReport", "__version__"]

try:
    import torch as _torch  # noqa: F401
except ModuleNotFoundError:
    # An analysis node (a fleet worker, a CI box reading traces) may lack PyTorch: the core,
    # AttentionReport, attnprof.fleet and the CLI work without it; capture needs it.
    _torch = None

if _torch is not None:
    # Other modules register here, one import line each.
    from .profile import profile, trace_handler  # noqa: E402
    from .sweep import sweep  # noqa: E402
    from . import heads  # noqa: E402,F401  (attnprof.heads: Q/K/V capture -> per-head statistics)
    from .compare import compare, DiffVerdict  # noqa: E402  (attnprof.compare: `attnprof diff` in Python)
    from . import testing  # noqa: E402,F401  (attnprof.testing.assert_no_attention_regression)
    from .verify import verify  # noqa: E402  (attnprof.verify: each suggested fix measured on the model)
