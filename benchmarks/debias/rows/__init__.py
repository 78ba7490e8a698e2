"""The training-set rows, one family a file; each registers itself (`benchmarks.debias.registry.row`). A new row is a
function in one of these files, or a new file imported here."""

from __future__ import annotations

from typing import Any

from ..registry import ROWS, title
# each registers its rows
from . import (baselines, core, crossaug, editor_all_targets, editor_premises, editors, icda, presets, race,  # noqa: F401
               until_flipped)


def registered_rows() -> dict[str, Any]:
    """Every training-set row of `benchmarks.debias`, in registration order; each carries its leaderboard title and
    the human row it is compared with on the same source rows (``registry.row``)."""
    return ROWS


def row_title(name: str) -> str:
    """The leaderboard title of row ``name`` (its own name for a row no longer registered)."""
    return title(name)
