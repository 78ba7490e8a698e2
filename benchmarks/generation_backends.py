"""Generation backends on the same inputs and decoding: transformers vs CTranslate2 (float32, int8_float32, int8),
beside the machine's compute bound.

    python -m benchmarks.generation_backends [--rows 32] [--repeats 2] [--backends transformers ct2-float32 ...]

Every setting runs CrossAug's shipped claim generator (SmolLM2-135M-Instruct + LoRA) on the same SUPPORTS claims of
the embedded FEVEROUS sample with CrossAug's decoding (beam 5, 5 outputs per claim), both as the raw generator
(``generate``) and as the whole augmenter (``CrossAugAugmenter(...).augment``, checker included). Outputs are
compared with transformers': the share of claims whose first output, and whose whole list of 5, is the same.

The compute bound: a float32 matmul probe measures the GFLOP/s this process reaches right now; with about
2 x parameters FLOPs per generated token per beam, ``bound tokens/s = GFLOP/s / (2 x params)``, and each setting's
``tokens/s`` (generated tokens over all beams, prompt tokens not counted) is shown as a share of it.

Settings run in interleaved order after one warm-up each; the table gives medians. Writes
``benchmarks/results/generation_backends.{json,md}``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT
BACKENDS = {"transformers": ("transformers", None), "ct2-float32": ("ctranslate2", "float32"),
            "ct2-int8_float32": ("ctranslate2", "int8_float32"), "ct2-int8": ("ctranslate2", "int8")}


def matmul_gflops(n: int = 1024, repeats: int = 5) -> float:
    import torch

    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


def main() -> None:
    ap = harness.parser(__doc__, smoke={"rows": 2, "repeats": 1, "backends": ["transformers"]})
    ap.add_argument("--rows", type=int, default=32, help="SUPPORTS claims to generate for")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=list(BACKENDS))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()

    import torch
    from datasets import disable_progress_bars

    from cfaug_hf import CrossAugAugmenter, TaskSchema
    from cfaug_hf.data import load_feverous_sample
    from cfaug_hf.methods.crossaug.recipes import default_claim_generator

    disable_progress_bars()
    data = load_feverous_sample().filter(lambda lab: lab == "SUPPORTS", input_columns="label")
    data = data.select(range(min(args.rows, len(data))))
    claims = list(data["claim"])
    schema = TaskSchema.fact_verification(id_column="id")
    gens = {}
    for name in args.backends:
        engine, compute = BACKENDS[name]
        t0 = time.perf_counter()
        gens[name] = default_claim_generator().use_backend(engine, **({"compute_type": compute} if compute else {}))
        print(f"{name}: ready in {time.perf_counter() - t0:.1f}s", flush=True)
    params = sum(p.numel() for p in gens[args.backends[0]].model.parameters())
    tok = gens[args.backends[0]].tokenizer
    cfg = gens[args.backends[0]].config
    for gen in gens.values():
        gen.generate(claims[:2])  # warm-up
    times: dict[str, dict[str, list[float]]] = {n: {"generate": [], "augment": []} for n in gens}
    outputs: dict[str, list[list[str]]] = {}
    rows_out: dict[str, int] = {}
    gflops = []
    for _ in range(args.repeats):
        gflops.append(matmul_gflops())
        for name, gen in gens.items():
            t0 = time.perf_counter()
            outputs[name] = gen.generate(claims)
            times[name]["generate"].append(time.perf_counter() - t0)
            augmenter = CrossAugAugmenter(gen, schema)
            t0 = time.perf_counter()
            rows_out[name] = len(augmenter.augment(data, load_from_cache_file=False))
            times[name]["augment"].append(time.perf_counter() - t0)
            print(name, {k: round(v[-1], 1) for k, v in times[name].items()}, flush=True)
    gflops.append(matmul_gflops())
    probe = statistics.median(gflops)
    bound = probe * 1e9 / (2 * params)
    ref = outputs.get("transformers")
    n = len(claims)
    results = {}
    for name in gens:
        gen_s, aug_s = statistics.median(times[name]["generate"]), statistics.median(times[name]["augment"])
        new_tokens = sum(len(tok(o, add_special_tokens=False)["input_ids"]) + 1 for outs in outputs[name] for o in outs)
        results[name] = {
            "generate_s": gen_s, "augment_s": aug_s, "claims_per_s_generate": n / gen_s,
            "claims_per_s_augment": n / aug_s, "tokens_per_s": new_tokens / gen_s,
            "share_of_bound": new_tokens / gen_s / bound, "rows_out": rows_out[name],
            "same_first_output": (sum(a[0] == b[0] for a, b in zip(outputs[name], ref)) / n) if ref else None,
            "same_all_outputs": (sum(a == b for a, b in zip(outputs[name], ref)) / n) if ref else None}
    base = results.get("transformers")
    device = (f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"{torch.get_num_threads()} torch threads)")
    setup = (f"{n} SUPPORTS claims of the embedded FEVEROUS sample; CrossAug's shipped claim generator "
             f"(SmolLM2-135M-Instruct + LoRA, {params / 1e6:.0f}M parameters); beam {cfg.num_beams}, "
             f"{cfg.num_return_sequences} outputs per claim, max_new_tokens {cfg.max_new_tokens}, batch "
             f"{cfg.batch_size}; median of {args.repeats} interleaved runs on {device}. Matmul probe "
             f"{probe:.1f} GFLOP/s (float32, 1024x1024); 2 x parameters FLOPs per token gives a bound of "
             f"{bound:.0f} tokens/s")
    lines = ["# Generation backends", "", setup + ".", "",
             harness.markdown_table(
                 ["backend", "claims/s (generate)", "claims/s (augment)", "speed-up (augment)", "tokens/s",
                  "share of bound", "same first output", "same 5 outputs", "rows out"],
                 [[backend, f"{r['claims_per_s_generate']:.3f}", f"{r['claims_per_s_augment']:.3f}",
                   f"{r['claims_per_s_augment'] / base['claims_per_s_augment']:.2f}x" if base else "-",
                   f"{r['tokens_per_s']:.0f}", f"{100 * r['share_of_bound']:.1f}%",
                   *((f"{100 * r['same_first_output']:.0f}%", f"{100 * r['same_all_outputs']:.0f}%") if ref
                     else ("-", "-")), r["rows_out"]] for backend, r in results.items()])]
    lines += ["", "Beam search runs all beams for every generated token, so tokens/s counts the returned outputs only "
              "and understates the work done; the share of the bound is a floor. Sampled decoding (the editors, the "
              "LLM augmenter) stays on transformers under every backend: CTranslate2's sampler cannot be reseeded "
              "per row (OpenNMT/CTranslate2#1757)."]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "generation_backends.md").write_text(text)
    (args.out / "generation_backends.json").write_text(json.dumps(
        {"setup": setup, "rows": n, "params": params, "matmul_gflops": gflops, "seconds": times, "results": results,
         "outputs": outputs}, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
