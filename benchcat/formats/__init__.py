"""User-declared log formats: a YAML spec instead of a Python collector.

:mod:`.spec` is the spec (pydantic, strict, with errors that point at the bad key);
:mod:`.collector` turns one spec into a :class:`collectors.base.Collector` named ``spec:<name>``.
"""

from .collector import SpecCollector, from_settings, load_collectors
from .spec import FormatSpec, SpecError, load_spec, parse_spec

__all__ = ["FormatSpec", "SpecCollector", "SpecError", "from_settings", "load_collectors", "load_spec", "parse_spec"]
