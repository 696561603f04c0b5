"""memscope's engine: data model, loaders, annotation store, metrics, reports, judge. No UI."""

__version__ = "0.1.0"
