"""Which pretrained base and which training pairs make the better negative-claim generator under the demo's CPU
budget?

    python -m benchmarks.generator_base [--seconds 300] [--bases smollm2-lora minilm-encoder-decoder]
                                        [--pairs vitaminc+cad-snli vitaminc cad-snli+fever-symmetric]

Every (base, pair set) is trained with the same wall-clock budget (both directions), then:
  * held-out pairs (40 FEVER-Symmetric quads, 100 CAD-SNLI test pairs, the pairs of 100 VitaminC cases; none of
    them in any training set): BLEU and exact match of the first rewrite against the human negative claim, and the
    share of first rewrites that are pure deletions (the claim with words removed, which rarely refutes it);
  * the 200 SUPPORTS claims of the embedded FEVEROUS sample: share of rewrites that differ from the claim, that are
    a 1-3 token replacement, and that CrossAug can substitute into the evidence (its c+e' yield), plus rows/s.
Pair sets: ``vitaminc`` and ``cad-snli`` are the shipped pairs of that origin (``load_claim_pairs``), joined by
``+``; ``fever-symmetric`` is the 137 FEVER-Symmetric v0.2 pairs the package shipped before VitaminC replaced them
(read from ../shared/data, held-out quads excluded). The flip rate of the default generator's claims is measured
by ``python -m benchmarks.debias --config fever``. Results are merged into benchmarks/results/generator_base.{md,json}.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT


def heldout_pairs(shared: Path) -> dict[str, list[dict]]:
    from scripts.build_embedded_data import fever_symmetric_pairs, snli_pairs, vitaminc_pairs

    _, sym_heldout = fever_symmetric_pairs(shared)
    _, vitc_heldout = vitaminc_pairs(shared)
    return {"fever-symmetric (40 held-out)": sym_heldout, "cad-snli test (100)": snli_pairs(shared, "test")[:100],
            f"vitaminc ({len(vitc_heldout)} held-out)": vitc_heldout}


def training_pairs(spec: str, shared: Path) -> object:
    """The pair set named by ``spec`` (origins joined by ``+``) as a Dataset with source/target columns."""
    from datasets import Dataset, concatenate_datasets

    from scripts.build_embedded_data import fever_symmetric_pairs
    from cfaug_hf.data import load_claim_pairs

    parts = []
    for origin in spec.split("+"):
        if origin == "fever-symmetric":
            parts.append(Dataset.from_list(fever_symmetric_pairs(shared)[0]))
        else:
            parts.append(load_claim_pairs(origin))
    return concatenate_datasets([p.select_columns(["source", "target"]) for p in parts]).shuffle(seed=0)


def is_pure_deletion(source: str, rewrite: str) -> bool:
    """True when ``rewrite`` is ``source`` with one or more words removed and nothing else changed."""
    from cfaug_hf.text import is_word, tokenize

    src = [t.key for t in tokenize(source) if is_word(t)]
    new = [t.key for t in tokenize(rewrite) if is_word(t)]
    if not new or len(new) >= len(src):
        return False
    it = iter(src)
    return all(word in it for word in new)


def evaluate(generator, held: dict[str, list[dict]], rows: int | None = None) -> dict:
    import sacrebleu

    from cfaug_hf import CrossAugAugmenter
    from cfaug_hf.data import load_feverous_sample
    from cfaug_hf.text import tokenize

    out: dict = {}
    for name, pairs in held.items():
        pairs = pairs[:rows] if rows else pairs
        sources = [p["source"] for p in pairs]
        preds = [c[0] for c in generator.generate(sources)]
        refs = [p["target"] for p in pairs]
        out[name] = {"bleu": round(sacrebleu.corpus_bleu(preds, [refs]).score, 1),
                     "exact": round(sum(p.strip() == r.strip() for p, r in zip(preds, refs)) / len(refs), 3),
                     "pure_deletion": round(sum(map(is_pure_deletion, sources, preds)) / len(refs), 3),
                     "examples": list(zip([p["source"] for p in pairs[:3]], preds[:3]))}
    sup = load_feverous_sample().filter(lambda lab: lab == "SUPPORTS", input_columns="label")
    sup = sup.select(range(min(rows, len(sup)))) if rows else sup
    aug = CrossAugAugmenter(generator)
    t0 = time.perf_counter()
    res = sup.map(aug, batched=True, batch_size=32, load_from_cache_file=False)
    secs = time.perf_counter() - t0
    st = aug.stats
    n = st.rows_in
    changed = n - st.skipped.get("same_claim", 0) - st.skipped.get("empty_generation", 0) - st.skipped.get(
        "generation_truncated", 0)
    no_edit = st.by_prefix("no_evidence_edit")
    replacement = changed - no_edit.get("insertion", 0) - no_edit.get("deletion", 0) - no_edit.get("span_too_long", 0)
    cfs = [r for r in res if r["cf_kind"] == "c'+e"]
    out["feverous"] = {
        "claims": n, "changed": round(changed / n, 3), "short_replacement": round(replacement / n, 3),
        "evidence_edit_yield": round(st.produced.get("c+e'", 0) / n, 3), "rows_per_s": round(n / secs, 2),
        "mean_claim_tokens_changed": round(sum(len(tokenize(json.loads(r["cf_edit"])["claim"]["new"]))
                                               for r in cfs) / max(1, len(cfs)), 2),
        "examples": [(r["claim"], ) for r in cfs[:3]],
    }
    return out


def main() -> None:
    ap = harness.parser(__doc__, smoke={"seconds": 3.0, "pairs": ["vitaminc"], "eval_rows": 2})
    ap.add_argument("--seconds", type=float, default=300, help="training wall-time budget per run")
    ap.add_argument("--bases", nargs="+", default=["smollm2-lora"],
                    help="generator bases (see cfaug_hf.methods.crossaug.recipes.BASES)")
    ap.add_argument("--pairs", nargs="+", default=["vitaminc+cad-snli", "vitaminc", "cad-snli+fever-symmetric"],
                    help="training pair sets: shipped origins and fever-symmetric, joined by +")
    ap.add_argument("--eval-rows", type=int, default=None,
                    help="evaluate on the first N held-out pairs of each set and N FEVEROUS claims [all]")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--save", type=Path, default=ROOT / "benchmarks" / ".cache",
                    help="each trained generator is saved here as generator-<base>-<pairs> for the other benchmarks")
    args = ap.parse_args()
    if not args.shared.is_dir():
        sys.exit(f"Benchmark data not found at {args.shared}; pass --shared.")

    from cfaug_hf.methods.crossaug.recipes import negative_claim_generator

    held = heldout_pairs(args.shared)
    results_file = args.out / "generator_base.json"
    rows = json.loads(results_file.read_text()) if results_file.is_file() else {}
    for base in args.bases:
        for spec in args.pairs:
            t0 = time.perf_counter()
            gen = negative_claim_generator(base, pairs=training_pairs(spec, args.shared), max_steps=10_000,
                                           max_seconds=args.seconds)
            train_s = time.perf_counter() - t0
            gen.save_pretrained(args.save / f"generator-{base}-{spec}")
            key = f"{base} on {spec}"
            rows[key] = {"base": base, "pairs": spec, "train_seconds": round(train_s, 1),
                         "steps": gen.training_info["global_step"], "train_loss": gen.training_info["train_loss"],
                         **evaluate(gen, held, args.eval_rows)}
            print(json.dumps({key: rows[key]}, indent=1, ensure_ascii=False), flush=True)

    names = list(held)

    def cell(r: dict, name: str, metric: str, pct: bool = False) -> str:
        value = r.get(name, {}).get(metric)
        return "–" if value is None else f"{value:.0%}" if pct else str(value)

    def table_row(key: str, r: dict) -> list:
        f = r["feverous"]
        deletions = [r[n]["pure_deletion"] * len(held[n]) for n in names if "pure_deletion" in r.get(n, {})]
        share = f"{sum(deletions) / sum(len(held[n]) for n in names):.0%}" if len(deletions) == len(names) else "–"
        label = key if "pairs" in r else f"{key} on cad-snli+fever-symmetric (earlier run)"
        return [label, r["train_seconds"], r["steps"], *(cell(r, n, "bleu") for n in names), share,
                f"{f['changed']:.0%}", f"{f['short_replacement']:.0%}", f"{f['evidence_edit_yield']:.0%}",
                f["rows_per_s"]]

    table = harness.markdown_table(
        ["generator", "train s", "steps", *(f"BLEU {n}" for n in names), "pure deletions (held-out)", "changed",
         "1-3 token replacement", "c+e' yield", "rows/s"], [table_row(key, r) for key, r in rows.items()])
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "generator_base.md").write_text(
        f"# Negative-claim generators ({args.seconds:.0f} s training budget each, 2 CPU threads)\n\n"
        f"{table}\n\nBLEU against human negative claims on held-out pairs (first of five beams); pure deletions: "
        f"share of those first rewrites that only remove words; the last four columns on the 200 SUPPORTS claims of "
        f"the embedded FEVEROUS sample (CrossAug picks the first of five beams that is a real negation).\n")
    results_file.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
