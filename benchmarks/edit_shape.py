"""The shape of the unit edits the whole-input rows hold (issue 81, item 3: do the editors rewrite whole sentences,
or only the words that carry the verdict?). Read from the committed ``results/whole_input_rows_*.jsonl``; nothing is
generated. For each configuration: the unit edits, how many changed spans an edit has (word-level diff of the old
unit against the new, `difflib` over `cfaug_hf.text.spans.tokenize` keys), the share of edits that change one span,
and the share of a unit's tokens an edit changes (the rest is copied as it stood).

    python -m benchmarks.edit_shape      # prints the table, writes benchmarks/results/edit_shape.json
"""

from __future__ import annotations

import difflib
import json
import statistics
from typing import Any

from benchmarks import harness
from cfaug_hf.text.spans import tokenize


def spans(old: str, new: str) -> tuple[int, float]:
    """The changed spans of one edit and the share of the old unit's tokens inside them."""
    a, b = [t.key for t in tokenize(old)], [t.key for t in tokenize(new)]
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    changed = sum(max(i1 - i0, j1 - j0) for _, i0, i1, j0, j1 in ops)
    return len(ops), changed / max(1, len(a), len(b))


def shape(path: Any) -> dict[str, Any]:
    edits = [e for line in path.open() for e in json.loads(line)["edited"]]
    measured = [spans(old, new) for old, new in edits]
    counts = [n for n, _ in measured]
    shares = [s for _, s in measured]
    return {"edits": len(edits),
            "one_span_pct": round(100 * sum(n == 1 for n in counts) / max(1, len(counts)), 1),
            "spans_mean": round(statistics.fmean(counts), 2) if counts else None,
            "tokens_changed_median_pct": round(100 * statistics.median(shares), 1) if shares else None,
            "tokens_changed_mean_pct": round(100 * statistics.fmean(shares), 1) if shares else None}


def main() -> None:
    args = harness.parser(__doc__, smoke={}).parse_args()
    del args
    files = sorted(harness.RESULTS.glob("whole_input_rows_*.jsonl"))
    configs = {f.stem.removeprefix("whole_input_rows_"): shape(f) for f in files}
    rows = [[name, c["edits"], f"{c['one_span_pct']}%", c["spans_mean"], f"{c['tokens_changed_median_pct']}%",
             f"{c['tokens_changed_mean_pct']}%"] for name, c in configs.items() if c["edits"]]
    table = harness.markdown_table(["rows file", "unit edits", "one changed span", "spans per edit",
                                    "tokens changed (median)", "tokens changed (mean)"], rows)
    markdown = "\n".join(["# The shape of the whole-input loop's unit edits", "", __doc__.split("\n\n")[0], "", table])
    print(table)
    harness.write_results("edit_shape", {"provenance": harness.provenance(), "configs": configs}, markdown)


if __name__ == "__main__":
    main()
