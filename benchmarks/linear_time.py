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
    sys.path.insert(0, str(ROOT / "tests"))
    from test_linear_time import CASES, _pair, ratio

    rows = []
    for name in sorted(CASES):
        for kind in ("repetitive", "numeric", "varied"):
            grew = ratio(CASES[name], _pair(kind, 10_000), _pair(kind, 100_000), runs=7)
            rows.append({"function": name, "text": kind, "ratio_10x": round(grew, 1), "meets_target": grew <= TARGET})
    table = harness.markdown_table(
        ["function", "text", "time at 100k / at 10k words", f"<= {TARGET:g}x"],
        [[r["function"], r["text"], f"{r['ratio_10x']}x", "yes" if r["meets_target"] else "no"] for r in rows])
    print(table)
    harness.write_results("linear_time", {**harness.provenance(), "target_ratio": TARGET, "rows": rows}, table)

if __name__ == "__main__":
    main()
