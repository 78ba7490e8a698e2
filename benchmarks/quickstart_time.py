"""README quick start 1 (Python) against the command line on the same rows, each in a fresh process, in one run.

    python benchmarks/quickstart_time.py [--rows 100] [--repeats 2]

Both augment the first ``--rows`` claims of the embedded FEVEROUS sample with CrossAug's shipped generator and flip
checker: the Python snippet of the README (``dataset.map(augmenter, batched=True, batch_size=32)``) and
``cfaug augment ROWS.jsonl --method crossaug``. Wall time of each process (imports and model loading included),
median over ``--repeats`` interleaved runs, and whether both wrote the same counterfactuals. Writes
``benchmarks/results/quickstart_time.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

SNIPPET = """
import json, sys
from cfaug_hf import AugmentationStats, CrossAugAugmenter, TaskSchema
from cfaug_hf.embedded import load_feverous_sample

dataset = load_feverous_sample().select(range({rows}))
schema = TaskSchema.fact_verification(claim="claim", evidence="evidence", label="label", id_column="id")
augmenter = CrossAugAugmenter(schema=schema)
augmented = dataset.map(augmenter, batched=True, batch_size=32)
print("\\n".join(AugmentationStats.from_dataset(augmented).summary_lines()))
json.dump(sorted(r["claim"] for r in augmented if r["cf_is_counterfactual"]), open(sys.argv[1], "w"))
"""


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "HF_DATASETS_CACHE": tempfile.mkdtemp(prefix="cfaug-qs-cache-")})
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()

    from datasets import load_from_disk

    from cfaug_hf.embedded import load_feverous_sample

    work = Path(tempfile.mkdtemp(prefix="cfaug-quickstart-"))
    load_feverous_sample().select(range(args.rows)).to_json(work / "rows.jsonl")
    (work / "snippet.py").write_text(SNIPPET.replace("{rows}", str(args.rows)))
    times: dict[str, list[float]] = {"Python quick start 1": [], "cfaug augment": []}
    for r in range(args.repeats):
        times["Python quick start 1"].append(timed([sys.executable, str(work / "snippet.py"),
                                                    str(work / f"python-{r}.json")]))
        times["cfaug augment"].append(timed([sys.executable, "-m", "cfaug_hf.cli", "augment", str(work / "rows.jsonl"),
                                             "--method", "crossaug", "--task", "fact-verification", "--id-column",
                                             "id", "--out", str(work / f"cli-{r}")]))
        print({k: round(v[-1], 1) for k, v in times.items()}, flush=True)
    cli_claims = sorted(r["claim"] for r in load_from_disk(str(work / "cli-0" / "data")) if r["cf_is_counterfactual"])
    same = json.loads((work / "python-0.json").read_text()) == cli_claims
    medians = {k: statistics.median(v) for k, v in times.items()}
    ratio = medians["Python quick start 1"] / medians["cfaug augment"]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "quickstart_time.json").write_text(json.dumps(
        {"rows": args.rows, "seconds": times, "median": medians, "python_over_cli": ratio,
         "same_counterfactuals": same, "cpus": os.cpu_count()}, indent=2) + "\n")
    text = (f"# Quick start 1 (Python) against the command line\n\n{args.rows} FEVEROUS claims, CrossAug with the "
            f"shipped generator and checker, each a fresh process (imports and model loading included), median of "
            f"{args.repeats} interleaved runs on {os.cpu_count()} cores.\n\n| how | seconds |\n|---|---|\n"
            + "".join(f"| {k} | {v:.1f} |\n" for k, v in medians.items())
            + f"\nPython / CLI = {ratio:.2f}x (target within 10%); the same counterfactuals: "
              f"{'yes' if same else 'NO'}.\n")
    (RESULTS / "quickstart_time.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
