"""The version of godevarrow: the single source, read by pyproject.toml too."""

__version__ = "0.1.0"
