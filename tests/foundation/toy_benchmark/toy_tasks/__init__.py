"""A toy fourth benchmark: 24 questions about who holds a job, each with a stereotyped answer, a counter-stereotyped
one and "cannot be determined". It is the worked example of ``docs/adding_a_benchmark.md`` and is installed only by
``tests/foundation/test_toy_benchmark.py`` (copied into a temporary folder, with a ``.dist-info`` that registers it)."""
