"""Generation engines on the library's two workloads, beside the machine's compute floor.

    python -m benchmarks.engines [--reviews 40] [--claims 40] [--workloads editor claims]

* ``editor``: the shipped sentiment editor (SmolLM2-135M-Instruct + LoRA) rewriting up to 3 sentences of each of
  ``--reviews`` CAD IMDb dev reviews toward the other label, with the neighbouring sentences as context and 4
  sampled candidates per edit (CORE's ``edit_sentences=3`` set-up). Settings: ``generate`` (transformers'
  ``model.generate`` with the per-row Gumbel noise: the library before the engine table) and ``shared-prefix``
  (the transformers engine's sampler: one prefill per prompt, a prefix tree over each row's candidates, finished
  candidates dropped, the next rows joining the running batch when half of its rows have finished), ``shared-prefix,
  one batch at a time`` (the same sampler without joining: the sampler before 2026-12-01), ``shared-prefix,
  whole-vocabulary noise`` (each candidate's noise drawn over the whole vocabulary: the sampler before 2026-12-02)
  and, with ``--batch-sizes``, the sampler at other rows a batch. Checked: identical candidates, and the same candidates
  again with the rows shuffled in batches of another size (per-row reproducibility).
* ``claims``: CrossAug's shipped claim generator on ``--claims`` SUPPORTS claims of the embedded FEVEROUS sample,
  beam 5, 5 outputs. Settings: transformers, CTranslate2 float32 (``auto``) and int8, each also as one batch on all
  threads (CTranslate2 before 2026-12-02), and float32 with twice the sequences a batch; agreement of the top output
  and of all 5 with transformers.

The floor: a float32 matmul probe gives the GFLOP/s this process reaches; about 2 x parameters FLOPs per
generated token gives the tokens/s a perfect engine would reach; ``share of floor`` is tokens/s over that (sampled
candidates count every token of every candidate; beams count the returned outputs only, so their share is a lower
bound). Writes ``benchmarks/results/engines.{json,md}`` after each workload.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import random
import statistics
import time
from typing import Any

from benchmarks import harness

from benchmarks.generation_backends import matmul_gflops
from scripts.shared_data import cad_sentiment



def editor_inputs(n_reviews: int) -> tuple[list[str], list[int]]:
    from cfaug_hf.components.editor import edit_input
    from cfaug_hf.fingerprint import stable_hash
    from cfaug_hf.text.sentences import split_sentences

    rows = cad_sentiment("orig", "dev")
    inputs, seeds = [], []
    for r in range(min(n_reviews, len(rows))):
        sentences = split_sentences(rows[r]["text"])
        target = "positive" if rows[r]["label"].startswith("neg") else "negative"
        for p in range(min(3, len(sentences))):
            context = " ".join([*sentences[max(0, p - 1):p], "[edit]", *sentences[p + 1:p + 2]])
            inputs.append(edit_input(sentences[p], target, context=context))
            seeds.append(stable_hash("engines-bench", r, p) % 2 ** 31)
    return inputs, seeds


def tokens_of(tok, outputs: list[list[str]]) -> int:
    return sum(len(tok(o, add_special_tokens=False)["input_ids"]) + 1 for outs in outputs for o in outs)


def work_of(tok, prompts: list[str], outputs: list[list[str]]) -> dict:
    """What any engine must compute besides what the floor counts: the floor counts every token of every candidate
    (`tokens_of`), but the prompts must be read too, and candidates that start alike share their first tokens (the
    shared-prefix sampler computes them once). ``ceiling`` is the share of floor of a perfect engine that reads each
    prompt once and each distinct candidate prefix once, all at the probe's rate: no engine can show more."""
    counted = tokens_of(tok, outputs)
    prompt = sum(len(tok(p, add_special_tokens=False)["input_ids"]) for p in prompts)
    distinct = 0
    for outs in outputs:  # the candidates' prefix tree: one node per distinct token prefix (plus each one's end)
        ids = [tuple(tok(o, add_special_tokens=False)["input_ids"]) + (-1,) for o in outs]
        distinct += len({seq[:n] for seq in ids for n in range(1, len(seq) + 1)})
    return {"counted_tokens": counted, "prompt_tokens": prompt, "distinct_candidate_tokens": distinct,
            "ceiling_share_of_floor": counted / (prompt + distinct)}


@contextlib.contextmanager
def patched(module: Any, attributes: dict):
    """``module`` with ``attributes`` replaced, put back afterwards: a setting the library had before a saving, for
    the saving's speed-up within one run."""
    saved = {name: getattr(module, name) for name in attributes}
    for name, value in attributes.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def sampler_without(feature: str):
    """The transformers sampler without one of its savings: ``"joining"`` (one batch at a time, no row joins a
    running batch: the sampler before 2026-12-01) or ``"prefix noise"`` (each candidate's noise drawn over the whole
    vocabulary: the sampler before 2026-12-02); ``""`` changes nothing."""
    from cfaug_hf.generation.engines import transformers as engine

    return patched(engine, {"joining": {"_merged_caches": lambda *args, **kwargs: None},
                            "prefix noise": {"prefix_stable": lambda: False}}.get(feature, {}))


#: Settings run as the shared-prefix sampler without one saving (`sampler_without`), by name.
WITHOUT = {"shared-prefix, one batch at a time": "joining", "shared-prefix, whole-vocabulary noise": "prefix noise"}


def run_editor(args: argparse.Namespace, floor_per_param: float) -> dict:
    from cfaug_hf import Editor

    inputs, seeds = editor_inputs(args.reviews)
    editor = Editor.default("sentiment")
    params = sum(p.numel() for p in editor.model.parameters())
    editor.generate(inputs[:2], seeds=seeds[:2])  # warm-up (merges the adapter)
    out: dict = {"edits": len(inputs), "reviews": args.reviews, "params": params, "settings": {}}
    texts = {}
    default_batch = editor.config.batch_size
    settings = [("generate", False, default_batch), ("shared-prefix", True, default_batch)]
    # More rows a batch keep more sequences in each decoding step once candidates end (a step of 16 sequences
    # reaches about half the tokens/s of one of 64 on this model); a row's candidates do not depend on its batch.
    settings += [(f"shared-prefix, batches of {b}", True, b) for b in args.batch_sizes if b != default_batch]
    # the sampler before rows joined a running batch: one batch at a time (what it falls back to without a cache
    # it can merge), for the speed-up of joining within this run
    settings.append(("shared-prefix, one batch at a time", True, default_batch))
    settings.append(("shared-prefix, whole-vocabulary noise", True, default_batch))
    if "vllm" in args.engines:
        settings.append(("vllm", True, default_batch))
    # The sampler's settings run --repeats rounds, each round in another order, and keep their median time: run one
    # after another once, later settings ran up to 15% faster than earlier ones (2026-12-02), more than the settings
    # differ. generate (the baseline) and vLLM (a load of its own) run once.
    sampler = [setting for setting in settings if setting[0].startswith("shared-prefix")]
    rounds = [[s for s in settings if s not in sampler][:1]] + [
        sampler[r % len(sampler):] + sampler[:r % len(sampler)] for r in range(args.repeats)] + [
        [s for s in settings if s[0] == "vllm"]]
    runs: dict[str, list[float]] = {}
    for name, shared, batch in (s for round_ in rounds for s in round_):
        editor.shared_prefix = shared
        editor.configure(batch_size=batch)
        if name == "vllm":
            t0 = time.perf_counter()
            editor.use_backend("vllm")
            out["vllm_load_s"] = round(time.perf_counter() - t0, 1)
            editor.generate(inputs[:2], seeds=seeds[:2])
        t0 = time.perf_counter()
        with sampler_without(WITHOUT.get(name, "")):
            texts[name] = editor.generate(inputs, seeds=seeds)
        runs.setdefault(name, []).append(time.perf_counter() - t0)
        print(name, f"{runs[name][-1]:.1f} s", flush=True)
    for name, _, _ in settings:
        seconds, n_tokens = statistics.median(runs[name]), tokens_of(editor.tokenizer, texts[name])
        out["settings"][name] = {"seconds": round(seconds, 1), "runs_s": [round(x, 1) for x in runs[name]],
                                 "edits_per_s": len(inputs) / seconds, "seconds_per_review": seconds / args.reviews,
                                 "tokens_per_s": n_tokens / seconds,
                                 "share_of_floor": n_tokens / seconds / (floor_per_param / params)}
    out.update(work_of(editor.tokenizer, editor.prompts(inputs)[0], texts["shared-prefix"]))
    out["identical_candidates"] = sum(a == b for a, b in zip(texts["generate"], texts["shared-prefix"]))
    out["identical_candidates_by_setting"] = {name: sum(a == b for a, b in zip(texts["generate"], texts[name]))
                                              for name in texts if name.startswith("shared-prefix")}
    order = list(range(len(inputs)))
    random.Random(0).shuffle(order)
    # the engine still loaded (vLLM, else the sampler as it ships): its rows again, shuffled, in batches of another size
    last = "vllm" if "vllm" in texts else "shared-prefix"
    editor.configure(batch_size=5)
    again = editor.generate([inputs[i] for i in order], seeds=[seeds[i] for i in order])
    out["reproducible_rows"] = {last: sum(again[j] == texts[last][i] for j, i in enumerate(order))}
    base = out["settings"]["generate"]["edits_per_s"]
    for s in out["settings"].values():
        s["speed_up"] = s["edits_per_s"] / base
    return out


#: (setting, backend, compute type, CTranslate2 engine attributes it runs with): one worker on all threads is how
#: CTranslate2 decoded before 2026-12-02; 80 sequences a batch gives each of 2 workers a batch of 8 claims x 5 beams.
CLAIM_SETTINGS = (("transformers", "transformers", None, {}), ("ctranslate2-float32 (auto)", "auto", None, {}),
                  ("ctranslate2-float32, one batch on all threads", "ctranslate2", "float32",
                   {"ONE_THREAD_WORKERS": False}),
                  ("ctranslate2-float32, 80 sequences a batch", "ctranslate2", "float32", {"SEQUENCES_PER_BATCH": 80}),
                  ("ctranslate2-int8", "ctranslate2", "int8", {}),
                  ("ctranslate2-int8, one batch on all threads", "ctranslate2", "int8", {"ONE_THREAD_WORKERS": False}))


def ct2_patched(attributes: dict):
    """The CTranslate2 engine module with ``attributes`` replaced (engines loaded inside keep them for their decoding:
    the workers are set at load time, the batch size read at each call)."""
    from cfaug_hf.generation.engines import ctranslate2 as engine

    return patched(engine, attributes)


def run_claims(args: argparse.Namespace, floor_per_param: float) -> dict:
    from datasets import disable_progress_bars

    from cfaug_hf.data import load_feverous_sample
    from cfaug_hf.methods.crossaug.recipes import default_claim_generator

    disable_progress_bars()
    data = load_feverous_sample().filter(lambda lab: lab == "SUPPORTS", input_columns="label")
    claims = list(data["claim"][:args.claims])
    out: dict = {"claims": len(claims), "settings": {}}
    texts = {}
    for name, backend, compute, patched in CLAIM_SETTINGS:
        if name != "transformers" and args.claim_settings and name not in args.claim_settings:
            continue
        with ct2_patched(patched):
            gen = default_claim_generator().use_backend(backend, **({"compute_type": compute} if compute else {}))
            params = sum(p.numel() for p in gen.model.parameters())
            gen.generate(claims[:2])
            t0 = time.perf_counter()
            texts[name] = gen.generate(claims)
            seconds = time.perf_counter() - t0
        n_tokens = tokens_of(gen.tokenizer, texts[name])
        ref = texts["transformers"]
        out["settings"][name] = {
            "engine": gen.backend.describe() if gen.backend is not None else {"engine": "transformers"},
            "seconds": round(seconds, 1), "claims_per_s": len(claims) / seconds, "tokens_per_s": n_tokens / seconds,
            "share_of_floor": n_tokens / seconds / (floor_per_param / params),
            "same_top_output": sum(a[:1] == b[:1] for a, b in zip(texts[name], ref)) / len(claims),
            "same_all_outputs": sum(a == b for a, b in zip(texts[name], ref)) / len(claims)}
        print(name, out["settings"][name], flush=True)
    base = out["settings"]["transformers"]["claims_per_s"]
    for s in out["settings"].values():
        s["speed_up"] = s["claims_per_s"] / base
    return out


def write(results: dict, name: str = "engines") -> None:
    """``benchmarks/results/<name>.{json,md}`` from ``results`` (callable again on a saved JSON to re-render it)."""
    lines = ["# Generation engines", "", results["setup"], ""]
    editor = results.get("editor")
    if editor:
        lines += [f"## Editor: {editor['edits']} sentence edits of {editor['reviews']} CAD IMDb dev reviews, 4 sampled "
                  f"candidates each", "",
                  harness.markdown_table(
                      ["setting", "edits/s", "s per review", "speed-up", "tokens/s", "share of floor", "runs (s)"],
                      [[setting, f"{s['edits_per_s']:.2f}", f"{s['seconds_per_review']:.2f}", f"{s['speed_up']:.2f}x",
                        f"{s['tokens_per_s']:.0f}", f"{100 * s['share_of_floor']:.0f}%",
                        ", ".join(map(str, s.get("runs_s", [s.get("seconds", "")])))]
                       for setting, s in editor["settings"].items()])]
        again = ", ".join(f"{k} {v}/{editor['edits']}" for k, v in editor["reproducible_rows"].items())
        by_setting = editor.get("identical_candidates_by_setting", {})
        if len(by_setting) > 1:
            lines += ["", "Candidates identical to generate's: " + ", ".join(
                f"{k} {v}/{editor['edits']}" for k, v in by_setting.items()) + "."]
        if "ceiling_share_of_floor" in editor:
            lines += ["", f"The floor counts {editor['counted_tokens']} candidate tokens; an engine must also read "
                          f"{editor['prompt_tokens']} prompt tokens, and the candidates' distinct prefixes are "
                          f"{editor['distinct_candidate_tokens']} tokens: a perfect engine at the probe's rate would "
                          f"show {100 * editor['ceiling_share_of_floor']:.0f}% of the floor (the ceiling)."]
        lines += ["", f"shared-prefix gives the candidates of generate on {editor['identical_candidates']}/"
                      f"{editor['edits']} edits; the same rows shuffled in batches of 5 give the same candidates: "
                      f"{again}." + (f" vLLM's engine took {editor['vllm_load_s']} s to start (a merged copy, then "
                                     f"its warm-up)." if "vllm_load_s" in editor else ""), ""]
    claims = results.get("claims")
    if claims:
        lines += [f"## Claim negation: {claims['claims']} claims, beam 5, 5 outputs", "",
                  harness.markdown_table(
                      ["setting", "claims/s", "speed-up", "tokens/s", "share of floor (lower bound)",
                       "same top output", "same 5 outputs"],
                      [[setting, f"{s['claims_per_s']:.2f}", f"{s['speed_up']:.2f}x", f"{s['tokens_per_s']:.0f}",
                        f"{100 * s['share_of_floor']:.0f}%", f"{100 * s['same_top_output']:.0f}%",
                        f"{100 * s['same_all_outputs']:.0f}%"] for setting, s in claims["settings"].items()])]
    text = "\n".join(lines) + "\n"
    harness.write_results(name, results, text)
    print(text)


def main() -> None:
    ap = harness.parser(__doc__, smoke={"reviews": 1, "claims": 1, "batch_sizes": [2],
                                        "claim_settings": ["ctranslate2-int8, one batch on all threads"]})
    ap.add_argument("--reviews", type=int, default=40)
    ap.add_argument("--claims", type=int, default=40)
    ap.add_argument("--workloads", nargs="+", default=["editor", "claims"], choices=["editor", "claims"])
    ap.add_argument("--batch-sizes", type=int, nargs="*", default=[],
                    help="editor workload: also time the shared-prefix sampler with these rows a batch (the "
                         "editor's own batch_size is always timed), e.g. 32 64")
    ap.add_argument("--repeats", type=int, default=1,
                    help="editor workload: rounds of the sampler's settings, each in another order; the median "
                         "time is kept")
    ap.add_argument("--claim-settings", nargs="*", default=[], choices=[c[0] for c in CLAIM_SETTINGS[1:]],
                    help="claims workload: run only these settings beside transformers (default: all)")
    ap.add_argument("--note", default="")
    ap.add_argument("--engines", nargs="*", default=[], choices=["vllm"],
                    help="extra engines for the editor workload (vllm: run from .venv-vllm)")
    ap.add_argument("--name", default="engines", help="results file name (benchmarks/results/NAME.{json,md})")
    args = ap.parse_args()
    import torch

    gflops = statistics.median(matmul_gflops() for _ in range(3))
    floor_per_param = gflops * 1e9 / 2  # tokens/s of a perfect engine, times the parameter count
    results = {"setup": f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                        f"{torch.get_num_threads()} torch threads){', ' + args.note if args.note else ''}; matmul "
                        f"probe {gflops:.0f} GFLOP/s float32; floor = GFLOP/s / (2 x parameters) tokens/s.",
               "matmul_gflops": gflops}
    for workload in args.workloads:
        results[workload] = (run_editor if workload == "editor" else run_claims)(args, floor_per_param)
        write(results, args.name)


if __name__ == "__main__":
    main()
