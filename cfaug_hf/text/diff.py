"""Word-level diffs in about linear time, for edits of inputs of any length (``cf_change``, how a claim's rewrite
is classified).

``difflib.SequenceMatcher`` compares every word with every other in the worst case: one 16.5k-word evidence took
two minutes, a 20k-token numeric table nearly three. Here the common ends are cut first (most edits are local),
short inputs and middles go to ``difflib`` (so a short edit is described exactly as before), and long ones are split at words that occur once on each side (patience diff)
until they are short; a long stretch with no such word (repetitive or numeric text) is reported as one ``long``
opcode rather than compared word by word.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Sequence

__all__ = ["word_diff", "EXACT_CELLS", "MAX_DEPTH"]


#: Largest word-by-word comparison (old words x new words) done exactly; above it, words unique to both sides
#: anchor the diff (patience diff) and a stretch that still has no anchor is one replacement.
EXACT_CELLS = 40_000
#: How many times a stretch between anchors is split again before it is reported as one replacement.
MAX_DEPTH = 12


def word_diff(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """Opcodes (``difflib`` style, without ``equal``) turning word list ``a`` into ``b`` in time about linear in
    their length: the common ends are cut first, short middles are compared exactly, long ones are split at words
    that occur once on each side (patience diff). ``difflib`` alone is quadratic: a 16k-word evidence took minutes.
    A long stretch with no such word (repetitive or numeric text) is one ``long`` opcode: replaced as a whole,
    not compared word by word.

    Examples:
        >>> word_diff("a b c d".split(), "a x c d e".split())
        [('replace', 1, 2, 1, 2), ('insert', 4, 4, 4, 5)]
    """
    out: list[tuple[str, int, int, int, int]] = []
    stack = [(0, len(a), 0, len(b), 0)]
    while stack:
        i1, i2, j1, j2, depth = stack.pop()
        if (i2 - i1) * (j2 - j1) <= EXACT_CELLS:  # small enough: exactly difflib's answer, as before
            out += _exact(a, i1, i2, b, j1, j2)
            continue
        while i1 < i2 and j1 < j2 and a[i1] == b[j1]:
            i1, j1 = i1 + 1, j1 + 1
        while i1 < i2 and j1 < j2 and a[i2 - 1] == b[j2 - 1]:
            i2, j2 = i2 - 1, j2 - 1
        if i1 == i2 and j1 == j2:
            continue
        if i1 == i2 or j1 == j2:
            out.append(("insert" if i1 == i2 else "delete", i1, i2, j1, j2))
            continue
        if (i2 - i1) * (j2 - j1) <= EXACT_CELLS:
            out += _exact(a, i1, i2, b, j1, j2)
            continue
        anchors = _unique_anchors(a, i1, i2, b, j1, j2) if depth < MAX_DEPTH else []
        if not anchors:
            out.append(("long", i1, i2, j1, j2))
            continue
        # Stretches between consecutive anchors, pushed so that they come off the stack in order.
        bounds = [(i1 - 1, j1 - 1), *anchors, (i2, j2)]
        for (x0, y0), (x1, y1) in reversed(list(zip(bounds, bounds[1:]))):
            stack.append((x0 + 1, x1, y0 + 1, y1, depth + 1))
    return sorted(out, key=lambda op: (op[1], op[3]))


def _exact(a: Sequence[str], i1: int, i2: int, b: Sequence[str], j1: int, j2: int) -> list[tuple[str, int, int, int, int]]:
    matcher = difflib.SequenceMatcher(a=a[i1:i2], b=b[j1:j2], autojunk=False)
    return [(op, i1 + x1, i1 + x2, j1 + y1, j1 + y2) for op, x1, x2, y1, y2 in matcher.get_opcodes() if op != "equal"]


def _unique_anchors(a: Sequence[str], i1: int, i2: int, b: Sequence[str], j1: int,
                    j2: int) -> list[tuple[int, int]]:
    """Positions ``(i, j)`` of words that occur exactly once in ``a[i1:i2]`` and once in ``b[j1:j2]``, the longest
    run of them in the same order on both sides (a longest increasing subsequence, n log n)."""
    def once(words: Sequence[str], lo: int, hi: int) -> dict[str, int]:
        seen: dict[str, int] = {}
        for k in range(lo, hi):
            seen[words[k]] = -1 if words[k] in seen else k
        return {w: k for w, k in seen.items() if k >= 0}

    in_a, in_b = once(a, i1, i2), once(b, j1, j2)
    pairs = sorted((i, in_b[w]) for w, i in in_a.items() if w in in_b)
    tails: list[int] = []  # tails[k]: smallest b-position ending an increasing run of length k + 1
    tail_at: list[int] = []
    back: list[int] = []
    for n, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(n)
        else:
            tails[k], tail_at[k] = j, n
        back.append(tail_at[k - 1] if k else -1)
    run, n = [], tail_at[-1] if tail_at else -1
    while n >= 0:
        run.append(pairs[n])
        n = back[n]
    return run[::-1]
