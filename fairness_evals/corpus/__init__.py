"""Image-corpus machinery that the FairLens and IRIS understanding tasks share.

Both read a face corpus from a folder, a CSV / JSON-lines / JSON manifest or a Hugging Face dataset
(``hf:NAME``), configured by environment variables (``FAIRLENS_*``, ``IRIS_*``) or the matching
command-line options, and both name every bad item. What they read alike lives here; what differs (the
corpus kinds, the labels, the sampling) stays in the benchmarks that read a face corpus, which pass
in their variable and option names so that every message keeps naming the setting the user gave.

- :mod:`fairness_evals.corpus.settings`: the setting parsers (bad-input mode, corpus location, column map, label map);
- :mod:`fairness_evals.corpus.labels`: reading one label value through the user's label map;
- :mod:`fairness_evals.corpus.sources`: an entry (each benchmark adds its labels) and a scan, a bad item and the
  message that stops a run on bad items, the folder scan (file links out of the folder are bad items), CSV / JSON
  manifests and UTF-8 text, Hugging Face datasets and their label columns;
- :mod:`fairness_evals.corpus.hub`: Hugging Face datasets opened once per process, images as encoded bytes;
- :mod:`fairness_evals.corpus.integrity`: the integrity check of an image (corrupt, truncated, over the pixel limit,
  under the minimum face size), memoised per file version;
- :mod:`fairness_evals.corpus.evaluated`: an evaluated image and corpus, its counts, and the stop-or-skip decision;
- :mod:`fairness_evals.corpus.sampling`: the stratified allocation and the round-robin order;
- :mod:`fairness_evals.corpus.images`: decoding, the bounded decode cache and its process-wide, environment-sized
  instance, a file's version.
"""
