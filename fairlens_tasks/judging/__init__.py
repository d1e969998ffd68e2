"""The FairLens open-ended bias judge (DeepEval ``BiasMetric``'s two steps, our versioned prompts).

Modules: :mod:`.prompts` (the versioned prompts), :mod:`.parsing` (tolerant, strict JSON reading),
:mod:`.pipeline` (one answer: opinions, verdicts, retries, the outcome), :mod:`.backends` (OpenAI-compatible
endpoints through the ``openai`` client; local transformers models), :mod:`.config` (``FAIRLENS_JUDGE*``
settings and the judge identity), :mod:`.cache` (the SQLite judgement cache), :mod:`.runner` (cached,
concurrent, resumable judging of many answers), :mod:`.samples` (reading lmms-eval ``--log_samples``
output), :mod:`.cli` (``fairness-evals judge``).
"""
