"""RACE's intrinsic evaluation (the shape of the paper's Table 4), CPU-reduced, with real pretrained weights.

    python -m benchmarks.race_intrinsic [--rows 60] [--budget-s 240]

Models, each fine-tuned here from the embedded weights within ``--budget-s`` seconds of CPU and cached in
benchmarks/.cache/race/:

* NER (``--ner minilm``): MiniLM token classifier on CoNLL-2003 train (PER/ORG/LOC -> PERSON/ORG/GPE) combined
  with PatternNER (DATE, NUM); ``--ner spacy``: SpacyNER with en_core_web_sm (the spacy extra), nothing trained;
* checker: MiniLM on FEVEROUS train (80 %) with NOT ENOUGH INFO rows from the paper's recipe (``with_nei``);
* claim generator: SmolLM2-135M-Instruct + LoRA on FEVEROUS train SUPPORTS instances (evidence -> claim).

Then ``--rows`` FEVEROUS held-out rows (SUPPORTS and REFUTES, multi-hop first) are augmented by RACE and its
ablations (-CONSTRAINT, -EDIT, -FILTER) and by CrossAug (the negative-claim generator and flip checker shipped in the
package), and the claim counterfactuals are scored: flip rate (the checker's label for (c', E) is the target;
the paper used a separate RoBERTa), fluency (SmolLM2 perplexity, lower is better), similarity to the original
claim (MoverScore over MiniLM), diversity (inverse BLEU, 100 - BLEU), multi-hop coherence (MoverScore between c'
and the joined evidence). Writes benchmarks/results/race_intrinsic.{json,md}.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks import harness

from scripts.shared_data import feverous



def cache() -> Path:
    """Where this benchmark keeps what it trains or fetches (`benchmarks.harness.cache_dir`; a smoke run's own)."""
    return harness.cache_dir() / "race"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"
PAPER = {"RACE (T5-base)": (0.9457, 55.81, 0.5770, 11.19, 0.5763), "CrossAug": (0.3138, 209.34, 0.6100, 2.24, 0.6090)}
QUIET = {"disable_tqdm": True, "logging_strategy": "no"}
NER_NAMES = {"spacy": "SpacyNER, en_core_web_sm", "minilm": "MiniLM CoNLL tagger + PatternNER"}


def budget(seconds: float) -> list[Any]:
    from cfaug_hf.training import time_budget_callback

    return [time_budget_callback(seconds)]


def ner_model(budget_s: float) -> Any:
    from cfaug_hf.components.ner import CombinedNER, PatternNER, TransformersNER
    from cfaug_hf.training import train_tagger
    from benchmarks.llm_fewshot import conll

    path = cache() / "ner-conll"
    if not path.exists():
        tagger = train_tagger(MINILM, conll("train").shuffle(seed=0).select(range(6000)), num_train_epochs=1,
                              learning_rate=1e-4, callbacks=budget(budget_s), training_args=QUIET)
        tagger.model.save_pretrained(path)
        tagger.tokenizer.save_pretrained(path)
    return CombinedNER([TransformersNER(str(path)), PatternNER()])


def checker_model(train: Any, schema: Any, budget_s: float) -> Any:
    from cfaug_hf import LabelChecker
    from cfaug_hf.methods.race import with_nei
    from cfaug_hf.training import train_checker

    path = cache() / "checker-feverous-nei"
    if path.exists():
        return LabelChecker.from_pretrained(path)
    data = with_nei(train, schema, seed=0)
    checker = train_checker(MINILM, data, schema.__class__.fact_verification(nei=True), num_train_epochs=3,
                            learning_rate=5e-5, max_length=192, callbacks=budget(budget_s), training_args=QUIET)
    checker.save_pretrained(path)
    return checker


def generator_model(train: Any, schema: Any, budget_s: float) -> Any:
    from cfaug_hf import Generator
    from cfaug_hf.methods.race import claim_generation_pairs
    from cfaug_hf.training import train_generator

    path = cache() / "generator-e2c-smollm2-lora"
    settings = dict(num_beams=10, num_return_sequences=5, max_new_tokens=40, max_source_length=256, batch_size=8)
    if path.exists():
        return Generator.from_pretrained(path, **settings)
    gen = train_generator(SMOLLM2, claim_generation_pairs(train, schema), lora=True, num_train_epochs=1,
                          learning_rate=2e-4, batch_size=8, callbacks=budget(budget_s), training_args=QUIET,
                          input_template="Evidence: {text}\nClaim:", max_source_length=256)
    gen.save_pretrained(path)
    return Generator.from_pretrained(path, **settings)


def scores(cfs: list[dict[str, Any]], checker: Any, schema: Any) -> dict[str, Any]:
    from cfaug_hf.metrics import intrinsic

    if not cfs:
        return {"n": 0}
    claims = [c["claim"] for c in cfs]
    originals = [c["original_claim"] for c in cfs]
    evidence = [list(c["evidence"]) for c in cfs]
    predicted = checker.predict(claims, evidence)
    flip = intrinsic.flip_rate(predicted, [c["label"] for c in cfs])
    ppl = intrinsic.perplexity(claims, SMOLLM2)
    sim = intrinsic.mover_score(claims, originals)
    div = intrinsic.bleu_diversity(claims, originals)
    coh = intrinsic.multihop_coherence(claims, evidence)
    return {"n": len(cfs), "flip_rate": flip["flip_rate"], "perplexity": ppl["perplexity"],
            "similarity": sim["mover_score"], "inverse_bleu": div["inverse_bleu"],
            "multihop": coh["multihop_coherence"]}


def main() -> None:
    parser = harness.parser(__doc__, smoke={
        "rows": 2, "budget_s": 2.0, "beams": 2, "candidates": 2, "max_new_tokens": 8})
    parser.add_argument("--rows", type=int, default=60)
    parser.add_argument("--budget-s", type=float, default=240)
    parser.add_argument("--device-note", default="CPU, 2 cores")
    parser.add_argument("--ner", choices=["minilm", "spacy"], default="minilm",
                        help="minilm: a MiniLM tagger trained here on CoNLL-2003 plus PatternNER (dates, numbers); "
                             "spacy: SpacyNER with en_core_web_sm (the spacy extra)")
    parser.add_argument("--beams", type=int, default=30, help="RACE's claim beam width (the paper's 30)")
    parser.add_argument("--candidates", type=int, default=10, help="claims kept per beam search (the paper's 10)")
    parser.add_argument("--max-new-tokens", type=int, default=96, help="longest claim (the paper's 96)")
    args = parser.parse_args()
    decoding = {"num_beams": args.beams, "num_candidates": args.candidates, "max_new_tokens": args.max_new_tokens}

    from datasets.utils.logging import disable_progress_bar

    from cfaug_hf import RACEAugmenter, TaskSchema

    disable_progress_bar()
    cache().mkdir(parents=True, exist_ok=True)
    schema = TaskSchema.fact_verification(id_column="id")
    train, dev = feverous()
    timings = {}
    start = time.perf_counter()
    if args.ner == "spacy":
        from cfaug_hf.components.ner import SpacyNER

        ner = SpacyNER()
    else:
        ner = ner_model(args.budget_s)
    timings["ner"] = time.perf_counter() - start
    start = time.perf_counter()
    checker = checker_model(train, schema, args.budget_s)
    timings["checker"] = time.perf_counter() - start
    start = time.perf_counter()
    generator = generator_model(train, schema, args.budget_s)
    timings["generator"] = time.perf_counter() - start
    multi = dev.filter(lambda e: len(e) > 1, input_columns="evidence")
    rows = multi.select(range(min(args.rows, len(multi))))
    three_way = TaskSchema.fact_verification(nei=True, id_column="id")
    race = RACEAugmenter(generator, checker, ner, three_way, embedder=MINILM, keep_original=False, **decoding)
    race.fit(train)
    variants = {"RACE": {}, "RACE -CONSTRAINT": {"constrained": False}, "RACE -EDIT": {"edit": False},
                "RACE -FILTER": {"select": "first"}}
    report: dict[str, Any] = {"device": args.device_note, "rows": len(rows), "timings_s": timings,
                              "decoding": decoding, "ner": args.ner, "variants": {}}
    for name, override in variants.items():
        aug = RACEAugmenter(generator, checker, ner, three_way, embedder=MINILM, keep_original=False,
                            lexicon=race.config.lexicon, **decoding, **override)
        start = time.perf_counter()
        out = aug.augment(rows, load_from_cache_file=False)
        seconds = time.perf_counter() - start
        sources = {r["id"]: r for r in rows}
        cfs = [{**r, "original_claim": sources[r["id"]]["claim"]} for r in out if r["cf_kind"] == "race_claim"]
        evidence_cfs = sum(r["cf_kind"] == "race_evidence" for r in out)
        report["variants"][name] = {"claims": scores(cfs, checker, three_way), "evidence_counterfactuals":
                                    evidence_cfs, "stats": aug.stats.to_dict(), "seconds": round(seconds, 1),
                                    "examples": [{"original": c["original_claim"], "counterfactual": c["claim"],
                                                  "label": c["label"]} for c in cfs[:3]]}
        print(name, json.dumps(report["variants"][name]["claims"]), flush=True)
    from cfaug_hf import CrossAugAugmenter

    # CrossAug as it ships: the packaged negative-claim generator and its flip checker (both the defaults).
    aug = CrossAugAugmenter("default", schema, keep_original=False)
    start = time.perf_counter()
    out = aug.augment(rows.cast_column("label", rows.features["label"]), load_from_cache_file=False)
    seconds = time.perf_counter() - start
    sources = {r["id"]: r for r in rows}
    cfs = [{**r, "original_claim": sources[r["id"]]["claim"]} for r in out
           if r["cf_is_counterfactual"] and r["claim"] != sources[r["id"]]["claim"]]
    report["variants"]["CrossAug"] = {"claims": scores(cfs, checker, three_way), "stats": aug.stats.to_dict(),
                                      "seconds": round(seconds, 1)}
    print("CrossAug", json.dumps(report["variants"]["CrossAug"]["claims"]), flush=True)
    harness.results_dir().mkdir(parents=True, exist_ok=True)
    (harness.results_dir() / "race_intrinsic.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    lines = ["# RACE: intrinsic evaluation (CPU-reduced)", "",
             f"Where: {args.device_note}. {len(rows)} FEVEROUS held-out multi-hop rows; NER, checker and claim "
             f"generator fine-tuned here within {args.budget_s:.0f} s each (see the script). RACE decodes with "
             f"beam {args.beams}, {args.candidates} candidates, at most {args.max_new_tokens} tokens (the paper's: "
             f"30, 10, 96). NER: {NER_NAMES[args.ner]}. Flip rate by our "
             "MiniLM checker (the paper used a separate RoBERTa); perplexity by SmolLM2-135M (the paper's LM "
             "differs, so compare rows, not absolute values).", "",
             harness.markdown_table(
                 ["method", "claims", "flip rate", "perplexity (lower better)", "similarity (MoverScore)",
                  "diversity (inverse BLEU)", "multi-hop coherence"],
                 [[variant, c["n"], f"{c['flip_rate']:.4f}", f"{c['perplexity']:.2f}", f"{c['similarity']:.4f}",
                   f"{c['inverse_bleu']:.2f}", f"{c['multihop']:.4f}"] if c.get("n") else [variant, 0, *[None] * 5]
                  for variant, c in ((variant, v["claims"]) for variant, v in report["variants"].items())]
                 + [[f"paper: {variant}", None, f"{p[0]:.4f}", f"{p[1]:.2f}", f"{p[2]:.4f}", f"{p[3]:.2f}",
                     f"{p[4]:.4f}"] for variant, p in PAPER.items()])]
    lines += ["", "Stage counts (RACE): " + json.dumps(report["variants"]["RACE"]["stats"])]
    (harness.results_dir() / "race_intrinsic.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
