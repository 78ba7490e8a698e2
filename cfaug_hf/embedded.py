"""Small real datasets shipped inside the package, for the demo, examples and tests (no Hub access needed).

See ``cfaug_hf/data/ATTRIBUTION.md`` for their sources and licences (CC BY-SA).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["DATA_DIR", "load_feverous_sample", "load_claim_pairs"]

DATA_DIR = Path(__file__).resolve().parent / "data"


def _load_jsonl(name: str) -> Any:
    from datasets import Dataset

    return Dataset.from_json(str(DATA_DIR / name))


def load_feverous_sample() -> Any:
    """300 FEVEROUS dev claims (200 SUPPORTS, 100 REFUTES), evidence as a list of sentences.

    Columns: ``id``, ``claim``, ``evidence`` (list of strings), ``label`` (SUPPORTS/REFUTES), ``page``,
    ``challenge``. Licence CC BY-SA 3.0.

    >>> ds = load_feverous_sample()
    >>> len(ds), sorted(set(ds["label"]))
    (300, ['REFUTES', 'SUPPORTS'])
    """
    return _load_jsonl("feverous_sample.jsonl")


def load_claim_pairs(origin: str | None = None) -> Any:
    """(positive ``source``, negative ``target``) sentence pairs for training a negative-claim generator.

    ``origin`` selects ``"cad-snli"`` (1866 pairs) or ``"fever-symmetric"`` (137 pairs); None gives both.

    >>> len(load_claim_pairs("fever-symmetric"))
    137
    """
    ds = _load_jsonl("claim_pairs.jsonl")
    if origin is not None:
        known = set(ds.unique("origin"))
        if origin not in known:
            raise ValueError(f"Unknown origin {origin!r}; expected one of {sorted(known)}.")
        ds = ds.filter(lambda o: o == origin, input_columns="origin")
    return ds
