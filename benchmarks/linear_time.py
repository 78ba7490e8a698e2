"""How every per-row text function grows with the input: 10k against 100k words of repetitive, numeric and varied
text (issue 57's target: 10x the input in at most 12x the time). The same functions and inputs as
``tests/test_linear_time.py``, which fails only on growth near quadratic.

    python -m benchmarks.linear_time          # prints the table, writes benchmarks/results/linear_time.json
"""

from __future__ import annotations

import sys

from benchmarks import harness
from benchmarks.harness import ROOT

TARGET = 12.0


def main() -> None:
    ap = harness.parser(__doc__, smoke={"words": [200, 2000], "runs": 1})
    ap.add_argument("--words", type=int, nargs=2, default=[10_000, 100_000], metavar=("SMALL", "LARGE"),
                    help="the two input sizes compared")
    ap.add_argument("--runs", type=int, default=7, help="timed runs of each (the fastest counts)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from test_linear_time import CASES, _pair, ratio

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
