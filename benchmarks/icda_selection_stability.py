"""Does an ICDA rationale selector's choice depend on its training data? Two selectors from the same initialisation,
trained on disjoint halves of the training documents, compared on the same test documents.

    python -m benchmarks.icda_selection_stability [--task connect] [--docs 300] [--positions sinusoidal none]

A selector that finds the label-bearing sentence should choose mostly the same sentences from either half, but not
always, and its choice should move away from the untrained selector's. The script prints, for each ``positions``
setting: each selector's precision and selected-position deciles, the share of test documents where the two
choose the same sentence, where their predictions agree, where a trained selector still chooses what the untrained
one did, and how far training moved the selector's weights. Frozen MiniLM encoder, the two-way gate, CPU.
Writes ``benchmarks/results/icda_selection_stability.{json,md}``.
"""

from __future__ import annotations

import copy
import json
import random
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT


def main() -> None:
    ap = harness.parser(__doc__, smoke={"docs": 16, "test_docs": 16, "epochs": 1, "positions": ["none"]})
    ap.add_argument("--task", default="connect", choices=["connect", "restaurant"])
    ap.add_argument("--docs", type=int, default=300, help="training documents per half")
    ap.add_argument("--test-docs", type=int, default=300)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--learning-rate", type=float, default=3e-3)
    ap.add_argument("--positions", nargs="+", default=["sinusoidal", "none"], choices=["sinusoidal", "none"])
    ap.add_argument("--gate", default="two_way", choices=["two_way", "softmax"])
    ap.add_argument("--selection-noise", type=float, default=0.0, help="Gumbel noise while training")
    ap.add_argument("--suffix", default="", help="appended to the result file names")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()

    import torch
    from benchmarks.icda_precision import deciles, load_task
    from transformers import AutoModel

    from cfaug_hf import RationaleSelector
    from cfaug_hf.methods.icda import CounterfactualEpochDataset, rationale_precision
    from cfaug_hf.methods.icda.training import train_selector
    from cfaug_hf.pretrained import MINILM, load_model, load_tokenizer
    from cfaug_hf.text.sentences import SentenceTable

    torch.set_num_threads(1)
    data = load_task(args.task, None)
    train = list(data["train"])
    random.Random(0).shuffle(train)
    if len(train) < 2 * args.docs:
        raise SystemExit(f"{args.task} has {len(train)} training documents; --docs {args.docs} needs twice that.")
    test = random.Random(5).sample(data["test"], min(args.test_docs, len(data["test"])))
    truth = [r["rationale"] for r in test]
    lengths = [len(r["sentences"]) for r in test]
    tok, base = load_tokenizer(MINILM), load_model(AutoModel, MINILM).float()
    table = SentenceTable()

    def docs(rows):
        return CounterfactualEpochDataset([r["sentences"] for r in rows], [r["label"] for r in rows], table=table,
                                          size=0)

    dev, test_set = docs(data["dev"]), docs(test)
    halves = [docs(train[:args.docs]), docs(train[args.docs:2 * args.docs])]
    labels = [r["label"] for r in test]
    results = {}
    for positions in args.positions:
        def make():
            torch.manual_seed(0)
            return RationaleSelector.from_encoder((copy.deepcopy(base), tok), label_names=["0", "1"],
                                                  freeze_encoder=True, max_sentences=16, gate=args.gate,
                                                  positions=positions, selection_noise=args.selection_noise)
        untrained = make()
        untrained.embed_table(table)
        before = untrained.model.selector.weight.detach().clone()
        picks0 = untrained.select(test_set.docs, labels, table=table)
        runs = []
        for i, half in enumerate(halves):
            sel = make()
            sel.embed_table(table)
            t0 = time.perf_counter()
            train_selector(sel, half, dev, seed=0, max_epochs=args.epochs, patience=args.epochs,
                           learning_rate=args.learning_rate, batch_size=16, samples_per_step=64,
                           output_dir=str(ROOT / "benchmarks" / ".cache" / "icda_stability"),
                           training_args={"use_cpu": True, "disable_tqdm": True})
            picks = sel.select(test_set.docs, labels, table=table)
            runs.append({"half": i, "precision": rationale_precision(picks.selected, truth),
                         "deciles": deciles(picks.selected, lengths), "selected": picks.selected,
                         "predicted": list(picks.predicted), "seconds": time.perf_counter() - t0,
                         "weight_change": float((sel.model.selector.weight.detach() - before).norm()),
                         "same_as_untrained": sum(a == b for a, b in zip(picks.selected, picks0.selected)) / len(test)})
            print(positions, i, round(runs[-1]["precision"], 3), flush=True)
        a, b = runs
        results[positions] = {
            "untrained_precision": rationale_precision(picks0.selected, truth),
            "untrained_deciles": deciles(picks0.selected, lengths), "weight_norm_at_init": float(before.norm()),
            "same_selection": sum(x == y for x, y in zip(a["selected"], b["selected"])) / len(test),
            "same_prediction": sum(x == y for x, y in zip(a["predicted"], b["predicted"])) / len(test),
            "runs": runs}
    lines = ["# ICDA selector stability", "",
             f"{args.task}: two selectors from one initialisation (seed 0), frozen MiniLM, {args.gate} gate"
             f"{f' with Gumbel noise {args.selection_noise}' if args.selection_noise else ''}, trained "
             f"{args.epochs} epochs at {args.learning_rate} on disjoint halves of {args.docs} training documents; "
             f"{len(test)} test documents; CPU, 1 thread.", "",
             harness.markdown_table(
                 ["positions", "precision (half A / half B / untrained)", "same selection", "same prediction",
                  "still the untrained choice (A / B)", "selector weight change (A / B; norm at init)"],
                 [[positions,
                   f"{100 * a['precision']:.1f} / {100 * b['precision']:.1f} / {100 * r['untrained_precision']:.1f}",
                   f"{100 * r['same_selection']:.0f}%", f"{100 * r['same_prediction']:.0f}%",
                   f"{100 * a['same_as_untrained']:.0f}% / {100 * b['same_as_untrained']:.0f}%",
                   f"{a['weight_change']:.2f} / {b['weight_change']:.2f}; {r['weight_norm_at_init']:.2f}"]
                  for positions, r, (a, b) in ((p, r, r["runs"]) for p, r in results.items())])]
    lines += ["", "Selected-position deciles (share of choices in each tenth of the document, first tenth first):", ""]
    for positions, r in results.items():
        for run in r["runs"]:
            shares = " ".join(f"{100 * d:.0f}" for d in run["deciles"])
            lines.append(f"- {positions}, half {'AB'[run['half']]}: {shares}")
        lines.append(f"- {positions}, untrained: " + " ".join(f"{100 * d:.0f}" for d in r["untrained_deciles"]))
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"icda_selection_stability{args.suffix}.md").write_text(text)
    (args.out / f"icda_selection_stability{args.suffix}.json").write_text(json.dumps(
        {"args": {k: str(v) for k, v in vars(args).items()}, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
