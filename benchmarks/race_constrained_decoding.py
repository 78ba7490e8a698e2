"""The cost of RACE's entity-constrained decoding against plain beam search on the same inputs.

    python -m benchmarks.race_constrained_decoding [--rows 16] [--beams 10] [--k 5] [--max-new-tokens 32]

Inputs: FEVEROUS multi-hop rows (claims with two or more evidence sentences); the generator reads the joined
evidence ("Evidence: ... Claim:") and writes a claim. The constraint of a row has one group per evidence piece:
the piece's linked entities and numbers that the claim also mentions (RACE's causal entities, approximated
without a checker), pieces without any left out. Model: SmolLM2-135M-Instruct (offline), beam search with
``--beams`` beams and ``--k`` outputs, ``--max-new-tokens`` tokens (the paper: T5-base, beam 30, 10 candidates,
96 tokens; reduced for CPU).

* plain: ``Generator(constrained_decoding=False).generate_with_info(texts, constraints=...)``: transformers' batched
  beam search, then the outputs that miss the constraint are dropped;
* constrained: ``Generator(constrained_decoding=True)``: cfaug_hf.generation.constrained's beam search, one row at a time.

Timings interleave the two, ``--repeats`` times (median). Reports seconds, the ratio (target <= 1.5x), and the
constraint satisfaction: the share of rows with at least one output meeting its constraint, and of all outputs.
Writes benchmarks/results/race_constrained_decoding.{json,md}.
"""

from __future__ import annotations

import json
import re
import statistics
import time

from benchmarks import harness

from scripts.shared_data import shared_dir, strip_wiki



def rows(limit: int) -> list[tuple[str, list[list[str]]]]:
    data = json.loads((shared_dir() / "feverous_programfc" / "dev.json").read_text())
    out = []
    for r in data:
        if r.get("challenge") != "Multi-hop Reasoning":
            continue
        pieces = [ln.split("\t", 1)[1] for ln in r["evidence"].split("\n") if "\t" in ln]
        if len(pieces) < 2:
            continue
        claim = r["claim"].lower()
        groups = []
        for piece in pieces:
            names = [m.split("|")[-1] for m in re.findall(r"\[\[([^\]]+)\]\]", piece)]
            names += re.findall(r"\b\d{2,4}\b", strip_wiki(piece))
            found = sorted({n for n in names if n.lower() in claim and len(n) > 1})[:3]
            if found:
                groups.append(found)
        if groups:
            out.append((" ".join(strip_wiki(p) for p in pieces), groups[:3]))
        if len(out) == limit:
            break
    return out


def main() -> None:
    parser = harness.parser(__doc__, smoke={"rows": 1, "beams": 2, "k": 2, "max_new_tokens": 4, "repeats": 1})
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--beams", type=int, default=10)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device-note", default="CPU, 2 cores")
    args = parser.parse_args()

    from cfaug_hf import Generator
    from cfaug_hf.generation import satisfies

    data = rows(args.rows)
    texts, constraints = [t for t, _ in data], [c for _, c in data]
    common = dict(input_template="Evidence: {text}\nClaim:", num_beams=args.beams, num_return_sequences=args.k,
                  max_new_tokens=args.max_new_tokens, max_source_length=256, batch_size=8, stop=("\n",))
    plain = Generator.from_base("HuggingFaceTB/SmolLM2-135M-Instruct", constrained_decoding=False, **common)
    guided = Generator(plain.model, plain.tokenizer, constrained_decoding=True, **common)
    runs: dict[str, list[float]] = {"plain beam search": [], "constrained beam search": []}
    results = {}
    for _ in range(args.repeats):
        for name, gen in (("plain beam search", plain), ("constrained beam search", guided)):
            start = time.perf_counter()
            res = gen.generate_with_info(texts, constraints=constraints)
            runs[name].append(time.perf_counter() - start)
            results[name] = res
    median = {k: statistics.median(v) for k, v in runs.items()}
    satisfaction = {}
    for name, res in results.items():
        outputs = [t for row in res.texts for t in row]
        satisfaction[name] = {
            "rows_with_an_output": round(sum(bool(row) for row in res.texts) / len(texts), 3),
            "outputs_meeting_constraint": round(sum(satisfies(t, c) for row, c in zip(res.texts, constraints)
                                                    for t in row) / (len(texts) * args.k), 3),
            "outputs_kept": len(outputs)}
    ratio = median["constrained beam search"] / median["plain beam search"]
    result = {"device": args.device_note, "rows": len(texts), "beams": args.beams, "k": args.k,
              "max_new_tokens": args.max_new_tokens, "repeats": args.repeats, "seconds": runs, "median_s": median,
              "constrained_over_plain": round(ratio, 3), "satisfaction": satisfaction,
              "example": {"constraint": constraints[0], "plain": results["plain beam search"].texts[0][:2],
                          "constrained": results["constrained beam search"].texts[0][:2]}}
    harness.results_dir().mkdir(parents=True, exist_ok=True)
    (harness.results_dir() / "race_constrained_decoding.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# RACE: entity-constrained decoding cost", "",
             f"Where: {args.device_note}. {len(texts)} FEVEROUS multi-hop rows, SmolLM2-135M-Instruct (not fine-tuned "
             f"for E -> c), beam {args.beams}, {args.k} outputs, {args.max_new_tokens} new tokens; median of "
             f"{args.repeats} interleaved runs.", "",
             harness.markdown_table(
                 ["decoding", "seconds", "rows with an output meeting the constraint", "outputs meeting it"],
                 [[decoding, f"{median[decoding]:.1f}", f"{satisfaction[decoding]['rows_with_an_output']:.0%}",
                   f"{satisfaction[decoding]['outputs_meeting_constraint']:.0%}"] for decoding in runs])]
    lines += ["", f"Constrained / plain: {ratio:.2f}x (target <= 1.5x)."]
    (harness.results_dir() / "race_constrained_decoding.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
