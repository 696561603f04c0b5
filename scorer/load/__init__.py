"""Readers: MemEye benchmarks and runs (memeye.py, runs.py), importers (locomo.py), checks (validate.py)."""
