"""Rebuild the small datasets shipped in cfaug_hf/data/ from the public benchmark copies in ../shared/data/.

    python -m scripts.build_embedded_data [--shared ../shared/data]

Writes:
  cfaug_hf/data/feverous_sample.jsonl   300 FEVEROUS dev claims (200 supports, 100 refutes) with evidence sentences
  cfaug_hf/data/claim_pairs.jsonl       (positive, negative) claim pairs to train a negative-claim generator:
                                        VitaminC real-revision claim pairs (supported -> refuted claim about the same
                                        evidence; held-out cases excluded) and CAD-SNLI hypothesis revisions
                                        (entailment -> contradiction, same premise). FEVER-Symmetric is a test set for
                                        the benchmarks, so none of its pairs is shipped.
The selection is seeded, so rerunning gives the same files.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "cfaug_hf" / "data"

#: FEVER-Symmetric quads kept out of the generator's training pairs, so benchmarks can measure on them.
FEVER_SYM_HELDOUT = 40
#: VitaminC cases (all pairs of a case go together) kept out of the shipped pairs for the generator benchmark.
VITAMINC_HELDOUT_CASES = 100
#: VitaminC pairs shipped: more than any CPU training budget reaches (the demo trains on about 700 pairs).
VITAMINC_SHIPPED = 4000
#: Longest claim (words) of a shipped pair. FEVER claims average 9 words; the 9% of VitaminC claims above 20 words
#: would double the training cost per step and teach rewrites of a length CrossAug rarely sees.
VITAMINC_MAX_WORDS = 20

_WIKI_LINK = re.compile(r"\[\[([^\]|]*)(?:\|([^\]]*))?\]\]")


def strip_wiki(text: str) -> str:
    return _WIKI_LINK.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(1).replace("_", " "), text)


def detokenize_fever(text: str) -> str:
    """Undo FEVER's PTB-style tokenisation (``Teck 's`` -> ``Teck's``, ``-LRB-`` -> ``(``)."""
    text = text.replace("-LRB-", "(").replace("-RRB-", ")").replace("-LSB-", "[").replace("-RSB-", "]")
    text = text.replace("``", '"').replace("''", '"').replace(" -- ", " – ")
    text = re.sub(r"\( ", "(", text)
    text = re.sub(r" \)", ")", text)
    text = re.sub(r" ([.,:;!?%])", r"\1", text)
    text = re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", text)
    text = re.sub(r"\$ (\d)", r"$\1", text)
    return re.sub(r"\s+", " ", text).strip()


def feverous_sample(shared: Path, n_supports: int = 200, n_refutes: int = 100, seed: int = 0) -> list[dict]:
    rows = json.loads((shared / "feverous_programfc" / "dev.json").read_text())
    keep = []
    for r in rows:
        if r["challenge"] == "Combining Tables and Text":
            continue
        lines = [ln.split("\t", 1) for ln in r["evidence"].split("\n") if "\t" in ln]
        sentences = [strip_wiki(s).strip() for _, s in lines]
        sentences = [s for s in sentences if s]
        if not 1 <= len(sentences) <= 5 or sum(map(len, sentences)) > 1000 or len(r["claim"].split()) > 35:
            continue
        keep.append({"id": f"feverous-{r['id']}", "claim": r["claim"].strip(), "evidence": sentences,
                     "label": r["label"].upper(), "page": lines[0][0], "challenge": r["challenge"]})
    rng = random.Random(seed)
    rng.shuffle(keep)
    sup = [r for r in keep if r["label"] == "SUPPORTS"][:n_supports]
    ref = [r for r in keep if r["label"] == "REFUTES"][:n_refutes]
    return sorted(sup + ref, key=lambda r: int(r["id"].split("-")[1]))


def _read_tsv(path: Path) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def snli_pairs(shared: Path, split: str) -> list[dict]:
    """Entailed -> contradicted hypotheses of the same premise from CAD-SNLI's hypothesis revisions."""
    nli = shared / "cad_kaushik" / "NLI"
    original = _read_tsv(nli / "original" / f"{split}.tsv")
    revised = _read_tsv(nli / "revised_hypothesis" / f"{split}.tsv")
    pairs = []
    for i, row in enumerate(original):
        group = [row] + revised[2 * i:2 * i + 2]
        if any(g["sentence1"] != row["sentence1"] for g in group):
            continue
        ent = [g["sentence2"] for g in group if g["gold_label"] == "entailment"]
        con = [g["sentence2"] for g in group if g["gold_label"] == "contradiction"]
        for e in ent[:1]:
            for c in con[:1]:
                if e.strip() and c.strip() and e.strip() != c.strip():
                    pairs.append({"source": e.strip(), "target": c.strip(), "origin": "cad-snli",
                                  "split": split})
    return pairs


def detokenize_vitaminc(text: str) -> str:
    """VitaminC is tokenised like FEVER and also splits thousands (``130 , 000``); undo both."""
    text = re.sub(r"(\d) , (?=\d{3}\b)", r"\1,", text.replace("\ufffd", " "))
    return detokenize_fever(text)


def vitaminc_pairs(shared: Path, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """(supported claim -> refuted claim about the same evidence) from VitaminC's real-revision split.

    Every SUPPORTS claim of a (case, evidence) group is paired with every REFUTES claim of the same group (9,866
    pairs, mostly a number, comparative or name changed). Whole cases are held out, seeded, so no held-out claim has
    a near copy in training. Returns (train, held-out).
    """
    groups: dict[tuple[str, str], dict[str, list[str]]] = {}
    for line in (shared / "vitaminc_real" / "test.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        group = groups.setdefault((r["case_id"], r["evidence"]), {"SUPPORTS": [], "REFUTES": []})
        if r["label"] in group:
            group[r["label"]].append(detokenize_vitaminc(r["claim"]))
    by_case: dict[str, list[dict]] = {}
    seen = set()
    for (case, _), group in groups.items():
        for pos in group["SUPPORTS"]:
            for neg in group["REFUTES"]:
                if pos != neg and (pos, neg) not in seen:
                    seen.add((pos, neg))
                    by_case.setdefault(case, []).append({"source": pos, "target": neg, "origin": "vitaminc",
                                                         "split": case})
    cases = sorted(by_case)
    random.Random(seed).shuffle(cases)
    held = [p for c in cases[:VITAMINC_HELDOUT_CASES] for p in by_case[c]]
    train = [p for c in cases[VITAMINC_HELDOUT_CASES:] for p in by_case[c]]
    return train, held


def fever_symmetric_pairs(shared: Path) -> tuple[list[dict], list[dict]]:
    """(supported claim -> refuted claim) from each FEVER-Symmetric quad; the last quads are held out."""
    rows = [json.loads(ln) for ln in (shared / "fever_symmetric" / "symmetric_v0.2" /
                                      "fever_symmetric_dev.jsonl").read_text().splitlines() if ln.strip()]
    by_id = {r["id"]: r for r in rows}
    pairs = []
    for r in rows:
        if r["id"].endswith(("0000002", "0000003", "0000004")):
            continue
        edited = by_id.get(r["id"] + "0000003")
        if edited is None:
            continue
        c, c2 = detokenize_fever(r["claim"]), detokenize_fever(edited["claim"])
        pos, neg = (c, c2) if r["gold_label"] == "SUPPORTS" else (c2, c)
        pairs.append({"source": pos, "target": neg, "origin": "fever-symmetric", "split": r["id"]})
    return pairs[:-FEVER_SYM_HELDOUT], pairs[-FEVER_SYM_HELDOUT:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    sample = feverous_sample(args.shared)
    with (OUT / "feverous_sample.jsonl").open("w") as f:
        for r in sample:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    vitaminc_train, _ = vitaminc_pairs(args.shared)
    short = [p for p in vitaminc_train if max(len(p["source"].split()), len(p["target"].split())) <= VITAMINC_MAX_WORDS]
    vitaminc = random.Random(0).sample(short, min(VITAMINC_SHIPPED, len(short)))
    pairs = vitaminc + snli_pairs(args.shared, "train") + snli_pairs(args.shared, "dev")
    with (OUT / "claim_pairs.jsonl").open("w") as f:
        for r in pairs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"feverous_sample.jsonl: {len(sample)} rows; claim_pairs.jsonl: {len(pairs)} pairs "
          f"({len(vitaminc)} VitaminC, {sum(p['origin'] == 'cad-snli' for p in pairs)} CAD-SNLI)")


if __name__ == "__main__":
    main()
