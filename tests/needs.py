"""What some tests read from ``../shared`` beside the clone (the benchmark data, the papers), found in one place.

Where it is absent the test is skipped with the reason, so the README's test command passes on any clean clone;
under ``CI=true`` a missing folder fails the test instead, so CI never goes green by skipping what it should check.
``CFAUG_SHARED_DATA`` points at the data folder elsewhere (the papers are looked for beside it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared_data() -> Path:
    """The benchmark data folder (``../shared/data`` or ``$CFAUG_SHARED_DATA``) holding its MANIFEST.md."""
    data = Path(os.environ.get("CFAUG_SHARED_DATA", ROOT.parent / "shared" / "data"))
    return data if (data / "MANIFEST.md").is_file() else missing(f"the benchmark data ({data})")


def shared_papers() -> Path:
    """The papers folder beside the data (``../shared/papers``)."""
    data = os.environ.get("CFAUG_SHARED_DATA")
    folder = (Path(data).parent if data else ROOT.parent / "shared") / "papers"
    return folder if folder.is_dir() else missing(f"the papers ({folder})")


def missing(what: str):
    reason = f"{what}: not found (../shared beside the clone, or CFAUG_SHARED_DATA)"
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"{reason}: under CI=true a missing folder is a failure, not a skip", pytrace=False)
    pytest.skip(reason)
