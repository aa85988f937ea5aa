"""Renderers: every result's ``to_dicts()`` to terminal tables, CSV, JSON, markdown, LaTeX, HTML."""

from serpeval.report.table import FORMATS, format_cell, render

__all__ = ["FORMATS", "format_cell", "render"]
