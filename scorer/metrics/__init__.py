"""Pure metric functions over arrays and DataFrames: no file I/O, no printing."""
