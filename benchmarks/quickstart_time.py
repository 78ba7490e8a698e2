"""README quick start 1 (Python) against the command line on the same rows, each in a fresh process, in one run.

    python -m benchmarks.quickstart_time [--rows 100] [--repeats 2] [--batch-sizes 4 8]

Both augment the first ``--rows`` claims of the embedded FEVEROUS sample with CrossAug's shipped generator and flip
checker: the Python snippet of the README (``dataset.map(augmenter, batched=True, batch_size=B)``) and
``cfaug augment ROWS.jsonl --method crossaug``. Wall time of each process (imports and model loading included),
median over ``--repeats`` interleaved runs, and whether both wrote the same counterfactuals. The snippet runs once per
``--batch-sizes`` value (the README's is the first), and records the longest wait between two moves of the map's
progress bar after its first move (one move per batch), and the first batch's time apart (it includes loading the
generator and checker, which the augmenter does on first use). Writes
``benchmarks/results/quickstart_time.{json,md}``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT

SNIPPET = """
import json, sys
from cfaug_hf import AugmentationStats, CrossAugAugmenter, TaskSchema
from cfaug_hf.data import load_feverous_sample

dataset = load_feverous_sample().select(range({rows}))
schema = TaskSchema.fact_verification(claim="claim", evidence="evidence", label="label", id_column="id")
augmenter = CrossAugAugmenter(schema=schema)
import time
moves = [time.perf_counter()]
def step(batch):  # the progress bar moves when a batch returns
    out = augmenter(batch)
    moves.append(time.perf_counter())
    return out
augmented = dataset.map(step, batched=True, batch_size={batch})
print("\\n".join(AugmentationStats.from_dataset(augmented).summary_lines()))
json.dump({"claims": sorted(r["claim"] for r in augmented if r["cf_is_counterfactual"]),
           "first": moves[1] - moves[0],
           "longest_wait": max([b - a for a, b in zip(moves[1:], moves[2:])] or [0])}, open(sys.argv[1], "w"))
"""


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "HF_DATASETS_CACHE": tempfile.mkdtemp(prefix="cfaug-qs-cache-")})
    return time.perf_counter() - start


def main() -> None:
    ap = harness.parser(__doc__, smoke={"rows": 4, "repeats": 1, "batch_sizes": [4]})
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[4, 8],
                    help="map batch sizes of the Python snippet; the first is the README's")
    args = ap.parse_args()

    from datasets import load_from_disk

    from cfaug_hf.data import load_feverous_sample

    work = Path(tempfile.mkdtemp(prefix="cfaug-quickstart-"))
    load_feverous_sample().select(range(args.rows)).to_json(work / "rows.jsonl")
    names = {b: f"Python quick start 1, batch_size={b}" for b in args.batch_sizes}
    for b in args.batch_sizes:
        (work / f"snippet-{b}.py").write_text(SNIPPET.replace("{rows}", str(args.rows)).replace("{batch}", str(b)))
    times: dict[str, list[float]] = {**{n: [] for n in names.values()}, "cfaug augment": []}
    waits: dict[str, list[float]] = {n: [] for n in names.values()}
    firsts: dict[str, list[float]] = {n: [] for n in names.values()}
    for r in range(args.repeats):
        for b, name in names.items():
            times[name].append(timed([sys.executable, str(work / f"snippet-{b}.py"), str(work / f"python-{b}-{r}.json")]))
            seen = json.loads((work / f"python-{b}-{r}.json").read_text())
            waits[name].append(seen["longest_wait"])
            firsts[name].append(seen["first"])
        times["cfaug augment"].append(timed([sys.executable, "-m", "cfaug_hf.cli", "augment", str(work / "rows.jsonl"),
                                             "--method", "crossaug", "--task", "fact-verification", "--id-column",
                                             "id", "--out", str(work / f"cli-{r}")]))
        print({k: round(v[-1], 1) for k, v in times.items()}, flush=True)
    cli_claims = sorted(r["claim"] for r in load_from_disk(str(work / "cli-0" / "data")) if r["cf_is_counterfactual"])
    same = {name: json.loads((work / f"python-{b}-0.json").read_text())["claims"] == cli_claims
            for b, name in names.items()}
    medians = {k: statistics.median(v) for k, v in times.items()}
    ratios = {name: medians[name] / medians["cfaug augment"] for name in names.values()}
    longest = {name: max(w) for name, w in waits.items()}
    harness.results_dir().mkdir(exist_ok=True)
    (harness.results_dir() / "quickstart_time.json").write_text(json.dumps(
        {"rows": args.rows, "seconds": times, "median": medians, "python_over_cli": ratios,
         "longest_progress_wait": waits, "first_batch_seconds": firsts, "same_counterfactuals": same, "cpus": os.cpu_count()}, indent=2) + "\n")
    text = (f"# Quick start 1 (Python) against the command line\n\n{args.rows} FEVEROUS claims, CrossAug with the "
            f"shipped generator and checker, each a fresh process (imports and model loading included), median of "
            f"{args.repeats} interleaved runs on {os.cpu_count()} cores. Longest wait: the most seconds the map's "
            f"progress bar stood still after its first move (over all runs; target at most 10); first batch: its "
            f"seconds, loading the generator and checker included (median).\n\n"
            + harness.markdown_table(
                ["how", "seconds", "/ CLI", "longest wait (s)", "first batch (s)", "same counterfactuals as the CLI"],
                [[k, f"{v:.1f}", f"{ratios[k]:.2f}x", f"{longest[k]:.1f}", f"{statistics.median(firsts[k]):.1f}",
                  "yes" if same[k] else "NO"] if k in ratios else [k, f"{v:.1f}", "1.00x", None, None, None]
                 for k, v in medians.items()]) + "\n")
    (harness.results_dir() / "quickstart_time.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
