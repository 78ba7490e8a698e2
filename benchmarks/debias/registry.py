"""The training-set rows: each registers itself with `row` in a file of `benchmarks.debias.rows`, naming the
configurations it applies to, so a new row is a new function (or file) and no table elsewhere.

A row's function takes ``(train, seed, task)`` (``task``: the configuration's name) and returns the training set:
the original rows plus whatever the row adds, or with a ``sample_weight`` column. Its docstring is its description
(``--list-rows`` prints them). A row may name a probe: a test set built from its output and scored by the ``none``
model only (e.g. the flip rate of generated claims), when both rows are part of the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Row", "ROWS", "row", "describe", "ARCHIVE_CHECKS", "archive_check"]


@dataclass(frozen=True)
class Row:
    name: str
    make: Callable[..., Any]
    configs: tuple[str, ...]
    #: (the probe's name, a function of the training rows that returns its test set)
    probe: tuple[str, Callable[[Any], Any]] | None = None

    @property
    def help(self) -> str:
        doc = (getattr(self.make, "__doc__", None) or "").strip()
        return " ".join(doc.split("\n\n")[0].split())


ROWS: dict[str, Row] = {}


def row(name: str, *, configs: tuple[str, ...], probe: tuple[str, Callable[[Any], Any]] | None = None
        ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the training-set row ``name`` of ``configs``."""
    def register(make: Callable[..., Any]) -> Callable[..., Any]:
        if name in ROWS:
            raise ValueError(f"Training-set row {name!r} is registered twice.")
        ROWS[name] = Row(name, make, tuple(configs), probe)
        return make
    return register


#: ``--check-parts NAME`` -> a function that regenerates the first rows of an archived generation run with this code
#: and, when they are equal, lets the archive serve it (``augmented.record_equivalence``). A row family that archives
#: its generation registers its checks beside its rows, so the command line needs no list of them.
ARCHIVE_CHECKS: dict[str, Callable[[], Any]] = {}


def archive_check(name: str) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Register the decorated function (no arguments; its docstring's first line is its help) as ``--check-parts
    name``."""
    def register(check: Callable[[], Any]) -> Callable[[], Any]:
        if name in ARCHIVE_CHECKS:
            raise ValueError(f"Archive check {name!r} is registered twice.")
        ARCHIVE_CHECKS[name] = check
        return check
    return register


def describe() -> str:
    """Every row, the configurations it applies to and what it is (``--list-rows``)."""
    import textwrap

    out = []
    for r in ROWS.values():
        out.append(f"{r.name}  [{', '.join(r.configs)}]")
        out += textwrap.wrap(r.help, 100, initial_indent="    ", subsequent_indent="    ")
    return "\n".join(out)
