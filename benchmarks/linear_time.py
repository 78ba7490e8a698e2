"""How every per-row text function grows with the input: 10k against 100k words of repetitive, numeric and varied
text (issue 57's target: 10x the input in at most 12x the time). ``tests/test_linear_time.py`` holds the same
functions and inputs to outcomes and to the growth of the Python lines they run, which no machine's speed moves;
the times are measured here only (a test may not fail because the machine is slow or busy).

    python -m benchmarks.linear_time          # prints the table, writes benchmarks/results/linear_time.json
"""

from __future__ import annotations

import random
import time

from benchmarks import harness
from cfaug_hf import TaskSchema
from cfaug_hf.provenance import describe_change, source_id
from cfaug_hf.text.meaning import classify_edit
from cfaug_hf.text.sentences import split_sentences
from cfaug_hf.text.spans import _keys, _tokenize, diff_tokens, find_span, tokenize

TARGET = 12.0


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
    # tokenize keeps its results (a claim's evidence is searched once per candidate): cleared, so they are computed
    # (classify_edit's small input was served from that cache and made 10x the words look like 26x the work).
    "classify_edit": lambda old, new: (_tokenize.cache_clear(), classify_edit(old, new)),
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



def main() -> None:
    ap = harness.parser(__doc__, smoke={"words": [200, 2000], "runs": 1})
    ap.add_argument("--words", type=int, nargs=2, default=[10_000, 100_000], metavar=("SMALL", "LARGE"),
                    help="the two input sizes compared")
    ap.add_argument("--runs", type=int, default=7, help="timed runs of each (the fastest counts)")
    args = ap.parse_args()
    small, large = args.words
    rows = []
    for name in sorted(CASES):
        for kind in ("repetitive", "numeric", "varied"):
            grew = ratio(CASES[name], _pair(kind, small), _pair(kind, large), runs=args.runs)
            rows.append({"function": name, "text": kind, "ratio": round(grew, 1), "meets_target": grew <= TARGET})
    scale = f"{large // small:g}x"
    table = harness.markdown_table(
        ["function", "text", f"time at {large:,} / at {small:,} words", f"<= {TARGET:g}x"],
        [[r["function"], r["text"], f"{r['ratio']}x", "yes" if r["meets_target"] else "no"] for r in rows])
    print(table)
    harness.write_results("linear_time", {**harness.provenance(), "target_ratio": TARGET, "words": [small, large],
                                          "input_grew": scale, "rows": rows}, table)


if __name__ == "__main__":
    main()
