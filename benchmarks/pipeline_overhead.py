"""The library's own cost and memory at scale: CrossAug with a generator that costs nothing, against a bare
``datasets.map`` that writes the same rows.

    python -m benchmarks.pipeline_overhead [--rows 10000 100000 1000000] [--repeats 3] [--repeats-large 1]

The input is the embedded FEVEROUS sample repeated with fresh ids to each size, saved to disk and memory-mapped, as
``load_dataset`` gives it. The "generator" is a dictionary lookup of a rewrite computed up front (a real edit: the
first number, else the first capitalised word after the start, is changed), so everything measured is the
pipeline: validation, tokenisation, the edit classification, the span search and substitution, provenance and
statistics. The bare ``map`` emits exactly CrossAug's output rows (looked up per sample row, ids substituted).

Each measurement runs in its own process (peak RSS is that process's own high-water mark, imports included), in
interleaved order, ``--repeats`` times for sizes up to 100k rows and ``--repeats-large`` times above. Settings:

* ``augment()``: the default (map batch size rows/100 in 32..1000);
* ``augment(batch_size=32)``: the earlier default, for the memory comparison;
* ``map(augmenter)``: the README's ``dataset.map(augmenter, batched=True)`` (datasets' batch size 1000);
* ``bare map``: the same output rows from a lookup.

Writes ``benchmarks/results/pipeline_overhead.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT
SETTINGS = ("augment()", "augment(batch_size=32)", "map(augmenter)", "bare map")


def rewrite_one(claim: str) -> str:
    number = re.search(r"\b\d+\b", claim)
    if number:
        return claim[:number.start()] + str(int(number.group()) + 1) + claim[number.end():]
    word = re.search(r"(?<=\s)[A-Z][a-z]+", claim)
    return claim[:word.start()] + "Zorbia" + claim[word.end():] if word else claim


def _sample():
    from cfaug_hf.data import load_feverous_sample

    return load_feverous_sample().select_columns(["id", "claim", "evidence", "label"])


def _augmenter(sample):
    from cfaug_hf import CrossAugAugmenter, TaskSchema

    lookup = {c: rewrite_one(c) for c in set(sample["claim"])}
    # no flip checker: the benchmark measures the pipeline around a free generator, not a classifier's forward passes
    return CrossAugAugmenter(lambda claims: [lookup[c] for c in claims], TaskSchema.fact_verification(id_column="id"),
                             checker=None)


def build_data(rows: int, folder: Path) -> None:
    """``rows`` rows: sample row i % n with id ``<id>-<copy>``, written to ``folder`` in Arrow format."""
    sample = _sample()
    n = len(sample)

    def ids(batch, indices):
        return {"id": [f"{sample_id}-{i // n}" for sample_id, i in zip(batch["id"], indices)]}

    data = sample.select([i % n for i in range(rows)])
    data = data.map(ids, batched=True, with_indices=True, batch_size=10_000)
    data.save_to_disk(str(folder))


def child(setting: str, data_dir: str) -> None:
    """Run one setting in this process and print its time, output size and peak RSS as JSON."""
    from datasets import disable_progress_bars, load_from_disk

    from cfaug_hf.testing import peak_memory_gb

    disable_progress_bars()
    data = load_from_disk(data_dir)
    sample = _sample()
    augmenter = _augmenter(sample)
    if setting == "bare map":
        reference = augmenter.augment(sample)
        columns = reference.column_names
        by_sample: dict[str, list[dict]] = {}
        for row in reference:
            by_sample.setdefault(row["cf_source_id"], []).append(row)

        def bare(batch: dict) -> dict:
            out: dict[str, list] = {c: [] for c in columns}
            for rid in batch["id"]:
                sample_id = rid.rsplit("-", 1)[0]
                for row in by_sample.get(sample_id, ()):
                    for c in columns:
                        out[c].append(rid if c in ("id", "cf_source_id") else row[c])
            return out

        run = lambda: data.map(bare, batched=True, remove_columns=data.column_names,  # noqa: E731
                               load_from_cache_file=False)
    elif setting == "augment()":
        run = lambda: augmenter.augment(data, load_from_cache_file=False)  # noqa: E731
    elif setting == "augment(batch_size=32)":
        run = lambda: augmenter.augment(data, batch_size=32, load_from_cache_file=False)  # noqa: E731
    elif setting == "map(augmenter)":
        run = lambda: data.map(augmenter, batched=True, load_from_cache_file=False)  # noqa: E731
    else:
        raise SystemExit(f"unknown setting {setting!r}")
    sampler = MemorySampler()
    sampler.start()
    t0 = time.perf_counter()
    out = run()
    seconds = time.perf_counter() - t0
    n_out = len(out)
    sampler.stop()
    peak = peak_memory_gb() * 1024  # MiB
    out.cleanup_cache_files()
    print(json.dumps({"seconds": seconds, "rows_out": n_out, "peak_rss_mib": peak,
                      "peak_anon_mib": sampler.peak["RssAnon"], "peak_file_mib": sampler.peak["RssFile"]}))


class MemorySampler:
    """Peak anonymous (heap) and file-backed (memory-mapped Arrow files) resident memory, sampled every 50 ms.

    Peak RSS counts both; file-backed pages are the mapped input and output, which the kernel can drop at will."""

    def __init__(self) -> None:
        import threading

        self.peak = {"RssAnon": 0.0, "RssFile": 0.0}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        with open("/proc/self/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in self.peak:
                    self.peak[key] = max(self.peak[key], int(line.split()[1]) / 1024)

    def _run(self) -> None:
        while not self._done.wait(0.05):
            self._sample()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._sample()
        self._done.set()
        self._thread.join()


def main() -> None:
    ap = harness.parser(__doc__, smoke={"rows": [100], "repeats": 1, "repeats_large": 1})
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000], help="input sizes")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each setting up to 100k rows, interleaved")
    ap.add_argument("--repeats-large", type=int, default=1, help="runs of each setting above 100k rows")
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=SETTINGS)
    ap.add_argument("--out", default="pipeline_overhead", help="results file stem in benchmarks/results/")
    ap.add_argument("--child", nargs=2, metavar=("SETTING", "DATA"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child)

    from datasets import disable_progress_bars

    disable_progress_bars()
    results: dict[str, dict] = {}
    root = Path(tempfile.mkdtemp(prefix="cfaug-pipeline-"))
    try:
        for rows in args.rows:
            folder = root / str(rows)
            build_data(rows, folder)
            repeats = args.repeats if rows <= 100_000 else args.repeats_large
            runs: dict[str, list[dict]] = {s: [] for s in args.settings}
            for _ in range(repeats):
                for setting in args.settings:
                    # run as a module from the repository root, as the command itself is, so `benchmarks` imports
                    proc = subprocess.run([sys.executable, "-m", "benchmarks.pipeline_overhead", "--child", setting,
                                           str(folder)], capture_output=True, text=True, cwd=ROOT,
                                          env={**os.environ, "CFAUG_VERBOSITY": "error"})
                    if proc.returncode:
                        raise SystemExit(f"{setting} at {rows} rows failed:\n{proc.stderr[-3000:]}")
                    runs[setting].append(json.loads(proc.stdout.strip().splitlines()[-1]))
                    print(rows, setting, runs[setting][-1], flush=True)
            results[str(rows)] = runs
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    def rate(rows: int, setting: str) -> float:
        return rows / statistics.median(r["seconds"] for r in results[str(rows)][setting])

    def rss(rows: int, setting: str, key: str = "peak_rss_mib") -> float:
        return max(r.get(key, float("nan")) for r in results[str(rows)][setting])

    smallest = min(args.rows)
    lines = [f"Pipeline cost and memory with a free generator (CrossAug on the FEVEROUS sample repeated to each size; "
             f"input memory-mapped from disk). rows/s: median of {args.repeats} interleaved runs up to 100k rows, "
             f"{args.repeats_large} above; peak RSS: the most of those runs, each in its own process. "
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, CPU only.", "",
             "Peak RSS counts the memory-mapped Arrow input and output pages the process touched (file-backed, "
             "dropped by the kernel under pressure); peak anonymous memory is the process's own heap.", "",
             harness.markdown_table(
                 ["input rows", "setting", "output rows", "input rows/s", "ratio to bare map", "peak RSS MiB",
                  f"RSS / {smallest:,} rows", "peak anonymous MiB", f"anonymous / {smallest:,} rows"],
                 [[f"{rows:,}", setting, f"{results[str(rows)][setting][0]['rows_out']:,}", f"{rate(rows, setting):,.0f}",
                   f"{rate(rows, setting) / floor:.2f}", f"{rss(rows, setting):,.0f}",
                   f"{rss(rows, setting) / rss(smallest, setting):.2f}", f"{rss(rows, setting, 'peak_anon_mib'):,.0f}",
                   f"{rss(rows, setting, 'peak_anon_mib') / rss(smallest, setting, 'peak_anon_mib'):.2f}"]
                  for rows, floor in ((rows, rate(rows, "bare map") if "bare map" in args.settings else float("nan"))
                                      for rows in args.rows) for setting in args.settings])]
    text = "\n".join(lines) + "\n"
    print(text)
    harness.results_dir().mkdir(exist_ok=True)
    (harness.results_dir() / f"{args.out}.json").write_text(json.dumps({
        "settings": args.settings, "rows": args.rows, "repeats": args.repeats, "repeats_large": args.repeats_large,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, CPU",
        "runs": results}, indent=2) + "\n")
    (harness.results_dir() / f"{args.out}.md").write_text(text)


if __name__ == "__main__":
    main()
