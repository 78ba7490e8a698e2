"""Benchmarks of cfaug-hf: each module is one benchmark, run from the repository root as
``python -m benchmarks.<name> [options]`` (``--help`` says what it measures and how long it takes), printing a table
and writing its results (JSON and Markdown) into ``benchmarks/results/``. `benchmarks.harness` holds what they share.
"""
