"""Which pretrained base makes the better negative-claim generator under the demo's CPU budget?

    python benchmarks/generator_base.py [--seconds 300] [--bases smollm2-lora minilm-encoder-decoder]

Each base is trained with the same wall-clock budget on the shipped claim pairs (both directions), then:
  * held-out pairs (40 FEVER-Symmetric quads kept out of the shipped pairs, 100 CAD-SNLI test pairs): BLEU and exact
    match of the rewrite against the human negative claim;
  * the 200 SUPPORTS claims of the embedded FEVEROUS sample: share of rewrites that differ from the claim, that are
    a 1-3 token replacement, and that CrossAug can substitute into the evidence (its c+e' yield), plus rows/s.
Writes benchmarks/results/generator_base.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))


def heldout_pairs(shared: Path) -> dict[str, list[dict]]:
    from build_embedded_data import fever_symmetric_pairs, snli_pairs

    _, sym_heldout = fever_symmetric_pairs(shared)
    return {"fever-symmetric (40 held-out)": sym_heldout, "cad-snli test (100)": snli_pairs(shared, "test")[:100]}


def evaluate(generator, held: dict[str, list[dict]]) -> dict:
    import sacrebleu

    from cfaug_hf import CrossAugAugmenter
    from cfaug_hf.embedded import load_feverous_sample
    from cfaug_hf.text import tokenize

    out: dict = {}
    for name, pairs in held.items():
        preds = [c[0] for c in generator.generate([p["source"] for p in pairs])]
        refs = [p["target"] for p in pairs]
        out[name] = {"bleu": round(sacrebleu.corpus_bleu(preds, [refs]).score, 1),
                     "exact": round(sum(p.strip() == r.strip() for p, r in zip(preds, refs)) / len(refs), 3),
                     "examples": list(zip([p["source"] for p in pairs[:3]], preds[:3]))}
    sup = load_feverous_sample().filter(lambda lab: lab == "SUPPORTS", input_columns="label")
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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=300, help="training wall-time budget per base")
    ap.add_argument("--bases", nargs="+", default=["smollm2-lora", "minilm-encoder-decoder"])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()
    if not args.shared.is_dir():
        sys.exit(f"Benchmark data not found at {args.shared}; pass --shared.")

    from cfaug_hf.methods.crossaug.recipes import negative_claim_generator

    held = heldout_pairs(args.shared)
    rows = {}
    for base in args.bases:
        t0 = time.perf_counter()
        gen = negative_claim_generator(base, max_steps=10_000, max_seconds=args.seconds)
        train_s = time.perf_counter() - t0
        rows[base] = {"train_seconds": round(train_s, 1), "steps": gen.training_info["global_step"],
                      "train_loss": gen.training_info["train_loss"], **evaluate(gen, held)}
        print(json.dumps({base: rows[base]}, indent=1, ensure_ascii=False), flush=True)

    names = list(held)
    lines = ["| base | train s | steps | " + " | ".join(f"BLEU {n}" for n in names) +
             " | changed | 1-3 token replacement | c+e' yield | rows/s |",
             "|---|---|---|" + "---|" * len(names) + "---|---|---|---|"]
    for base, r in rows.items():
        f = r["feverous"]
        lines.append(f"| {base} | {r['train_seconds']} | {r['steps']} | " +
                     " | ".join(str(r[n]["bleu"]) for n in names) +
                     f" | {f['changed']:.0%} | {f['short_replacement']:.0%} | {f['evidence_edit_yield']:.0%} | "
                     f"{f['rows_per_s']} |")
    table = "\n".join(lines)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "generator_base.md").write_text(
        f"# Negative-claim generator base ({args.seconds:.0f} s training budget each, 2 CPU threads)\n\n"
        f"{table}\n\nBLEU/exact match against human negative claims on held-out pairs; the last four columns on the "
        f"200 SUPPORTS claims of the embedded FEVEROUS sample.\n")
    (args.out / "generator_base.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
