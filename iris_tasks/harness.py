"""Former name of :mod:`iris_tasks.scoring` (the IRIS understanding tasks' lmms-eval entry points), kept only for
the modules that still import it (``iris_tasks.cli``, ``tests/iris/test_iris_corpus.py``); it goes once they import
:mod:`iris_tasks.scoring`, as the other benchmarks name their hook module."""

from __future__ import annotations

from iris_tasks.scoring import doc_to_visual, process_results, read_reply

__all__ = ["doc_to_visual", "process_results", "read_reply"]
