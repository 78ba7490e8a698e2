"""How long a generator takes to load, and what merging a LoRA adapter and remembering fingerprints save.

    python -m benchmarks.load_time [--repeats 3] [--rows 16]

Load times run each in a fresh process (what every script and every ``num_proc`` worker that loads its own model
pays), in interleaved order, ``--repeats`` times; the figure is the ``from_base`` / ``from_pretrained`` call
alone, imports excluded:

* ``GGUF file, every load``: SmolLM2-135M-Instruct dequantised from the embedded GGUF file each time (the earlier
  behaviour, forced here by bypassing the cache);
* ``first load, converts``: the same with an empty cache: dequantise once and write the safetensors copy;
* ``cached safetensors copy``: every later load;
* ``LoRA generator folder``: a saved adapter (r=16 on all linear layers) on the cached base.

In-process, on the LoRA generator: ``generate`` on ``--rows`` claims (5 beams) with the adapter kept apart against
merged into the base (outputs compared), and ``fingerprint()`` first call against a remembered one, with the bytes
hashed with and without de-duplicating tied weights. Writes ``benchmarks/results/load_time.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT
LOADS = ("GGUF file, every load", "first load, converts", "cached safetensors copy", "LoRA generator folder")


def child(setting: str, cache: str, lora_dir: str) -> None:
    os.environ["CFAUG_HF_CACHE"] = cache
    from cfaug_hf import Generator, pretrained
    from cfaug_hf.pretrained import SMOLLM2

    if setting == "GGUF file, every load":
        pretrained.local_copy = lambda ref: ref  # the behaviour before the cache
    t0 = time.perf_counter()
    if setting == "LoRA generator folder":
        gen = Generator.from_pretrained(lora_dir)
    else:
        gen = Generator.from_base(SMOLLM2)
    print(json.dumps({"seconds": time.perf_counter() - t0, "base_model": gen.base_model}))


def run_child(*args: str) -> dict:
    # run as a module from the repository root, as the command itself is, so `benchmarks` imports in the child
    proc = subprocess.run([sys.executable, "-m", "benchmarks.load_time", "--child", *args], capture_output=True,
                          text=True, cwd=ROOT)
    if proc.returncode:
        raise SystemExit(f"{args[0]} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = harness.parser(__doc__, smoke={"repeats": 1, "rows": 2})
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=16, help="claims generated for the merge comparison")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child)

    import torch
    from peft import LoraConfig, get_peft_model

    from cfaug_hf import Generator
    from cfaug_hf.data import load_feverous_sample
    from cfaug_hf.fingerprint import digest_module
    from cfaug_hf.methods.crossaug.recipes import NEGATION_TEMPLATE
    from cfaug_hf.pretrained import SMOLLM2

    work = Path(tempfile.mkdtemp(prefix="cfaug-load-"))
    cache = work / "cache"
    os.environ["CFAUG_HF_CACHE"] = str(cache)
    # A LoRA generator with a non-trivial adapter (random B, so merging changes the weights).
    gen = Generator.from_base(SMOLLM2, input_template=NEGATION_TEMPLATE, num_beams=5, max_new_tokens=32)
    gen.model = get_peft_model(gen.model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear",
                                                     task_type="CAUSAL_LM"))
    torch.manual_seed(0)
    with torch.no_grad():
        for name, p in gen.model.named_parameters():
            if "lora_B" in name:
                p.normal_(std=0.002)
    lora_dir = gen.save_pretrained(work / "lora")

    times: dict[str, list[float]] = {k: [] for k in LOADS}
    for _ in range(args.repeats):
        for setting in LOADS:
            c = work / f"fresh-{len(times[setting])}" if setting == "first load, converts" else cache
            times[setting].append(run_child(setting, str(c), str(lora_dir))["seconds"])
            print(setting, round(times[setting][-1], 2), flush=True)
    load_s = {k: statistics.median(v) for k, v in times.items()}

    claims = [c for c, lab in zip(load_feverous_sample()["claim"], load_feverous_sample()["label"])
              if lab == "SUPPORTS"][:args.rows]
    gen = Generator.from_pretrained(lora_dir)
    gen.generate(claims[:2])  # warm-up (merges)
    gen.unmerge_adapter()
    gen_times: dict[str, list[float]] = {"adapter apart": [], "adapter merged": []}
    outputs = {}
    for _ in range(args.repeats):
        for mode in gen_times:
            if mode == "adapter apart":
                gen.unmerge_adapter()
                gen.merge_adapter = lambda: None  # keep it apart for this call
            else:
                del gen.merge_adapter
            t0 = time.perf_counter()
            outputs[mode] = gen.generate(claims)
            gen_times[mode].append(time.perf_counter() - t0)
    same = outputs["adapter apart"] == outputs["adapter merged"]
    gen_s = {k: statistics.median(v) for k, v in gen_times.items()}

    gen.forget_fingerprint()
    t0 = time.perf_counter()
    gen.fingerprint()
    fp_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    gen.fingerprint()
    fp_again = time.perf_counter() - t0
    base = gen.model.get_base_model()
    all_bytes = sum(t.numel() * t.element_size() for t in base.state_dict().values())
    unique = {}
    for t in base.state_dict().values():
        unique[(t.data_ptr(), t.numel())] = t.numel() * t.element_size()
    t0 = time.perf_counter()
    digest_module(base)
    digest_s = time.perf_counter() - t0

    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, CPU only"
    lines = [f"Generator load time (SmolLM2-135M-Instruct from the embedded GGUF file), each load in a fresh process, "
             f"median of {args.repeats} interleaved runs; {machine}.", "",
             harness.markdown_table(["load", "seconds", "ratio to GGUF every load"],
                                    [[k, f"{load_s[k]:.2f}", f"{load_s[k] / load_s['GGUF file, every load']:.3f}"]
                                     for k in LOADS])]
    lines += ["", f"LoRA generator (r=16, all linear layers), {len(claims)} claims, 5 beams, max 32 new tokens, "
              f"median of {args.repeats} interleaved runs; identical outputs: {same}.", "",
              harness.markdown_table(["generate", "seconds", "speed-up"],
                                     [[k, f"{v:.2f}", f"{gen_s['adapter apart'] / v:.2f}x"] for k, v in gen_s.items()]),
              "", harness.markdown_table(["fingerprint", "value"], [
                  ["first call (LoRA generator)", f"{fp_first:.3f} s"],
                  ["remembered (weights unchanged)", f"{fp_again * 1000:.2f} ms"],
                  ["base model bytes hashed, tied weights once", f"{sum(unique.values()) / 2**20:.0f} MiB (state dict "
                   f"{all_bytes / 2**20:.0f} MiB; {digest_s:.2f} s)"]])]
    text = "\n".join(lines) + "\n"
    print(text)
    harness.results_dir().mkdir(exist_ok=True)
    (harness.results_dir() / "load_time.json").write_text(json.dumps({
        "machine": machine, "repeats": args.repeats, "load_seconds": times, "generate_seconds": gen_times,
        "same_outputs": same, "fingerprint_first_s": fp_first, "fingerprint_again_s": fp_again,
        "hashed_bytes": sum(unique.values()), "state_dict_bytes": all_bytes}, indent=2) + "\n")
    (harness.results_dir() / "load_time.md").write_text(text)


if __name__ == "__main__":
    main()
