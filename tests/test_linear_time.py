"""Bounded work for bounded input: every per-row text function grows about linearly (issue 57, item 3).

Reported: ``cf_change`` diffed words with a quadratic algorithm (one 16.5k-word evidence: 117 s; an evidence list
of 10k pieces: 694 s; a 20k-token numeric table: 160 s for one row). The family: each function a row's text goes
through, on 10k- and 100k-word inputs of repetitive, numeric and varied text (and an evidence list of pieces), edited
in two far-apart places. Quadratic growth makes ten times the input take a hundred times as long; the test allows
`RATIO` (the issue's target is 12x, which ``benchmarks/linear_time.py`` measures and reports: object-heavy Python
code on 100k words pays for cache misses too). The times are ratios within one run, each the best of runs of both
sizes interleaved, so a slow machine does not fail it; a busy one moved the ratio up to 27.6x (split_sentences on
numeric text beside a fine-tuning job and the rest of the suite, 2026-11-29), hence 40, still far below quadratic.
"""

from __future__ import annotations

import random
import time

import pytest

from cfaug_hf import TaskSchema
from cfaug_hf.provenance import describe_change, source_id
from cfaug_hf.text.meaning import classify_edit
from cfaug_hf.text.sentences import split_sentences
from cfaug_hf.text.spans import _keys, _tokenize, diff_tokens, find_span, tokenize

RATIO = 40.0


def _words(kind: str, n: int) -> list[str]:
    rng = random.Random(n)
    if kind == "repetitive":
        return ["the", "film", "was", "good", "."] * (n // 5)
    if kind == "numeric":
        return [f"{i % 97}.{i % 13}" for i in range(n)]
    return [f"w{rng.randrange(20_000)}" + ("." if rng.random() < 0.05 else "") for _ in range(n)]


def _pair(kind: str, n: int) -> tuple[str, str]:
    old = _words(kind, n)
    new = list(old)
    new[n // 3], new[2 * n // 3] = "NOT", "never"
    return " ".join(old), " ".join(new)


CASES = {
    "describe_change": lambda old, new: describe_change({"t": old}, {"t": new}, ["t"]),
    "describe_change (list of pieces)": lambda old, new: describe_change(
        {"e": old.split(" . ")}, {"e": new.split(" . ")}, ["e"]),
    "classify_edit": classify_edit,
    # tokenize keeps its results (a claim's evidence is searched once per candidate): cleared, so they are computed.
    "diff_tokens": lambda old, new: (_tokenize.cache_clear(), diff_tokens(old, new)),
    "tokenize": lambda old, new: (_tokenize.cache_clear(), tokenize(old)),
    "split_sentences": lambda old, new: split_sentences(old),
    "find_span": lambda old, new: (_tokenize.cache_clear(), _keys.cache_clear(), find_span([old], ["w1", "w2"])),
    "source_id": lambda old, new: source_id({"text": old, "label": 1}, TaskSchema.sentiment()),
}


def ratio(fn, small: tuple[str, str], large: tuple[str, str], runs: int = 5) -> float:
    """Best time on ``large`` over best time on ``small``, the runs of both interleaved."""
    best = {"small": float("inf"), "large": float("inf")}
    fn(*small)  # warm caches (regexes, imports)
    for _ in range(runs):
        for size, args in (("small", small), ("large", large)):
            start = time.perf_counter()
            fn(*args)
            best[size] = min(best[size], time.perf_counter() - start)
    return best["large"] / max(best["small"], 1e-4)  # under 0.1 ms the clock, not the function, is measured


@pytest.mark.parametrize("kind", ["repetitive", "numeric", "varied"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_ten_times_the_input_takes_at_most_twelve_times_as_long(name, kind):
    grew = ratio(CASES[name], _pair(kind, 10_000), _pair(kind, 100_000))
    assert grew <= RATIO, f"{name} on {kind} text: 10x the words took {grew:.1f}x the time"


def test_a_long_edit_is_described_honestly():
    old = " ".join(["the", "film"] * 20_000)
    new = " ".join(["a", "movie"] * 20_000)
    text = describe_change({"t": old}, {"t": new}, ["t"])
    assert text.startswith("t: long edit: 40000 words → 40000 words")
