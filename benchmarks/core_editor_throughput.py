"""An LLM augmenter's generation path against the same model's raw batched ``generate`` on the same prompts, and
against a per-row loop: CORE's editor (``--method core``) or LLM-prompted counterfactuals (``--method llm``).

    python -m benchmarks.core_editor_throughput [--method core|llm] [--rows 32] [--max-new-tokens 32] [--repeats 3]

Rows: CAD-SNLI dev. ``core``: entailment/contradiction pairs, the prompts CORE builds (instructions, 4
demonstrations, target relation), SmolLM2-135M-Instruct through the chat template. ``llm``: all rows, the prompt
LLMCounterfactualAugmenter builds (guidelines, 2 demonstrations, both other relations in one prompt), the same
model continuing the prompt as plain text (``local_llm(chat=False)``). Sampling at temperature 0.7,
``max_new_tokens`` per answer, batch 16, stopping at a newline.

* augmenter: ``COREAugmenter(local_llm(...), mode="editor_only")`` or ``LLMCounterfactualAugmenter(local_llm(...))``
  ``.augment(dataset)`` end to end (prompting, per-row seeded sampling, parsing, filters, provenance, Arrow
  writing);
* raw batched generate: the tokenizer's chat template and ``model.generate(do_sample=True, stop_strings=["\n"])``
  over the same prompts in batches of 16, longest first, left-padded, nothing else (one global RNG: not
  reproducible per row);
* per-row loop: the same ``generate`` call one prompt at a time.

Timings interleave the three, ``--repeats`` times, and report the median. Writes
benchmarks/results/core_editor_throughput.{md,json} or llm_throughput.{md,json}.
"""

from __future__ import annotations

import json
import statistics
import time

from benchmarks import harness

from scripts.shared_data import cad_nli



def main() -> None:
    parser = harness.parser(__doc__, smoke={"rows": 2, "max_new_tokens": 4, "repeats": 1})
    parser.add_argument("--method", choices=("core", "llm"), default="core")
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device-note", default="CPU, 2 cores")
    args = parser.parse_args()

    import torch

    from cfaug_hf import COREAugmenter, LLMCounterfactualAugmenter, TaskSchema, local_llm
    from cfaug_hf.methods import core, llm as llm_method

    schema = TaskSchema.nli(id_column="id")
    data = cad_nli("original", "dev")
    chat = args.method == "core"
    if args.method == "core":
        data = data.filter(lambda label: label != "neutral", input_columns="label")
    data = data.select(range(min(args.rows, len(data))))
    llm = local_llm(max_new_tokens=args.max_new_tokens, batch_size=16, chat=chat)
    if args.method == "core":
        augmenter = COREAugmenter(llm, schema, mode="editor_only", keep_original=False)
        flip = {"entailment": "contradiction", "contradiction": "entailment"}
        prompts = [core.build_prompt("nli", {"premise": r["premise"], "hypothesis": r["hypothesis"],
                                             "label": r["label"]}, flip[r["label"]], None) for r in data]
    else:
        augmenter = LLMCounterfactualAugmenter(llm, schema, keep_original=False)
        prompts = [llm_method.build_prompt("nli", {"premise": r["premise"], "hypothesis": r["hypothesis"],
                                                   "label": r["label"],
                                                   "targets": augmenter.target_options(r["label"])}) for r in data]
    tok, model = llm.tokenizer, llm.model
    texts = [tok.apply_chat_template([{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True)
             for p in prompts] if chat else prompts
    tok.padding_side = "left"

    def raw(batch_size: int) -> None:
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), batch_size):
            enc = tok([texts[i] for i in order[start:start + batch_size]], return_tensors="pt", padding=True,
                      add_special_tokens=not chat)
            with torch.inference_mode():
                model.generate(**enc, do_sample=True, temperature=0.7, top_p=1.0, top_k=0,
                               max_new_tokens=args.max_new_tokens, pad_token_id=tok.pad_token_id,
                               stop_strings=["\n"], tokenizer=tok)

    def through_augmenter() -> None:
        augmenter.augment(data, load_from_cache_file=False)

    runs: dict[str, list[float]] = {"augmenter": [], "raw batched generate": [], "per-row loop": []}
    through_augmenter()  # warm-up (merges nothing, loads kernels)
    for _ in range(args.repeats):
        for name, fn in (("augmenter", through_augmenter), ("raw batched generate", lambda: raw(16)),
                         ("per-row loop", lambda: raw(1))):
            start = time.perf_counter()
            fn()
            runs[name].append(time.perf_counter() - start)
    median = {k: statistics.median(v) for k, v in runs.items()}
    result = {"method": args.method, "device": args.device_note, "rows": len(data), "max_new_tokens": args.max_new_tokens,
              "repeats": args.repeats, "seconds": runs, "median_s": median,
              "prompts_per_s": {k: round(len(data) / v, 2) for k, v in median.items()},
              "augmenter_vs_raw": round(median["raw batched generate"] / median["augmenter"], 3),
              "augmenter_vs_per_row": round(median["per-row loop"] / median["augmenter"], 3),
              "stats": augmenter.stats.to_dict()}
    name = "core_editor_throughput" if args.method == "core" else "llm_throughput"
    what = ("CORE editor", "4 demonstrations each, chat template") if args.method == "core" else (
        "LLM-prompted counterfactuals", "guidelines + 2 demonstrations, both targets per prompt, plain continuation")
    table = harness.markdown_table(
        ["path", "seconds", "prompts/s", "augmenter's speed relative to it"],
        [[path, f"{median[path]:.1f}", result["prompts_per_s"][path],
          "1.00x" if path == "augmenter" else f"{median[path] / median['augmenter']:.2f}x"] for path in runs])
    lines = [f"# {what[0]} throughput", "",
             f"Where: {args.device_note}. {len(data)} CAD-SNLI dev prompts ({what[1]}), SmolLM2-135M-"
             f"Instruct, sampling, {args.max_new_tokens} new tokens at most, batch 16; median of {args.repeats} "
             "interleaved runs.", "", table, "",
             f"Target: the augmenter at >= 0.8x the raw batched generate; measured "
             f"{result['augmenter_vs_raw']:.2f}x. Editor outcomes in the last run: {json.dumps(result['stats'])}"]
    harness.write_results(name, result, "\n".join(lines))
    print("\n".join(lines))

if __name__ == "__main__":
    main()
