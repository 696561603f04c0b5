"""Readers, importers and checks, over scorer.model (and scorer.metrics for the text-metric checks).

- memeye.py          MemEye-format benchmarks; jsonio.py: the JSON helpers every reader shares
- runs.py            upstream run folders, raw rows kept; row_checks.py: what a reader notices in a
                     row; tasks.py: a run's task resolved against the benchmark's
- lean.py            the column reader: runs straight into the frame (lean_columns.py: the columns;
                     parallel.py: parts read by forked workers; joined_rows.py: the rows the
                     evidence sections read, as the reader hands them over)
- frame.py, join.py  the full reader's frame of joined predictions; rows joined to items
- locomo.py          the LoCoMo importer (locomo_evidence.py, locomo_write.py)
- validate.py        checks of a benchmark and its runs (run_checks.py, text_metrics.py)
- hashes.py          the sha256 of the files a loaded benchmark and its runs were read from
"""
