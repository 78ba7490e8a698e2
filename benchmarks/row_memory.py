"""Peak memory and time for one very long row, per method with its default (shipped) components.

    python -m benchmarks.row_memory [--words 10000 100000] [--methods crossaug core llm icda]

Each (method, length) runs in a fresh process (so the peak is that row's alone): one row of N words through the
method as a new user builds it with its defaults, offline. Writes ``benchmarks/results/row_memory.{json,md}``
as each run finishes. Target (issue 39): under 2 GB for one 100k-word row. Every model input is cut to the
model's maximum length, and the row's outcome counts it (``truncated:...``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT

RUN = r'''
import json, sys, time
from datasets import Dataset
from cfaug_hf import TaskSchema
from cfaug_hf.testing import peak_memory_gb
method, n = sys.argv[1], int(sys.argv[2])
words = " ".join(f"w{i % 500}" for i in range(n))
if method == "crossaug":
    from cfaug_hf import CrossAugAugmenter
    data = {"claim": ["Paris is in France. " + words], "evidence": ["Paris is the capital of France. " + words],
            "label": ["SUPPORTS"]}
    aug = CrossAugAugmenter(schema=TaskSchema.fact_verification())
elif method == "core":
    from cfaug_hf import COREAugmenter
    data = {"text": ["A warm and funny film. " + words + " I loved it."], "label": ["positive"]}
    aug = COREAugmenter(mode="editor_only", schema=TaskSchema.sentiment())
elif method == "llm":
    from cfaug_hf import LLMCounterfactualAugmenter
    data = {"text": ["A warm and funny film. " + words + " I loved it."], "label": ["positive"]}
    aug = LLMCounterfactualAugmenter("default", TaskSchema.sentiment())
elif method == "icda":
    from cfaug_hf import RationaleSwapAugmenter
    split = words.split()
    data = {"text": ["A warm and funny film. " + ". ".join(" ".join(split[i:i + 20]) for i in range(0, n, 20))
                     + ". I loved it."], "label": ["positive"]}
    aug = RationaleSwapAugmenter(schema=TaskSchema.sentiment())
    aug.fit(Dataset.from_dict({"text": ["A great film. I loved it.", "A dull film. I hated it."] * 4,
                               "label": ["positive", "negative"] * 4}))
t = time.perf_counter()
aug.augment(Dataset.from_dict(data), load_from_cache_file=False)
print(json.dumps({"seconds": round(time.perf_counter() - t, 1), "stats": aug.stats.to_dict(),
                  "peak_rss_gb": round(peak_memory_gb(), 2)}))
'''


def main() -> None:
    ap = harness.parser(__doc__, smoke={"words": [1000], "methods": ["crossaug"]})
    ap.add_argument("--words", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--methods", nargs="+", default=["crossaug", "core", "llm", "icda"])
    ap.add_argument("--note", default=f"CPU, {os.cpu_count()} cores")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    rows = []
    for method in args.methods:
        for n in args.words:
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", RUN, method, str(n)], capture_output=True, text=True,
                                  env=env)
            wall = round(time.perf_counter() - start, 1)
            if done.returncode != 0:
                rows.append({"method": method, "words": n, "error": done.stderr.strip().splitlines()[-1][:300],
                             "returncode": done.returncode, "wall_s": wall})
            else:
                rows.append({"method": method, "words": n, "wall_s": wall,
                             **json.loads(done.stdout.strip().splitlines()[-1])})
            print(rows[-1], flush=True)
            write(rows, args)


def _cells(r: dict) -> list:
    if "error" in r:
        return [r["method"], r["words"], "-", "-", r["wall_s"], "-", f"failed: {r['error']}"]
    stats = r["stats"]
    outcome = ", ".join(f"{k}: {v}" for k, v in {**stats.get("produced", {}), **stats.get("skipped", {})}.items())
    return [r["method"], r["words"], r["peak_rss_gb"], r["seconds"], r["wall_s"], stats.get("truncated", {}), outcome]


def write(rows: list[dict], args: argparse.Namespace) -> None:
    lines = ["# One very long row: peak memory per method (default components)", "",
             f"One row of N words in a fresh process ({args.note}); target: under 2 GB for 100k words.", "",
             harness.markdown_table(["method", "words", "peak RSS (GB)", "augment (s)", "process (s)", "truncated",
                                     "outcome"], [_cells(r) for r in rows])]
    text = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "row_memory.md").write_text(text)
    (args.out / "row_memory.json").write_text(json.dumps({"note": args.note, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
