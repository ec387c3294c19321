"""benchcat: deep-learning benchmark results catalog and report-site generator."""

__version__ = "0.1.0"
