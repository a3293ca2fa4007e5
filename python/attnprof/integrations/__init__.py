"""Integrations with the Hugging Face stack, each imported on its own so that ``import attnprof``
needs neither transformers nor accelerate:

- ``attnprof.integrations.transformers.AttentionProfilerCallback``: a Trainer callback;
- ``attnprof.integrations.accelerate.AttentionProfileKwargs``: ``accelerator.profile()`` with
  the attention capture.

Pipelines need no integration: ``attnprof.profile`` around a ``pipeline(...)`` call works as is
(docs/python.md).
"""
