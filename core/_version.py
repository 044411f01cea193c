"""The single place the version lives; setuptools reads it at build time."""

__version__ = "0.1.0"
