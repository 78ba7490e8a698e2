"""Bounded work for bounded input: every per-row text function grows about linearly (issue 57, item 3).

Reported: ``cf_change`` diffed words with a quadratic algorithm (one 16.5k-word evidence: 117 s; an evidence list
of 10k pieces: 694 s; a 20k-token numeric table: 160 s for one row). The family: each function a row's text goes
through (`benchmarks.linear_time.CASES`), on repetitive, numeric and varied text (and an evidence list of pieces),
edited in two far-apart places.

What is held here is what no machine's speed moves (issue 80, item 10: a ratio of times failed on a busy machine):
the Python lines each function runs, counted by a tracer, at 2k and at 20k words. Ten times the input may run at
most `LINES` times the lines (linear is 10, n log n about 13; quadratic would be 100). Work done inside C (a regex,
a ``str`` method) is not counted: ``python -m benchmarks.linear_time`` times the functions at 10k and 100k words.
"""

from __future__ import annotations

import sys

import pytest

from benchmarks.linear_time import CASES, _pair
from cfaug_hf.provenance import describe_change

LINES = 15.0


def lines_run(fn, *args) -> int:
    """How many Python lines ``fn(*args)`` runs (every frame's line events)."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        fn(*args)
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize("kind", ["repetitive", "numeric", "varied"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_ten_times_the_input_runs_at_most_fifteen_times_the_lines(name, kind):
    CASES[name](*_pair(kind, 2_000))  # first calls compile regexes and fill caches that later calls reuse
    small = lines_run(CASES[name], *_pair(kind, 2_000))
    large = lines_run(CASES[name], *_pair(kind, 20_000))
    assert large <= LINES * max(small, 100), f"{name} on {kind} text: 10x the words ran {large / max(small, 1):.1f}x the lines"


def test_a_long_edit_is_described_honestly():
    old = " ".join(["the", "film"] * 20_000)
    new = " ".join(["a", "movie"] * 20_000)
    text = describe_change({"t": old}, {"t": new}, ["t"])
    assert text.startswith("t: long edit: 40000 words → 40000 words")
