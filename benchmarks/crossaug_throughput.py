"""CrossAug throughput against its floor (raw batched generate) and a per-row loop, measured in one run.

    python benchmarks/crossaug_throughput.py [--generator runs/demo/generator] [--rows 96] [--batch-size 32]

All three process the same SUPPORTS claims of the embedded FEVEROUS sample with the same generator:
  floor     generator.generate(claims) in batches of --batch-size: the model cost alone;
  crossaug  dataset.map(CrossAugAugmenter(generator), batched=True, batch_size=--batch-size): the whole pipeline
            (validation, generation, diff, evidence substitution, provenance, Arrow writing);
  per-row   a Python loop that generates one claim at a time, then diffs and substitutes (what the original code
            and most augmentation libraries do).
Targets: crossaug >= 80% of the floor's rows/s and >= 8x the per-row loop. Without --generator, SmolLM2-135M-Instruct
(untrained, same size and decoding cost as the trained one) is used. Writes benchmarks/results/crossaug_throughput.*
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generator", help="saved Generator folder (default: SmolLM2 base with the CrossAug template)")
    ap.add_argument("--rows", type=int, default=96, help="SUPPORTS claims to process")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()

    import torch

    from cfaug_hf import CrossAugAugmenter, Generator
    from cfaug_hf.embedded import load_feverous_sample
    from cfaug_hf.methods.crossaug.recipes import NEGATION_TEMPLATE
    from cfaug_hf.models import SMOLLM2
    from cfaug_hf.text import diff_tokens, substitute_span

    if args.generator:
        gen = Generator.from_pretrained(args.generator)
    else:
        gen = Generator.from_base(SMOLLM2, input_template=NEGATION_TEMPLATE, num_beams=5, max_new_tokens=48,
                                  max_source_length=96)
    gen.config.batch_size = args.batch_size
    data = load_feverous_sample().filter(lambda lab: lab == "SUPPORTS", input_columns="label")
    data = data.select(range(min(args.rows, len(data))))
    claims = list(data["claim"])
    n = len(claims)
    gen.generate(claims[:2])  # warm-up

    t = time.perf_counter()
    gen.generate(claims)
    floor_s = time.perf_counter() - t

    aug = CrossAugAugmenter(gen)
    t = time.perf_counter()
    out = data.map(aug, batched=True, batch_size=args.batch_size, load_from_cache_file=False)
    crossaug_s = time.perf_counter() - t

    gen.config.batch_size = 1
    t = time.perf_counter()
    for row in data:
        new = gen.generate([row["claim"]])[0][0]
        diff = diff_tokens(row["claim"], new)
        substitute_span(row["evidence"], diff, row["claim"], new)
    loop_s = time.perf_counter() - t

    rates = {"floor": n / floor_s, "crossaug": n / crossaug_s, "per-row loop": n / loop_s}
    ratio_floor = rates["crossaug"] / rates["floor"]
    ratio_loop = rates["crossaug"] / rates["per-row loop"]
    lines = ["| pipeline | rows/s | relative to crossaug |", "|---|---|---|"]
    for name, r in rates.items():
        lines.append(f"| {name} | {r:.2f} | {r / rates['crossaug']:.2f} |")
    verdict = (f"crossaug / floor = {ratio_floor:.2f} (target >= 0.80: {'met' if ratio_floor >= 0.8 else 'NOT met'}); "
               f"crossaug / per-row loop = {ratio_loop:.1f}x (target >= 8x: {'met' if ratio_loop >= 8 else 'NOT met'})")
    table = "\n".join(lines)
    print(table)
    print(verdict)
    args.out.mkdir(parents=True, exist_ok=True)
    setup = (f"{n} SUPPORTS claims, batch size {args.batch_size}, generator {gen.base_model} "
             f"(beams {gen.config.num_beams}, max_new_tokens {gen.config.max_new_tokens}), "
             f"{torch.get_num_threads()} torch threads, {platform.processor() or platform.machine()}")
    (args.out / "crossaug_throughput.md").write_text(
        f"# CrossAug throughput\n\n{setup}. One run; figures are ratios within it.\n\n{table}\n\n{verdict}\n\n"
        f"Output rows: {len(out)} from {n} inputs.\n")
    (args.out / "crossaug_throughput.json").write_text(json.dumps(
        {"setup": setup, "rows": n, "rows_per_s": rates, "crossaug_over_floor": ratio_floor,
         "crossaug_over_loop": ratio_loop}, indent=1))


if __name__ == "__main__":
    main()
