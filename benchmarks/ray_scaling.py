"""Ray Data scale-out on one machine: a local ``augment`` against Ray with 1 and 2 actors.

    python -m benchmarks.ray_scaling [--workload negate|crossaug] [--rows N] [--busy-loops 20000] [--repeats 3]

Workloads:

* ``negate``: ``NegateAugmenter`` with ``busy_loops`` iterations of a hashing loop per row, standing in for a
  generator whose cost is CPU-bound Python (so a process per core is what scales it).
* ``crossaug``: CrossAug's shipped claim generator (SmolLM2-135M + LoRA, beam 5) on the fast engine ``auto``
  picks (CTranslate2 float32 where installed), no checker, over the first ``--rows`` claims of the embedded
  FEVEROUS sample. Each actor's decoder takes the threads of its CPU share (``OMP_NUM_THREADS``, set by Ray), so
  1 actor decodes on 1 thread and 2 actors on 1 thread each; the local run uses every core.
 Ray starts with ``num_cpus=2``; each setting runs ``--repeats`` times in
interleaved order after a warm-up, and the table gives medians. Every Ray output is compared with the local one,
row for row. Writes ``benchmarks/results/ray_scaling.{json,md}``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT


def main() -> None:
    ap = harness.parser(__doc__, smoke={"rows": 8, "busy_loops": 10, "batch_size": 4, "repeats": 1})
    ap.add_argument("--workload", choices=["negate", "crossaug"], default="negate")
    ap.add_argument("--rows", type=int, default=None, help="rows (default: 4000 for negate, 96 for crossaug)")
    ap.add_argument("--busy-loops", type=int, default=20000, help="hashing iterations per row")
    ap.add_argument("--batch-size", type=int, default=None, help="rows per actor call (default 100; crossaug 8)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()
    crossaug = args.workload == "crossaug"
    args.rows = args.rows or (96 if crossaug else 4000)
    args.batch_size = args.batch_size or (8 if crossaug else 100)

    import ray
    from datasets import Dataset, disable_progress_bars, load_dataset

    from cfaug_hf import TaskSchema
    from cfaug_hf.distributed import augment_to_parquet
    from cfaug_hf.testing import NegateAugmenter

    disable_progress_bars()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    work = Path(tempfile.mkdtemp(prefix="cfaug-ray-bench-"))
    if crossaug:
        from cfaug_hf import CrossAugAugmenter
        from cfaug_hf.data import load_feverous_sample
        from cfaug_hf.methods.crossaug.recipes import default_claim_generator

        data = load_feverous_sample().select(range(args.rows))
        aug = CrossAugAugmenter(default_claim_generator(), TaskSchema.fact_verification(id_column="id"), checker=None)
        folder = aug.save_pretrained(work / "augmenter", copy_components=True)
        workload = (f"CrossAug's shipped claim generator, beam 5, no checker, on {args.rows} FEVEROUS claims; "
                    f"engine {(aug.generator.backend.describe() if aug.generator.backend else 'transformers')}")
    else:
        data = Dataset.from_dict({"id": [f"r{i}" for i in range(args.rows)],
                                  "text": [f"review {i} was good" if i % 4 else f"review {i}"
                                           for i in range(args.rows)],
                                  "label": ["positive", "negative"] * (args.rows // 2) + ["positive"] * (args.rows % 2)})
        aug = NegateAugmenter(TaskSchema.sentiment(id_column="id"), busy_loops=args.busy_loops)
        folder = aug.save_pretrained(work / "augmenter")
        workload = f"NegateAugmenter with {args.busy_loops} hashing iterations per row (pure Python)"
    data.to_parquet(work / "in.parquet")
    expected = aug.augment(data, load_from_cache_file=False).to_list()

    def local() -> list:
        return aug.augment(data, load_from_cache_file=False).to_list()

    def on_ray(actors: int):
        def run() -> list:
            out = work / f"out-{actors}-{time.monotonic_ns()}"
            augment_to_parquet(str(work / "in.parquet"), str(folder), out, concurrency=actors,
                               batch_size=args.batch_size, imports=["cfaug_hf.testing"])
            return load_dataset("parquet", data_dir=str(out), split="train").to_list()
        return run

    settings = {"local augment()": local, "Ray, 1 actor": on_ray(1), "Ray, 2 actors": on_ray(2)}
    for run in settings.values():  # warm-up: imports, actor start-up paths, page cache
        run()
    times: dict[str, list[float]] = {k: [] for k in settings}
    identical: dict[str, bool] = {k: True for k in settings}
    for _ in range(args.repeats):
        for key, run in settings.items():
            t0 = time.perf_counter()
            rows = run()
            times[key].append(time.perf_counter() - t0)
            identical[key] &= rows == expected
            print(key, round(times[key][-1], 2), flush=True)
    rates = {k: args.rows / statistics.median(v) for k, v in times.items()}
    one = rates["Ray, 1 actor"]
    setup = (f"{args.rows} rows, {workload}, "
             f"actor batches of {args.batch_size}; ray.init(num_cpus=2) on {platform.machine()} with "
             f"{os.cpu_count()} cores; median of {args.repeats} interleaved runs, each including actor start-up, "
             f"the Parquet write and reading the output back")
    lines = [f"# Ray scale-out: {args.workload}", "", setup + ".", "",
             harness.markdown_table(["setting", "rows/s", "vs Ray 1 actor", "rows identical to local"],
                                    [[k, f"{r:.0f}", f"{r / one:.2f}x", "yes" if identical[k] else "NO"]
                                     for k, r in rates.items()])]
    lines += ["", f"2 actors / 1 actor = {rates['Ray, 2 actors'] / one:.2f}x (target >= 1.8x)."]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    name = "ray_scaling" if args.workload == "negate" else f"ray_scaling_{args.workload}"
    (args.out / f"{name}.md").write_text(text)
    (args.out / f"{name}.json").write_text(json.dumps(
        {"setup": setup, "seconds": times, "rows_per_s": rates, "identical": identical}, indent=2) + "\n")
    ray.shutdown()


if __name__ == "__main__":
    main()
