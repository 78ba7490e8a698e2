"""The training-set rows: each registers itself with `row` in a file of `benchmarks.debias.rows`, naming the
configurations it applies to, so a new row is a new function (or file) and no table elsewhere.

A row's function takes ``(train, seed, task)`` (``task``: the configuration's name) and returns the training set:
the original rows plus whatever the row adds, or with a ``sample_weight`` column. Its docstring is its description
(``--list-rows`` prints them). A row may name a probe: a test set built from its output and scored by the ``none``
model only (e.g. the flip rate of generated claims), when both rows are part of the run. What the leaderboard and
the coverage curves need to know of a row is declared here too: its title, the human row of the same source rows it
is compared with, and whether a curve runs it at full coverage only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Row", "ROWS", "row", "title", "describe", "ARCHIVE_CHECKS", "archive_check", "REUSE_KEYS", "reusable"]


@dataclass(frozen=True)
class Row:
    name: str
    make: Callable[..., Any]
    configs: tuple[str, ...]
    #: (the probe's name, a function of the training rows that returns its test set)
    probe: tuple[str, Callable[[Any], Any]] | None = None
    #: How the leaderboard names the row (its name when empty).
    title: str = ""
    #: The row of human counterfactuals of the same source rows, whose gain the leaderboard sets beside this one's.
    same_rows: str | None = None
    #: Whether a coverage curve runs the row only at 100% (its rows are not a seeded prefix of a larger share's).
    full_coverage_only: bool = False

    @property
    def help(self) -> str:
        doc = (getattr(self.make, "__doc__", None) or "").strip()
        return " ".join(doc.split("\n\n")[0].split())


ROWS: dict[str, Row] = {}


def row(name: str, *, configs: tuple[str, ...], probe: tuple[str, Callable[[Any], Any]] | None = None,
        title: str = "", same_rows: str | None = None, full_coverage_only: bool = False
        ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the training-set row ``name`` of ``configs``; ``title``: its name in the
    leaderboard; ``same_rows``: the human row it is compared with on the same source rows; ``full_coverage_only``:
    a coverage curve runs it at 100% only."""
    def register(make: Callable[..., Any]) -> Callable[..., Any]:
        if name in ROWS:
            raise ValueError(f"Training-set row {name!r} is registered twice.")
        ROWS[name] = Row(name, make, tuple(configs), probe, title, same_rows, full_coverage_only)
        return make
    return register


#: The keys of ``--editor-data KEY=FOLDER`` (counterfactuals written earlier, e.g. by the GPU suite on another
#: machine, that a row reads instead of writing them), each registered by the row module that reads it, with what
#: the folder holds.
REUSE_KEYS: dict[str, str] = {}


def reusable(key: str, what: str) -> str:
    """Register ``key`` as a value ``--editor-data`` accepts (``what``: whose counterfactuals it names); returns it."""
    if key in REUSE_KEYS:
        raise ValueError(f"--editor-data key {key!r} is registered twice.")
    REUSE_KEYS[key] = what
    return key


def title(name: str) -> str:
    """How the leaderboard names row ``name`` (a row no longer registered, kept in an old table, by its name)."""
    found = ROWS.get(name)
    return found.title or name if found else name


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
