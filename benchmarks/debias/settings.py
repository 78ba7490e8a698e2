"""What one run of ``python -m benchmarks.debias`` is steered by: set from its options by `benchmarks.debias.run`,
read by the rows when they build their training sets."""

from __future__ import annotations

from typing import Any

from benchmarks.harness import CACHE, RESULTS

__all__ = ["CACHE", "RESULTS", "REUSE", "COMMIT", "PARTS_ARCHIVE", "EQUIVALENT", "AUGMENT_LIMIT", "EDITOR_LIMIT",
           "NOTES"]

#: Counterfactuals written earlier, reused instead of generating (``--crossaug-data``, ``--editor-data``,
#: ``--core-editor-data``): "crossaug", and per editor row its key ("sentiment", "nli_q1", "core_sentiment").
REUSE: dict[str, str] = {}
#: The commit a copy of the tree run elsewhere measured (``--commit``).
COMMIT: str | None = None
#: Committed copies of the editors' finished generation parts (the cache is not kept between sessions).
PARTS_ARCHIVE = RESULTS / "editor_parts"
#: Augmenter fingerprints (first 12 hex digits) whose output was checked equal to an archived older one's
#: (``--check-parts TASK``): their parts are restored from the older archive. A fingerprint covers the library's
#: code, so a refactoring that changes no output would otherwise throw hours of generation away.
EQUIVALENT = PARTS_ARCHIVE / "equivalent.json"
#: ``--augment-limit``: CORE, CrossAug and RACE edit only this many training rows (a seeded sample), a CPU-sized run.
AUGMENT_LIMIT: int | None = None
#: ``--editor-limit``: the rows the learned editors rewrite (default AUGMENT_LIMIT).
EDITOR_LIMIT: int | None = None
#: What a row's augmentation did (counts, words the balancing filter blocked), recorded in the results.
NOTES: dict[str, Any] = {}
