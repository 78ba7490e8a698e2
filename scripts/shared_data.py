"""Readers for the public benchmark data in ../shared/data/ (see its MANIFEST.md), as ``datasets.Dataset`` objects.

The data is read where it lies and never copied into the repository. ``CFAUG_SHARED_DATA`` overrides the location;
:func:`shared_dir` raises ``FileNotFoundError`` (benchmarks print it and stop) when it is absent.
"""

from __future__ import annotations

import csv
import json
import os
import random
from pathlib import Path
from typing import Any

from scripts.build_embedded_data import VITAMINC_HELDOUT_CASES, detokenize_fever, detokenize_vitaminc, strip_wiki

ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    path = Path(os.environ.get("CFAUG_SHARED_DATA", ROOT.parent / "shared" / "data"))
    if not (path / "MANIFEST.md").is_file():
        raise FileNotFoundError(f"Benchmark data not found at {path}; set CFAUG_SHARED_DATA to the shared/data folder.")
    return path


def read_tsv(path: Path) -> list[dict[str, str]]:
    # QUOTE_NONE: some CAD texts start with a double quote that is part of the text.
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def _dataset(rows: list[dict[str, Any]]) -> Any:
    from datasets import Dataset

    return Dataset.from_list(rows)


# ------------------------------------------------------------------------------------------------ sentiment
def cad_sentiment(part: str, split: str) -> Any:
    """CAD IMDb (Kaushik et al. 2020): ``part`` is ``orig`` or ``new`` (the human counterfactuals)."""
    rows = read_tsv(shared_dir() / "cad_kaushik" / "sentiment" / part / f"{split}.tsv")
    return _dataset([{"id": f"{part}-{split}-{i}", "text": r["Text"].replace("<br /><br />", " "),
                      "label": r["Sentiment"].lower()} for i, r in enumerate(rows)])


def imdb_contrast(part: str = "contrast") -> Any:
    """Gardner et al. (2020) IMDb contrast set, dev: ``original`` or ``contrast`` (100 reviews each)."""
    rows = read_tsv(shared_dir() / "contrast_sets_imdb" / "IMDb" / "data" / f"dev_{part}.tsv")
    return _dataset([{"id": f"contrast-{part}-{i}", "text": r["Text"].strip('"').replace("<br /><br />", " "),
                      "label": r["Sentiment"].lower()} for i, r in enumerate(rows)])


# ------------------------------------------------------------------------------------------------------ NLI
def cad_nli(part: str, split: str) -> Any:
    """CAD SNLI: ``part`` in original, revised_hypothesis, revised_premise, revised_combined, all_combined."""
    rows = read_tsv(shared_dir() / "cad_kaushik" / "NLI" / part / f"{split}.tsv")
    return _dataset([{"id": f"{part}-{split}-{i}", "premise": r["sentence1"], "hypothesis": r["sentence2"],
                      "label": r["gold_label"]} for i, r in enumerate(rows) if r["gold_label"]])


# ---------------------------------------------------------------------------------------- fact verification
def feverous(dev_share: float = 0.2, seed: int = 0) -> tuple[Any, Any]:
    """FEVEROUS claims with gold evidence text (ProgramFC's copy, 2962 rows), split into train and dev.

    Evidence is the list of evidence sentences with wiki markup removed; rows without text evidence are dropped.
    """
    rows = json.loads((shared_dir() / "feverous_programfc" / "dev.json").read_text())
    keep = []
    for r in rows:
        sentences = [strip_wiki(ln.split("\t", 1)[1]).strip() for ln in r["evidence"].split("\n") if "\t" in ln]
        sentences = [s for s in sentences if s]
        if sentences:
            keep.append({"id": f"feverous-{r['id']}", "claim": r["claim"].strip(), "evidence": sentences,
                         "label": r["label"].upper()})
    random.Random(seed).shuffle(keep)
    n_dev = int(len(keep) * dev_share)
    return _dataset(keep[n_dev:]), _dataset(keep[:n_dev])


def fever_paper(dev_share: float = 0.1, seed: int = 0) -> tuple[Any, Any]:
    """The FEVER paper dev set without any row that shares a claim or evidence sentence with a FEVER-Symmetric
    release (10746 rows, MANIFEST.md), detokenised like FEVER-Symmetric, split into train and a held-out dev."""
    path = shared_dir() / "fever_paper_dev" / "fever_dev_decontaminated.jsonl"
    rows = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    keep = [{"id": f"fever-{r['id']}", "claim": detokenize_fever(r["claim"]),
             "evidence": [detokenize_fever(r["evidence"])], "label": r["label"]} for r in rows]
    random.Random(seed).shuffle(keep)
    n_dev = int(len(keep) * dev_share)
    return _dataset(keep[n_dev:]), _dataset(keep[:n_dev])


def vitaminc_heldout_cases(seed: int = 0) -> set[str]:
    """The VitaminC cases held out from the shipped claim generator's training (the same seeded draw as
    ``scripts/build_embedded_data.py``), so the checker and the generator are both measured on unseen cases."""
    from scripts.build_embedded_data import vitaminc_pairs

    _, held = vitaminc_pairs(shared_dir(), seed)
    return {p["split"] for p in held}


def vitaminc_rows(split: str, seed: int = 0) -> Any:
    """VitaminC real-revision rows (claim, evidence as one sentence in a list, 3-way label), detokenised.

    ``split="heldout"`` gives the rows of the held-out cases (:func:`vitaminc_heldout_cases`), ``"train"`` the
    rest. Each row carries its ``case_id``: rows of one case are minimal edits of each other.
    """
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    held = vitaminc_heldout_cases(seed)
    assert len(held) == VITAMINC_HELDOUT_CASES
    rows = []
    for line in (shared_dir() / "vitaminc_real" / "test.jsonl").read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            if (r["case_id"] in held) == (split == "heldout"):
                rows.append({"id": f"vitaminc-{r['unique_id']}", "case_id": r["case_id"],
                             "claim": detokenize_vitaminc(r["claim"]),
                             "evidence": [detokenize_vitaminc(r["evidence"])], "label": r["label"]})
    return _dataset(rows)


def fever_paper_sample(n: int = 2000, seed: int = 0) -> Any:
    """A seeded sample of ``n`` rows of the decontaminated FEVER paper dev set (an out-of-domain test set for
    models trained on FEVEROUS)."""
    train, dev = fever_paper()
    from datasets import concatenate_datasets

    every = concatenate_datasets([train, dev])
    return every.shuffle(seed=seed).select(range(min(n, len(every))))


def fm2(split: str = "dev") -> Any:
    """Fool Me Twice (Eisenschlos et al. 2021): claim, gold evidence sentences, SUPPORTS/REFUTES."""
    rows = []
    for line in (shared_dir() / "fm2" / f"{split}.jsonl").read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            evidence = [e["text"].strip() for e in r["gold_evidence"] if e.get("text", "").strip()]
            if evidence:
                rows.append({"id": f"fm2-{r['id']}", "claim": r["text"].strip(), "evidence": evidence,
                             "label": r["label"]})
    return _dataset(rows)


def fever_symmetric() -> Any:
    """FEVER-Symmetric v0.2 dev (708 rows, 177 quads): a contrast set for claim-only bias."""
    path = shared_dir() / "fever_symmetric" / "symmetric_v0.2" / "fever_symmetric_dev.jsonl"
    rows = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    return _dataset([{"id": f"fsym-{r['id']}", "claim": detokenize_fever(r["claim"]),
                      "evidence": [detokenize_fever(r["evidence"])], "label": r["gold_label"]} for r in rows])


# --------------------------------------------------------------------------------------------------- ICDA
#: Keyword rules that define the true rationale sentences of the synthetic ICDA sets (MANIFEST.md).
ICDA_RATIONALE_WORDS = {
    "restaurant": ("food", "dish", "flavor", "delicious", "bland", "cook", "ingredients"),
    "connect": ("connect", "cuts out", "dropout"),
}


def icda(task: str, split: str) -> Any:
    """An ICDA file (``label<TAB>sent1[SEP]sent2...``): columns ``sentences`` (list), ``label`` (0/1), ``id``.

    ``task`` is ``restaurant``, ``connect`` or ``location`` (hotel reviews; its only file is ``dev``). For
    restaurant and connect a ``rationale`` column marks the sentences that are true rationales by keyword rule.
    """
    folder = shared_dir() / "icda_hotel_synth" / task
    name = "dev.ratform.binmySENTS4" if task == "location" else split
    path = folder / name
    if not path.is_file():
        matches = sorted(folder.glob(f"{split}*"))
        if not matches:
            raise FileNotFoundError(f"No {split} file for ICDA task {task!r} in {folder}.")
        path = matches[0]
    words = ICDA_RATIONALE_WORDS.get(task)
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines()):
        if not line.strip():
            continue
        label, _, body = line.partition("\t")
        sentences = [s.strip() for s in body.split("[SEP]") if s.strip()]
        row = {"id": f"{task}-{split}-{i}", "sentences": sentences, "label": int(label)}
        if words:
            row["rationale"] = [any(w in s.lower() for w in words) for s in sentences]
        rows.append(row)
    return _dataset(rows)


# ------------------------------------------------------------------------------------- CORE: pairs and corpora
def cad_sentiment_pairs(split: str) -> list[dict[str, str]]:
    """(original review, its human counterfactual) pairs of CAD IMDb, matched by ``batch_id``."""
    rows = read_tsv(shared_dir() / "cad_kaushik" / "sentiment" / "combined" / "paired" / f"{split}_paired.tsv")
    groups: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        groups.setdefault(r["batch_id"], []).append(r)
    originals = {r["Text"] for r in read_tsv(shared_dir() / "cad_kaushik" / "sentiment" / "orig" / f"{split}.tsv")}
    pairs = []
    for group in groups.values():
        if len(group) != 2:
            continue
        orig, new = (group if group[0]["Text"] in originals else group[::-1])
        pairs.append({"query": orig["Text"].replace("<br /><br />", " "), "label": orig["Sentiment"].lower(),
                      "positive": new["Text"].replace("<br /><br />", " ")})
    return pairs


def cad_nli_pairs(split: str) -> list[dict[str, str]]:
    """CAD SNLI (premise, hypothesis) with an entailment <-> contradiction label, paired with the revised hypothesis
    of the opposite label (``original[i]`` pairs with ``revised_hypothesis[2i]`` and ``[2i+1]``)."""
    base = shared_dir() / "cad_kaushik" / "NLI"
    original = read_tsv(base / "original" / f"{split}.tsv")
    revised = read_tsv(base / "revised_hypothesis" / f"{split}.tsv")
    flip = {"entailment": "contradiction", "contradiction": "entailment"}
    pairs = []
    for i, row in enumerate(original):
        target = flip.get(row["gold_label"])
        for r in revised[2 * i:2 * i + 2]:
            if target and r["gold_label"] == target and r["sentence1"] == row["sentence1"]:
                pairs.append({"premise": row["sentence1"], "hypothesis": row["sentence2"], "label": row["gold_label"],
                              "positive": r["sentence2"]})
    return pairs


def imdb_sentences() -> list[str]:
    """Sentences of the original CAD IMDb reviews (orig/train, dev, test; never the human counterfactuals)."""
    from cfaug_hf.text.sentences import split_sentences

    out: list[str] = []
    for split in ("train", "dev", "test"):
        for r in read_tsv(shared_dir() / "cad_kaushik" / "sentiment" / "orig" / f"{split}.tsv"):
            out += [s for s in split_sentences(r["Text"].replace("<br /><br />", " ")) if len(s.split()) >= 3]
    return list(dict.fromkeys(out))


def nli_corpus_sentences(limit: int = 30000) -> list[str]:
    """Short sentences for NLI retrieval: CAD SNLI original premises and hypotheses (never the revised ones), then
    Wikipedia evidence sentences of FEVER (paper dev) and VitaminC, up to ``limit``."""
    out: list[str] = []
    for split in ("train", "dev", "test"):
        for r in read_tsv(shared_dir() / "cad_kaushik" / "NLI" / "original" / f"{split}.tsv"):
            out += [r["sentence1"], r["sentence2"]]
    for line in (shared_dir() / "fever_paper_dev" / "fever_dev_decontaminated.jsonl").read_text().splitlines():
        evidence = json.loads(line)["evidence"]
        out += [detokenize_fever(e) for e in (evidence if isinstance(evidence, list) else [evidence])]
    for line in (shared_dir() / "vitaminc_real" / "test.jsonl").read_text().splitlines():
        out.append(detokenize_vitaminc(json.loads(line)["evidence"]))
    out = [s.strip() for s in out if 3 <= len(s.split()) <= 40]
    return list(dict.fromkeys(out))[:limit]


def cad_sentiment_sentence_pairs(split: str) -> list[dict[str, str]]:
    """The sentences CAD's annotators changed: (original sentence, edited sentence) from review pairs whose sentence
    counts match, so the i-th sentences correspond. CF-DPR for sentiment works at this level: the corpus is review
    sentences, and CORE edits the sentences that carry the sentiment."""
    from cfaug_hf.text.sentences import split_sentences

    out = []
    for pair in cad_sentiment_pairs(split):
        old, new = split_sentences(pair["query"]), split_sentences(pair["positive"])
        if len(old) != len(new):
            continue
        for a, b in zip(old, new):
            if a != b and len(a.split()) >= 3 and len(b.split()) >= 3:
                out.append({"query": a, "label": pair["label"], "positive": b})
    return out


# ------------------------------------------------------------------------------ editors: human edits, quarters
def annotated_quarter(n: int, seed: int = 0) -> set[int]:
    """The seeded quarter of ``n`` rows that the amplification protocol treats as annotated (their human
    counterfactuals train the editor; the editor writes counterfactuals for the other rows)."""
    return set(random.Random(seed).sample(range(n), n // 4))


def annotation_quarters(n: int, seed: int = 0) -> list[set[int]]:
    """Four disjoint seeded quarters of ``n`` rows, the first being :func:`annotated_quarter` (for cross-fitting:
    an editor trained on quarter k writes for rows outside it)."""
    first = annotated_quarter(n, seed)
    rest = sorted(set(range(n)) - first)
    random.Random(seed + 1).shuffle(rest)
    size = len(rest) // 3
    return [first, set(rest[:size]), set(rest[size:2 * size]), set(rest[2 * size:])]


def cad_sentiment_edit_rows(split: str) -> Any:
    """CAD IMDb reviews with their human counterfactual: text, counterfactual, label, target (the flipped label)."""
    flip = {"negative": "positive", "positive": "negative"}
    return _dataset([{"text": p["query"], "counterfactual": p["positive"], "label": p["label"],
                      "target": flip[p["label"]]} for p in cad_sentiment_pairs(split)])


def cad_nli_edit_rows(split: str, side: str = "hypothesis") -> Any:
    """CAD SNLI originals with each revised hypothesis (``original[i]`` revises into ``revised_hypothesis[2i]`` and
    ``[2i+1]``, one per other label): premise, text (the hypothesis), counterfactual, label, target, original.
    ``side="premise"``: each revised premise instead (``revised_premise[2i]``, ``[2i+1]``): hypothesis, text (the
    premise), counterfactual, label, target, original."""
    if side not in ("hypothesis", "premise"):
        raise ValueError(f"side must be 'hypothesis' or 'premise', got {side!r}")
    base = shared_dir() / "cad_kaushik" / "NLI"
    original = read_tsv(base / "original" / f"{split}.tsv")
    revised = read_tsv(base / f"revised_{side}" / f"{split}.tsv")
    kept, edited = ("sentence1", "sentence2") if side == "hypothesis" else ("sentence2", "sentence1")
    context = "premise" if side == "hypothesis" else "hypothesis"
    rows = []
    for i, row in enumerate(original):
        for r in revised[2 * i:2 * i + 2]:
            if r[kept] == row[kept] and r["gold_label"] != row["gold_label"]:
                rows.append({context: row[kept], "text": row[edited], "counterfactual": r[edited],
                             "label": row["gold_label"], "target": r["gold_label"], "original": i})
    return _dataset(rows)
