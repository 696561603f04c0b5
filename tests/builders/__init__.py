"""What the tests build, in one place; each builder is named for what it builds.

- benchmarks.py: benchmark folders in the MemEye layout: the mini benchmark (`write_mini_bench`),
  one task of labelled items (`write_labelled_bench`), markup and escapes in every field
  (`write_injection_bench`); media files (`png`, `corrupt_png`, `wav`).
- runs.py: run folders for those benchmarks (`write_mini_run`, `write_labelled_run`) and rows
  (`mcq_row`, `open_row`).
- upstream.py: run folders exactly as the MemEye runner (and its fork) writes them
  (`write_upstream_run`).
- model.py: benchmarks, items, predictions, runs and a scoring context built in memory (scorer.model
  objects of the hand-worked task "T").
- memeye_table.py: the MemEye paper's main table, typed in, and item-level scores that reproduce it.
"""
