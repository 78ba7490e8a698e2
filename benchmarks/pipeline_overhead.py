"""The library's own cost: CrossAug with a generator that costs nothing, against a bare ``datasets.map`` that writes
the same rows.

    python benchmarks/pipeline_overhead.py [--rows 6000] [--repeats 3]

The claims are the embedded FEVEROUS sample, repeated with fresh ids to ``--rows``. The "generator" is a dictionary
lookup of a rewrite computed up front (a real edit: the first number, else the first capitalised word after the
start, is changed), so everything measured is the pipeline: validation, tokenisation, the edit classification, the
span search and substitution, provenance and statistics. The bare ``map`` returns exactly CrossAug's output rows,
looked up by row id, so both write the same data. Each setting runs ``--repeats`` times in interleaved order on
in-memory data with the datasets cache and the tokenizer's cache cleared; the table reports rows/s (median) and their ratio. Writes
``benchmarks/results/pipeline_overhead.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import time
from pathlib import Path

from datasets import concatenate_datasets, disable_progress_bars

from cfaug_hf import CrossAugAugmenter, TaskSchema
from cfaug_hf import text as cfaug_text
from cfaug_hf.embedded import load_feverous_sample

RESULTS = Path(__file__).resolve().parent / "results"


def rewrite_one(claim: str) -> str:
    number = re.search(r"\b\d+\b", claim)
    if number:
        return claim[:number.start()] + str(int(number.group()) + 1) + claim[number.end():]
    word = re.search(r"(?<=\s)[A-Z][a-z]+", claim)
    return claim[:word.start()] + "Zorbia" + claim[word.end():] if word else claim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=6000, help="input rows (default 6000)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each setting, interleaved (default 3)")
    ap.add_argument("--batch-size", type=int, default=1000, help="map batch size for both (default 1000)")
    args = ap.parse_args()
    disable_progress_bars()

    base = load_feverous_sample().select_columns(["id", "claim", "evidence", "label"])
    copies = -(-args.rows // len(base))
    data = concatenate_datasets([base.map(lambda i, k=k: {"id": f"{i}-{k}"}, input_columns="id")
                                 for k in range(copies)]).select(range(args.rows))
    lookup = {c: rewrite_one(c) for c in set(data["claim"])}
    schema = TaskSchema.fact_verification(id_column="id")
    augmenter = CrossAugAugmenter(lambda claims: [lookup[c] for c in claims], schema)

    reference = augmenter.augment(data, batch_size=args.batch_size, load_from_cache_file=False)
    by_id: dict[str, list[dict]] = {}
    for row in reference:
        by_id.setdefault(row["cf_source_id"], []).append(row)
    columns = reference.column_names

    def bare(batch: dict) -> dict:
        out = {c: [] for c in columns}
        for sid in batch["id"]:
            for row in by_id.get(sid, []):
                for c in columns:
                    out[c].append(row[c])
        return out

    settings = {
        "CrossAug, augment()": lambda: augmenter.augment(data, batch_size=args.batch_size,
                                                          load_from_cache_file=False),
        "CrossAug, plain map": lambda: data.map(augmenter, batched=True, batch_size=args.batch_size,
                                                load_from_cache_file=False),
        "bare map, same rows": lambda: data.map(bare, batched=True, batch_size=args.batch_size,
                                                remove_columns=data.column_names, load_from_cache_file=False),
    }
    times: dict[str, list[float]] = {k: [] for k in settings}
    for _ in range(args.repeats):
        for name, run in settings.items():
            cfaug_text._tokenize.cache_clear()  # no run profits from the tokens an earlier run cached
            cfaug_text._keys.cache_clear()
            t0 = time.perf_counter()
            out = run()
            times[name].append(time.perf_counter() - t0)
            assert len(out) == len(reference), name
    rate = {k: args.rows / statistics.median(v) for k, v in times.items()}
    floor = rate["bare map, same rows"]
    result = {"rows": args.rows, "output_rows": len(reference), "repeats": args.repeats,
              "batch_size": args.batch_size, "machine": f"{platform.processor() or platform.machine()}, CPU",
              "rows_per_s": rate, "seconds": times,
              "ratio_to_bare_map": {k: v / floor for k, v in rate.items()},
              "counts": augmenter.stats.to_dict()}
    lines = [f"Pipeline cost with a free generator: {args.rows} FEVEROUS rows -> {len(reference)} output rows, "
             f"map batch size {args.batch_size}, median of {args.repeats} interleaved runs, CPU.", "",
             "| setting | input rows/s | ratio to bare map |", "|---|---|---|"]
    lines += [f"| {k} | {rate[k]:.0f} | {rate[k] / floor:.2f} |" for k in settings]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "pipeline_overhead.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "pipeline_overhead.md").write_text(text)


if __name__ == "__main__":
    main()
