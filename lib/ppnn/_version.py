"""The package's version (``ppnn.__version__``), in a module of its own so that library code
(e.g. the ONNX exporter's producer version) can read it without importing the root package.
"""

__version__ = "0.1.0"
