"""`ShortcutBalanceFilter`: no counterfactual may push one of its words past the competency test's threshold for its label."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..fingerprint import digest_json
from .base import Filter, Pair

__all__ = ["ShortcutBalanceFilter"]


class ShortcutBalanceFilter(Filter):
    """Keeps the counterfactual set from creating new shortcuts (beyond the papers).

    Counts every word of the bias field (the claim, the hypothesis, or the edited text; ``schema.bias_columns``) per
    label in the original data, then takes counterfactuals in order: one is dropped when adding it would put one of
    its words past the competency test's significance threshold for its label (Gardner et al. 2021; the same
    Bonferroni z as `cfaug_hf.diagnostics.competency_test`, fixed from the original data) *and* raise that
    word's z, e.g. the tenth "not" a generator adds to a REFUTES claim once "not" is about to predict REFUTES.
    Kept ones are added to the counts. Counterfactuals that weaken a correlation are always kept. The score is
    minus the largest such z (higher is safer); ``blocked`` counts the words that caused drops, and each drop is
    recorded as a ``shortcut_balance:<word>`` event in the augmenter's stats (and so in reports and cards).

    With ``num_proc`` every worker balances its own shard from the same original counts.

    Args:
        reference: the original training data (a ``datasets.Dataset`` in ``schema``'s columns, or
            ``(texts, labels)``).
        schema: the task schema (its ``bias_columns`` name the field).
        alpha: family-wise error rate of the test (0.01, as in the diagnostics).
        min_count: words in fewer examples are never tested (20).

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf import TaskSchema
        >>> from cfaug_hf.testing import NegateAugmenter
        >>> texts = [f"film {i} was good" for i in range(60)] + [f"film {i} seems bad" for i in range(60)]
        >>> data = Dataset.from_dict({"text": texts, "label": ["positive"] * 60 + ["negative"] * 60})
        >>> schema = TaskSchema.sentiment()
        >>> aug = NegateAugmenter(schema, filters=[ShortcutBalanceFilter(data, schema)])
        >>> out = aug.augment(data)
        >>> aug.stats.produced["negated"] < 60, aug.filters[0].blocked.most_common(1)[0][0]
        (True, 'not')
    """

    name = "shortcut_balance"

    def __init__(self, reference: Any, schema: Any, *, alpha: float = 0.01, min_count: int = 20) -> None:
        from collections import Counter

        from ..diagnostics import _texts_and_labels, competency_test

        super().__init__()
        self.columns = tuple(schema.bias_columns)
        texts, labels = _texts_and_labels(reference, self.columns, schema.label_column, schema)
        test = competency_test((texts, labels), schema, alpha=alpha, min_count=min_count)
        self.alpha, self.min_count, self.threshold = alpha, min_count, test.threshold
        self.labels = list(schema.label_names)
        self._counts: dict[str, Counter] = {}
        self._totals: Counter = Counter()
        for text, label in zip(texts, labels):
            self._add(self._words(text), label)
        self._reference = digest_json([texts, labels])
        self.blocked: Counter = Counter()

    @staticmethod
    def _words(text: str) -> set[str]:
        from ..text import is_word, tokenize

        return {t.key for t in tokenize(text) if is_word(t)}

    def _add(self, words: set[str], label: str) -> None:
        from collections import Counter

        for w in words:
            self._counts.setdefault(w, Counter())[label] += 1
        self._totals[label] += 1

    def _z(self, word: str, label: str, extra: int) -> float:
        import math

        counts = self._counts.get(word)
        n = (sum(counts.values()) if counts else 0) + extra
        total = sum(self._totals.values()) + extra
        if n < self.min_count or not total:
            return float("-inf")
        p0 = (self._totals[label] + extra) / total
        if not 0 < p0 < 1:
            return float("-inf")
        k = (counts.get(label, 0) if counts else 0) + extra
        return (k / n - p0) / math.sqrt(p0 * (1 - p0) / n)

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        return self.keep(pairs)[1]

    def keep(self, pairs: Sequence[Pair]) -> tuple[list[bool], list[float]]:
        kept, values, self.reasons = [], [], []
        for pair in pairs:
            text = " ".join(Pair._text(pair.counterfactual[c]) for c in self.columns if c in pair.counterfactual)
            words = self._words(text)
            worst, culprit = float("-inf"), None
            for w in words:
                after = self._z(w, pair.label, 1)
                if after > self.threshold and after > self._z(w, pair.label, 0) and after > worst:
                    worst, culprit = after, w
            ok = culprit is None
            if ok:
                self._add(words, pair.label)
            else:
                self.blocked[culprit] += 1
            kept.append(ok)
            self.reasons.append(culprit)
            tested = [z for z in (self._z(w, pair.label, 0) for w in words) if z != float("-inf")]
            values.append(-max(tested, default=0.0) if ok else -worst)
        return kept, values

    def get_config_dict(self) -> dict[str, Any]:
        return {"filter": self.name, "alpha": self.alpha, "min_count": self.min_count, "columns": list(self.columns),
                "threshold_z": round(self.threshold, 4), "reference": self._reference}
