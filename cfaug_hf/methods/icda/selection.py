"""ICDA's counterfactual plan: which documents get a swapped rationale, from which pool, and how to check it.

Everything here is plain Python over indices, shared by the ``datasets.map`` augmenter, the per-epoch dataset that
`trainer_callbacks.ICDACallback` drives and the iteration driver.
"""

from __future__ import annotations

import math
import numbers
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...text.sentences import SelectionResult

__all__ = ["SelectionResult", "CounterfactualSpec", "Plan", "plan_counterfactuals", "rationale_set_change",
           "position_histograms", "is_degenerate", "rationale_precision", "occlusion_rationales"]


@dataclass(frozen=True)
class CounterfactualSpec:
    """Document ``source`` with sentence ``position`` replaced by sentence ``donor_position`` of ``donor``."""

    source: int
    swaps: tuple[tuple[int, int, int], ...]  # (position in source, donor document, position in donor)
    label: int


@dataclass
class Plan:
    """The counterfactuals of one round and the accounting of every document."""

    specs: list[CounterfactualSpec]
    outcomes: list[str]
    pools: dict[int, list[tuple[int, int]]]
    counts: Counter = field(default_factory=Counter)


def plan_counterfactuals(result: SelectionResult, labels: Sequence[int], num_sentences: Sequence[int], *,
                         size: int | None = None, pool_quantile: float = 0.1, seed: int = 0,
                         sentences: Sequence[Sequence[Any]] | None = None) -> Plan:
    """Draw ICDA counterfactuals (Plyler and Chi, Section "Implementation"):

    1. keep the documents the model classifies correctly;
    2. per class, sort them by prediction error; the class's rationale pool is the selected sentences of those whose
       error is at or below the ``pool_quantile`` quantile (10%);
    3. the counterfactual set has ``size`` rows (default: as many as documents), split evenly over classes; each
       class takes its lowest-error documents first (cycling through them when it has fewer);
    4. each counterfactual replaces the document's selected sentence(s) with random rationales from the pool of
       another class (two classes: the other one) and takes that class's label.

    Documents with one sentence cannot be swapped; they, misclassified documents and documents not drawn are
    accounted in ``outcomes`` (``skipped:single_sentence``, ``skipped:misclassified``, ``skipped:not_drawn``).
    With ``sentences`` (each document's sentences, as texts or ids), a donor sentence equal to the one it replaces
    is drawn again: the swap would give the original text with the other label. A document whose every candidate
    donor is its own sentence gets no counterfactual (``skipped:swap_unchanged``).

    Examples:
        >>> r = SelectionResult([[0], [1], [0], [1]], [0, 0, 1, 1], [0.1, 0.2, 0.1, 0.3])
        >>> plan = plan_counterfactuals(r, [0, 0, 1, 1], [2, 2, 2, 2], seed=0)
        >>> [(s.source, s.label) for s in plan.specs]
        [(0, 1), (1, 1), (2, 0), (3, 0)]
    """
    if result.error is None:
        raise ValueError("plan_counterfactuals needs prediction errors: call select(..., labels=...).")
    n = len(labels)
    if not (len(result.selected) == len(result.predicted) == len(result.error) == len(num_sentences) == n):
        raise ValueError("selection, labels and sentence counts must describe the same documents.")
    rng = random.Random(seed)
    outcomes = [""] * n
    classes = sorted(set(int(y) for y in labels))
    ranked: dict[int, list[int]] = {c: [] for c in classes}
    for d in range(n):
        if num_sentences[d] < 2:
            outcomes[d] = "skipped:single_sentence"
        elif not result.selected[d]:
            outcomes[d] = "skipped:no_rationale"
        elif result.predicted[d] != int(labels[d]):
            outcomes[d] = "skipped:misclassified"
        else:
            _check_selected(result.selected[d], d, num_sentences[d])
            ranked[int(labels[d])].append(d)
    pools: dict[int, list[tuple[int, int]]] = {}
    for c, docs in ranked.items():
        docs.sort(key=lambda d: (result.error[d], d))
        if docs:
            cut = sorted(result.error[d] for d in docs)[max(0, math.ceil(pool_quantile * len(docs)) - 1)]
            pools[c] = [(d, s) for d in docs if result.error[d] <= cut for s in result.selected[d]]
        else:
            pools[c] = []
    counts: Counter = Counter()
    specs: list[CounterfactualSpec] = []
    target = n if size is None else size
    per_class = target // max(len(classes), 1)
    for c in classes:
        others = [o for o in classes if o != c and pools.get(o)]
        docs = ranked[c]
        if not others:  # e.g. a dataset with one class: there is no rationale of another class to swap in
            for d in docs:
                outcomes[d] = "skipped:no_other_class_pool"
            continue
        if not docs:  # no correctly classified document of this class: its share of counterfactuals stays empty
            continue
        for i in range(per_class):
            d = docs[i % len(docs)]
            new_label = others[0] if len(others) == 1 else rng.choice(others)
            pool = pools[new_label]
            swaps = [(pos, *_donor(pool, rng, None if sentences is None else sentences[d][pos], sentences))
                     for pos in result.selected[d]]
            if any(s[1] is None for s in swaps):
                outcomes[d] = outcomes[d] or "skipped:swap_unchanged"
                continue
            specs.append(CounterfactualSpec(d, tuple(swaps), new_label))
            outcomes[d] = "produced:rationale_swap"
        for d in docs:
            outcomes[d] = outcomes[d] or "skipped:not_drawn"
    counts.update(o for o in outcomes)
    counts["counterfactuals"] = len(specs)
    return Plan(specs, outcomes, pools, counts)


def _donor(pool: list[tuple[int, int]], rng: random.Random, replaced: Any,
           sentences: Sequence[Sequence[Any]] | None) -> tuple[int | None, int | None]:
    """A random (document, position) of ``pool`` whose sentence is not ``replaced``; (None, None) when every one
    is. A few draws first (a collision is rare, and the usual case stays one draw), then a scan."""
    for _ in range(8):
        donor, pos = pool[rng.randrange(len(pool))]
        if sentences is None or sentences[donor][pos] != replaced:
            return donor, pos
    others = [(o, p) for o, p in pool if sentences[o][p] != replaced]  # type: ignore[index]
    return others[rng.randrange(len(others))] if others else (None, None)


def _check_selected(chosen: Any, d: int, sentences: int) -> None:
    """Refuse a selection (from a selector of the user's) that is not sentence indices of document ``d``."""
    try:
        bad = [s for s in chosen if isinstance(s, bool) or not isinstance(s, numbers.Integral)
               or not 0 <= s < sentences]
    except TypeError:  # not a list at all
        bad = [chosen]
    if bad:
        raise ValueError(f"The rationale selector chose sentence {bad[0]!r} of document {d}, which has {sentences} "
                         f"sentence(s); a selection is a list of sentence indices 0 to {sentences - 1}.")


def rationale_set_change(current: SelectionResult, previous: SelectionResult | None, *,
                         labels: Sequence[int] | None = None,
                         sentences: Sequence[Sequence[str]] | None = None) -> float | None:
    """How much the rationale set moved between two selections over the same documents; ``None`` without a
    previous one.

    With ``labels`` and ``sentences`` (each document's sentence texts), the reference's measure: per class, the set
    of selected sentence *strings* of that class's documents; the change is (|A_prev| − |A_prev ∩ A_cur|) / |A_cur|,
    averaged over classes. Without them, |A_k − A_{k−1}| / |A_k| over (document, sentence index) pairs.

    Examples:
        >>> a, b = SelectionResult([[0], [1]], [0, 1]), SelectionResult([[1], [1]], [0, 1])
        >>> rationale_set_change(b, a, labels=[0, 1], sentences=[["x.", "y."], ["y.", "z."]])
        0.5
    """
    if previous is None:
        return None
    if labels is None or sentences is None:
        a, b = current.rationale_set(), previous.rationale_set()
        return len(a - b) / max(len(a), 1)
    changes = []
    for c in sorted(set(int(y) for y in labels)):
        def strings(result: SelectionResult) -> set[str]:
            return {sentences[d][s] for d, y in enumerate(labels) if int(y) == c for s in result.selected[d]
                    if s < len(sentences[d])}
        cur, prev = strings(current), strings(previous)
        changes.append((len(prev) - len(prev & cur)) / max(len(cur), 1))
    return sum(changes) / len(changes)


def _position_counts(result: SelectionResult, labels: Sequence[int], num_sentences: Sequence[int],
                     bins: int) -> tuple[Any, Any]:
    """Per correctly classified document: its class and its selected positions counted in ``bins`` buckets of the
    normalised position (index / sentences), the paper's rationale-index bins."""
    import numpy as np

    rows, classes = [], []
    for d, y in enumerate(labels):
        n = num_sentences[d]
        if result.predicted[d] != int(y) or n == 0 or not result.selected[d]:
            continue
        row = np.zeros(bins)
        for s in result.selected[d]:
            row[min(int(bins * s / n), bins - 1)] += 1
        rows.append(row)
        classes.append(int(y))
    return np.asarray(rows).reshape(-1, bins), np.asarray(classes, dtype=int)


def _histograms(counts: Any, classes: Any, order: Sequence[int]) -> Any:
    """(classes, bins) normalised histograms; ``classes`` may carry leading permutation axes."""
    import numpy as np

    onehot = (classes[..., None] == np.asarray(order)).astype(float)  # (..., docs, C)
    totals = np.einsum("...dc,db->...cb", onehot, counts)
    return totals / np.maximum(totals.sum(-1, keepdims=True), 1.0)


def _gap(hist: Any) -> Any:
    """The largest class-wise difference in any bin, or in the first-versus-second-bin preference."""
    import numpy as np

    c = hist.shape[-2]
    gaps = [np.zeros(hist.shape[:-2])]
    for i in range(c):
        for j in range(i + 1, c):
            a, b = hist[..., i, :], hist[..., j, :]
            gaps.append(np.abs(a - b).max(-1))
            gaps.append(np.abs(np.abs(a[..., 0] - a[..., 1]) - np.abs(b[..., 0] - b[..., 1])))
    return np.max(np.stack(gaps), axis=0)


def position_histograms(result: SelectionResult, labels: Sequence[int], num_sentences: Sequence[int],
                        bins: int = 10) -> dict[int, list[float]]:
    """Per class, the normalised histogram of selected positions over correctly classified documents, each position
    binned by its normalised index (index / sentences, in tenths): the paper's rationale-index bins.

    Examples:
        >>> position_histograms(SelectionResult([[0], [3]], [0, 1]), [0, 1], [4, 4], bins=4)
        {0: [1.0, 0.0, 0.0, 0.0], 1: [0.0, 0.0, 0.0, 1.0]}
    """
    counts, classes = _position_counts(result, labels, num_sentences, bins)
    order = sorted(set(classes.tolist()))
    hist = _histograms(counts, classes, order)
    return {c: [float(v) for v in hist[i]] for i, c in enumerate(order)}


def is_degenerate(result: SelectionResult, labels: Sequence[int], num_sentences: Sequence[int], *,
                  threshold: float = 0.2, noise_quantile: float | None = 0.99, permutations: int = 200,
                  seed: int = 0) -> tuple[bool, float]:
    """The paper's two degeneracy tests on class-wise rationale-index histograms (`position_histograms`);
    True when either fails:

    * class test: some bin is picked for one class more than ``threshold`` (20 points) more often than for another;
    * first-bin test: the classes differ by more than ``threshold`` in how strongly they prefer the first over the
      second bin (| |h_a[0] − h_a[1]| − |h_b[0] − h_b[1]| |), the usual shape of a degenerate selector that signals
      the label through position.

    The paper checks thousands of dev documents, where chance differences between two classes' histograms are a
    few points. On a dev set of tens of documents chance alone exceeds 20 points, and every checkpoint of a good
    selector would be refused. So a gap must also exceed what chance gives: the ``noise_quantile`` of the gap when
    the class labels are shuffled among the same documents (``permutations`` seeded draws); ``None`` turns this
    off (the paper's test as written). Returns (flag, largest gap).

    Examples:
        >>> r = SelectionResult([[0], [0], [3], [3]] * 10, [0, 0, 1, 1] * 10, [0.1] * 40)
        >>> is_degenerate(r, [0, 0, 1, 1] * 10, [4] * 40)
        (True, 1.0)
        >>> r = SelectionResult([[0], [1], [2], [3]], [0, 0, 1, 1], [0.1] * 4)  # 2 documents a class: chance
        >>> is_degenerate(r, [0, 0, 1, 1], [4] * 4)[0]
        False
    """
    import numpy as np

    counts, classes = _position_counts(result, labels, num_sentences, 10)
    order = sorted(set(classes.tolist()))
    if len(order) < 2:
        return False, 0.0
    gap = float(_gap(_histograms(counts, classes, order)))
    if gap <= threshold or noise_quantile is None:
        return gap > threshold, gap
    rng = np.random.default_rng(seed)
    shuffled = np.stack([rng.permutation(classes) for _ in range(permutations)])
    floor = float(np.quantile(_gap(_histograms(counts, shuffled, order)), noise_quantile))
    return gap > floor, gap


def rationale_precision(selected: Sequence[Sequence[int]], truth: Sequence[Sequence[bool]]) -> float:
    """Share of selected sentences that are true rationales (sentences past the end of ``truth`` count as wrong).

    Examples:
        >>> rationale_precision([[0], [2]], [[True, False], [False, False, True]])
        1.0
    """
    hits = total = 0
    for sel, t in zip(selected, truth):
        for s in sel:
            total += 1
            hits += bool(s < len(t) and t[s])
    return hits / total if total else float("nan")


def occlusion_rationales(predict_proba: Any, documents: Sequence[Sequence[str]], labels: Sequence[int] | None = None,
                         *, k: int = 1, joiner: str = " ", batch_size: int = 64) -> SelectionResult:
    """Sentence rationales for any classifier: the sentence whose removal lowers the predicted label's probability
    most (occlusion). ``predict_proba(list[str]) -> array (n, labels)`` scores whole texts. Not the paper's
    method (it trains a rationale network), but it lets ICDA run with any sequence classifier.
    """
    from ...components.occlusion import occlusion_drops

    # A one-sentence document has nothing to compare with: its only sentence is its rationale.
    scores, full = occlusion_drops(predict_proba, documents, render=joiner.join, min_units=2, batch_size=batch_size)
    drops = {d: [(v, s) for s, v in enumerate(row)] for d, row in enumerate(scores) if len(row) > 1}
    selected = []
    for d, doc in enumerate(documents):
        ranked = sorted(drops.get(d, [(0.0, 0)] if doc else []), key=lambda x: (-x[0], x[1]))
        selected.append(sorted(s for _, s in ranked[:k]))
    predicted = [int(full[d].argmax()) for d in range(len(documents))]
    return SelectionResult.from_probs(selected, predicted, [full[d].tolist() for d in range(len(documents))],
                                      labels)


class OcclusionSelector:
    """Rationales from any ``AutoModelForSequenceClassification`` by occlusion (see `occlusion_rationales`).

    Documents are joined with spaces and classified whole; each sentence is scored by how much removing it lowers
    the predicted label's probability.

    Examples:
        >>> from cfaug_hf.testing import tiny_classifier
        >>> selector = OcclusionSelector(*tiny_classifier(("negative", "positive")))
        >>> result = selector.select([["the food was bad .", "the room was clean ."]], labels=[0])
        >>> len(result.selected[0])
        1
    """

    def __init__(self, model: Any, tokenizer: Any, *, k: int = 1, max_length: int = 512, batch_size: int = 32,
                 device: str | None = None):
        import torch

        self.model, self.tokenizer, self.k = model, tokenizer, k
        self.max_length, self.batch_size = max_length, batch_size
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")

    def predict_proba(self, texts: Sequence[str]) -> Any:
        import torch

        model = self.model.to(self.device)
        was_training = model.training
        model.eval()
        enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length,
                             return_tensors="pt")
        with torch.no_grad():
            logits = model(**{k: v.to(self.device) for k, v in enc.items()}).logits
        model.train(was_training)
        return torch.softmax(logits.float(), -1).cpu().numpy()

    def select(self, documents: Sequence[Sequence[str]], labels: Sequence[int] | None = None) -> SelectionResult:
        return occlusion_rationales(self.predict_proba, documents, labels, k=self.k, batch_size=self.batch_size)

    def fingerprint(self) -> str:
        from ...fingerprint import digest_json, digest_module

        return digest_json({"occlusion": self.k, "weights": digest_module(self.model)})
