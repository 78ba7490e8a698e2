"""Partial flips built from human counterfactual pairs: the negatives a whole-input flip checker learns from.

An annotator who flips a review changes the few sentences that carry its verdict. Applying some of those changes and
not others gives a text that is neither the original nor the counterfactual: half its verdict-carrying sentences say
one thing, half the other. An editor that stops early writes exactly such texts ("great acting, moving score ...
Rating: 3/10, do not watch"), and a checker that never saw one during training accepts it as a flip.
"""

from __future__ import annotations

import difflib
import random
from typing import Any

__all__ = ["partial_flips", "sentence_verdicts", "changed_blocks", "apply_blocks"]


def changed_blocks(text: str, counterfactual: str) -> tuple[list[str], list[tuple[int, int, list[str]]]]:
    """The text's sentences and each change that turns it into ``counterfactual``, as ``(start, end, new
    sentences)``: sentences ``start:end`` of the text are replaced by ``new sentences``. A replaced block of equal
    size is split into one change per sentence (annotators edit sentence by sentence); other blocks (insertions,
    deletions, uneven replacements) stay one change.

    Examples:
        >>> sentences, blocks = changed_blocks("Good cast. Fine plot. Loved it.", "Bad cast. Fine plot. Hated it.")
        >>> [(a, b, new) for a, b, new in blocks]
        [(0, 1, ['Bad cast.']), (2, 3, ['Hated it.'])]
    """
    from ..text.sentences import split_sentences

    old, new = split_sentences(text), split_sentences(counterfactual)
    blocks: list[tuple[int, int, list[str]]] = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and a1 - a0 == b1 - b0:
            blocks += [(a0 + k, a0 + k + 1, [new[b0 + k]]) for k in range(a1 - a0)]
        else:
            blocks.append((a0, a1, new[b0:b1]))
    return old, blocks


def apply_blocks(sentences: list[str], blocks: list[tuple[int, int, list[str]]]) -> str:
    """``sentences`` with the given changes (from `changed_blocks`, any subset) made, joined by spaces."""
    out: list[str] = []
    at = 0
    for a0, a1, new in sorted(blocks):
        out += sentences[at:a0] + new
        at = a1
    return " ".join(out + sentences[at:])


def _need(dataset: Any, who: str, *columns: str) -> None:
    missing = [c for c in columns if c not in dataset.column_names]
    if missing:
        raise ValueError(f"{who} needs the columns {missing}; the dataset has {dataset.column_names}.")


def partial_flips(dataset: Any, *, text_column: str = "text", counterfactual_column: str = "counterfactual",
                  label_column: str = "label", target_column: str = "target", per_pair: int = 1,
                  seed: int = 0) -> Any:
    """Mixed texts from human counterfactual pairs, labelled so that a checker learns they are not flips.

    For each pair whose text and counterfactual differ in at least two changes (`changed_blocks`), ``per_pair``
    times: a random non-empty, proper subset of the changes is made to the text (labelled with the text's own label:
    it is not the target) and the complementary subset too (labelled with the target: seen from the counterfactual,
    it is a partial flip back). Each mixed text thus appears with either label as often, so a checker trained on
    them learns to score a mixed text near even odds, under its accept threshold, while full flips keep their
    label. Rows: ``text``, ``label``, ``pair`` (the pair's row), ``share_applied`` (changes made / all changes).

    Examples:
        >>> from datasets import Dataset
        >>> pairs = Dataset.from_dict({"text": ["Good cast. Fine plot. Loved it."],
        ...                            "counterfactual": ["Bad cast. Fine plot. Hated it."],
        ...                            "label": ["positive"], "target": ["negative"]})
        >>> rows = partial_flips(pairs)
        >>> sorted(zip(rows["text"], rows["label"]))
        [('Bad cast. Fine plot. Loved it.', 'negative'), ('Good cast. Fine plot. Hated it.', 'positive')]
    """
    from datasets import Dataset

    _need(dataset, "partial_flips", text_column, counterfactual_column, label_column, target_column)
    if per_pair < 1:
        raise ValueError(f"per_pair must be at least 1, got {per_pair}.")
    out: dict[str, list[Any]] = {"text": [], "label": [], "pair": [], "share_applied": []}
    rng = random.Random(seed)
    for i, row in enumerate(dataset):
        sentences, blocks = changed_blocks(row[text_column], row[counterfactual_column])
        if len(blocks) < 2:
            continue
        seen: set[frozenset[int]] = set()
        for _ in range(per_pair):
            size = rng.randint(1, len(blocks) - 1)
            chosen = frozenset(rng.sample(range(len(blocks)), size))
            if chosen in seen:
                continue
            seen.add(chosen)
            rest = [k for k in range(len(blocks)) if k not in chosen]
            for subset, label in (([blocks[k] for k in chosen], row[label_column]),
                                  ([blocks[k] for k in rest], row[target_column])):
                out["text"].append(apply_blocks(sentences, subset))
                out["label"].append(label)
                out["pair"].append(i)
                out["share_applied"].append(round(len(subset) / len(blocks), 4))
    return Dataset.from_dict(out)


def sentence_verdicts(dataset: Any, *, text_column: str = "text", counterfactual_column: str = "counterfactual",
                      label_column: str = "label", target_column: str = "target", unchanged_per_pair: int = 2,
                      no_verdict: str | None = None, seed: int = 0) -> Any:
    """Single sentences from human counterfactual pairs, labelled with the verdict each carries alone.

    A whole-input checker that reads one sentence at a time (the edit-until-flipped loop's ranking and residual
    check) must know that "I vote a 2." says negative and that "The film is set in Ohio." says nothing. From each
    pair: every sentence the annotator replaced, labelled with the text's label, and every sentence that replaced
    it, labelled with the target (the annotator changed it because it carried the verdict); and up to
    ``unchanged_per_pair`` sentences both sides share, each once with either label, so that a checker trained on
    them scores a sentence that carries no verdict near even odds. Rows: ``text``, ``label``, ``pair``, ``kind``
    (``old``, ``new`` or ``unchanged``).

    Examples:
        >>> from datasets import Dataset
        >>> pairs = Dataset.from_dict({"text": ["Good cast. It is set in Ohio. Loved it."],
        ...                            "counterfactual": ["Bad cast. It is set in Ohio. Hated it."],
        ...                            "label": ["positive"], "target": ["negative"]})
        >>> rows = sentence_verdicts(pairs)
        >>> sorted(zip(rows["kind"], rows["text"], rows["label"]))[:3]
        [('new', 'Bad cast.', 'negative'), ('new', 'Hated it.', 'negative'), ('old', 'Good cast.', 'positive')]
        >>> sorted(l for k, l in zip(rows["kind"], rows["label"]) if k == "unchanged")
        ['negative', 'positive']
        >>> rows = sentence_verdicts(pairs, no_verdict="none")
        >>> [l for k, l in zip(rows["kind"], rows["label"]) if k == "unchanged"]
        ['none']
    """
    from datasets import Dataset

    _need(dataset, "sentence_verdicts", text_column, counterfactual_column, label_column, target_column)
    if unchanged_per_pair < 0:
        raise ValueError(f"unchanged_per_pair must be 0 or more, got {unchanged_per_pair}.")
    if no_verdict is not None and (not isinstance(no_verdict, str) or not no_verdict.strip()):
        raise ValueError(f"no_verdict must be a label name such as 'none', or None; got {no_verdict!r}.")
    out: dict[str, list[Any]] = {"text": [], "label": [], "pair": [], "kind": []}
    rng = random.Random(seed)
    shared: set[str] = set()

    def add(text: str, label: str, pair: int, kind: str) -> None:
        if text.strip():
            out["text"].append(text.strip())
            out["label"].append(label)
            out["pair"].append(pair)
            out["kind"].append(kind)

    for i, row in enumerate(dataset):
        sentences, blocks = changed_blocks(row[text_column], row[counterfactual_column])
        touched: set[int] = set()
        for a0, a1, new in blocks:
            touched.update(range(a0, a1))
            for old in sentences[a0:a1]:
                add(old, row[label_column], i, "old")
            for sentence in new:
                add(sentence, row[target_column], i, "new")
        same = [s for k, s in enumerate(sentences) if k not in touched and len(s.split()) >= 3]
        for sentence in rng.sample(same, min(unchanged_per_pair, len(same))):
            if no_verdict is None:
                add(sentence, row[label_column], i, "unchanged")
                add(sentence, row[target_column], i, "unchanged")
            elif sentence.strip() not in shared:
                shared.add(sentence.strip())
                add(sentence, no_verdict, i, "unchanged")
    return Dataset.from_dict(out)
