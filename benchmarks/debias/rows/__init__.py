"""The training-set rows, one family a file; each registers itself (`benchmarks.debias.registry.row`). A new row is a
function in one of these files, or a new file imported here."""

from . import baselines, core, crossaug, editors, icda, presets, race  # noqa: F401  (each registers its rows)
