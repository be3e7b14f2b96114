"""Renderers of the report model and of what commands show: one module per output."""
