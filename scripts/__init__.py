"""What builds the data and models the wheel ships (``python -m scripts.<name>``); imports nothing from
``benchmarks``."""
