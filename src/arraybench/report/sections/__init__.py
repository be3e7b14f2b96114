"""The run report's sections, one module each; their order: registry.py."""
