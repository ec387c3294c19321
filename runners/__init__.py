"""Runners: one module per framework, each run inside that framework's own environment."""
