"""The paper's and the seed papers' experiments as grids of verifications (Fig. 8, Tables
II and III: :mod:`nice_attendre.benchmarks.experiments`; the protocol variants:
:mod:`nice_attendre.benchmarks.variants_bench`), and the performance suite run as scripts
(``python benchmarks/perf.py``, ``memory.py``, ``scaling.py``, ``nice_hash.py``).
Installed as ``nice_attendre.benchmarks``."""
