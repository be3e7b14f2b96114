"""arraybench: storage benchmarking campaigns driven by fio."""

__version__ = "0.1.0"
