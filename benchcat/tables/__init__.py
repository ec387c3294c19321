"""Legacy markdown result tables -> records: grammar, interpretation, and the catalog import."""

from .importer import ImportReport, import_tables, mapping_skeleton, report_lines
from .interpret import Interpretation, interpret
from .mapping import Mapping, load_mapping

__all__ = ["ImportReport", "Interpretation", "Mapping", "import_tables", "interpret", "load_mapping",
           "mapping_skeleton", "report_lines"]  # fmt: skip
