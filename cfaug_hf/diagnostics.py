"""Bias diagnostics: which tokens predict the label on their own, and how well the edited field alone does.

The competency test follows Gardner et al. (2021, "Competency Problems"): for a token seen in n examples, p is
the share of those with label y. If the token carried no information about y, p would follow the label prior p0 with
standard error sqrt(p0 (1 − p0) / n), so z = (p − p0) / se. A token whose z passes the Bonferroni-corrected
threshold for the number of (token, label) tests is a shortcut the model can learn. Augmentation that breaks
shortcuts moves those tokens back inside the band; the plot of p against n shows it (CORE paper, Figure 3).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

from .schema import TaskSchema
from .text import is_word, tokenize

__all__ = ["competency_test", "CompetencyResult", "claim_only_probe", "ProbeResult", "label_names_of"]


def label_names_of(labels: Sequence[Any], schema: TaskSchema | None) -> list[str]:
    """Labels as names: schema names for ids, case-folded to the schema's spelling for names."""
    if schema is None:
        return [str(x) for x in labels]
    return [schema.label_name(x) for x in labels]


@dataclass
class CompetencyResult:
    """Per-token statistics of a competency test; ``significant`` lists the shortcut tokens, strongest first."""

    n_examples: int
    priors: dict[str, float]
    alpha: float
    threshold: float
    tokens: list[dict[str, Any]] = field(repr=False)

    @property
    def significant(self) -> list[dict[str, Any]]:
        return sorted((t for t in self.tokens if t["significant"]), key=lambda t: -t["z"])

    def summary(self) -> dict[str, Any]:
        """How many tokens were tested and flagged, and how strong the flagged ones are."""
        sig = self.significant
        return {"examples": self.n_examples, "tokens_tested": len(self.tokens), "significant": len(sig),
                "mean_z_significant": sum(t["z"] for t in sig) / len(sig) if sig else 0.0,
                "max_z": max((t["z"] for t in self.tokens), default=0.0), "threshold_z": self.threshold,
                "by_label": dict(Counter(t["label"] for t in sig)),
                "top": [f"{t['token']} ({t['label']}, n={t['n']}, p={t['p']:.2f}, z={t['z']:.1f})" for t in sig[:10]]}

    def plot(self, path: str | Path, *, label: str | None = None, title: str | None = None) -> Path:
        """Scatter p(label | token) against n (log scale) with the significance band; writes a PNG.

        ``label`` picks the label on the y axis (default: the first label in the priors).
        """
        from .deps import require

        matplotlib = require("matplotlib", "The competency plot")
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        label = label or next(iter(self.priors))
        if label not in self.priors:
            raise ValueError(f"plot: unknown label {label!r}; the labels are {list(self.priors)}.")
        p0 = self.priors[label]
        rows = [t for t in self.tokens if t["label_p"].get(label) is not None]
        fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
        ns = [t["n"] for t in rows]
        ps = [t["label_p"][label] for t in rows]
        flagged = [t["significant"] for t in rows]
        ax.scatter([n for n, f in zip(ns, flagged) if not f], [p for p, f in zip(ps, flagged) if not f], s=6,
                   alpha=0.5, color="tab:blue", label="not significant")
        ax.scatter([n for n, f in zip(ns, flagged) if f], [p for p, f in zip(ps, flagged) if f], s=10,
                   color="tab:red", label="significant")
        if ns:
            grid = sorted(set(ns) | {min(ns), max(ns)})
            se = [self.threshold * math.sqrt(p0 * (1 - p0) / n) for n in grid]
            ax.plot(grid, [min(1, p0 + s) for s in se], color="black", lw=1)
            ax.plot(grid, [max(0, p0 - s) for s in se], color="black", lw=1)
        ax.axhline(p0, color="grey", lw=0.8, ls="--")
        if ns:  # a log axis with no data fails inside matplotlib (tiny datasets test no token)
            ax.set_xscale("log")
        ax.set_xlabel("n (examples containing the token)")
        ax.set_ylabel(f"p({label} | token)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title or f"Competency test: {len(self.significant)} significant tokens")
        if ns:
            ax.legend(loc="lower right", fontsize=8)
        else:
            ax.text(0.5, 0.5, "no token was frequent enough to test", ha="center", transform=ax.transAxes)
        fig.tight_layout()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path)
        plt.close(fig)
        return path


def _texts_and_labels(data: Any, columns: Sequence[str] | None, label_column: str | None, schema: TaskSchema | None
                      ) -> tuple[list[str], list[str]]:
    if isinstance(data, tuple) and len(data) == 2:
        texts, labels = list(data[0]), list(data[1])
        if len(texts) != len(labels):
            raise ValueError(f"Got {len(texts)} texts but {len(labels)} labels.")
        return [t if isinstance(t, str) else " ".join(t) for t in texts], label_names_of(labels, schema)
    if schema is None and (columns is None or label_column is None):
        raise ValueError("Pass a TaskSchema, or both columns= and label_column=.")
    columns = list(columns or schema.edit_columns)
    label_column = label_column or schema.label_column
    names = getattr(data, "column_names", None) or list(data[0].keys())
    for c in [*columns, label_column]:
        if c not in names:
            raise ValueError(f"Column {c!r} is not in the dataset; it has {names}.")
    texts = []
    for i, row in enumerate(zip(*(data[c] for c in columns))):
        parts = []
        for c, v in zip(columns, row):
            if isinstance(v, str):
                parts.append(v)
            elif isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
                parts.extend(v)
            else:
                raise ValueError(f"Column {c!r} at row {i}: got {type(v).__name__}; expected a string or a list "
                                 f"of strings.")
        texts.append(" ".join(parts))
    return texts, label_names_of(list(data[label_column]), schema)


def competency_test(data: Any, schema: TaskSchema | None = None, *, columns: Sequence[str] | None = None,
                    label_column: str | None = None, alpha: float = 0.01, min_count: int = 20,
                    lowercase: bool = True) -> CompetencyResult:
    """Run the competency test on a dataset (``schema`` or ``columns``/``label_column``) or on ``(texts, labels)``.

    Tokens are words (punctuation left out), counted once per example; tokens in fewer than ``min_count``
    examples are not tested (too few to reach significance after correction). ``alpha`` is the family-wise error
    rate, Bonferroni-corrected over every (token, label) test.

    Examples:
        >>> texts = ["the film was not good"] * 30 + ["the film was good"] * 30
        >>> result = competency_test((texts, ["neg"] * 30 + ["pos"] * 30))
        >>> [t["token"] for t in result.significant]
        ['not']
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}.")
    texts, labels = _texts_and_labels(data, columns, label_column, schema)
    if not texts:
        raise ValueError("competency_test: the dataset is empty.")
    prior_counts = Counter(labels)
    order = list(schema.label_names) if schema is not None else sorted(prior_counts)
    priors = {lab: prior_counts.get(lab, 0) / len(labels) for lab in order}
    per_token: dict[str, Counter] = {}
    for text, lab in zip(texts, labels):
        seen = {(t.key if lowercase else t.text) for t in tokenize(text) if is_word(t)}
        for tok in seen:
            per_token.setdefault(tok, Counter())[lab] += 1
    tested = {tok: c for tok, c in per_token.items() if sum(c.values()) >= min_count}
    live = [lab for lab in order if 0 < priors[lab] < 1]
    n_tests = max(len(tested) * max(len(live) if len(live) > 2 else 1, 1), 1)
    threshold = NormalDist().inv_cdf(1 - alpha / n_tests)  # one-sided: "token favours label"
    rows = []
    for tok, c in tested.items():
        n = sum(c.values())
        label_p = {lab: c.get(lab, 0) / n for lab in order}
        best_label, best_z = None, -math.inf
        for lab in live:
            p0 = priors[lab]
            z = (label_p[lab] - p0) / math.sqrt(p0 * (1 - p0) / n)
            if z > best_z:
                best_label, best_z = lab, z
        if best_label is None:  # one class only: nothing can be tested
            continue
        rows.append({"token": tok, "n": n, "label": best_label, "p": label_p[best_label], "z": best_z,
                     "label_p": label_p, "significant": best_z > threshold})
    rows.sort(key=lambda r: -r["z"])
    return CompetencyResult(len(texts), priors, alpha, threshold, rows)


@dataclass
class ProbeResult:
    """Accuracy of a bag-of-words classifier that sees only the edited field, against the majority baseline."""

    accuracy: float
    majority: float
    folds: int
    n: int

    @property
    def gain(self) -> float:
        """Accuracy above the majority baseline: how much label signal the field carries alone."""
        return self.accuracy - self.majority

    def as_dict(self) -> dict[str, float]:
        return {"accuracy": self.accuracy, "majority": self.majority, "gain": self.gain, "folds": self.folds,
                "n": self.n}


def claim_only_probe(data: Any, schema: TaskSchema | None = None, *, columns: Sequence[str] | None = None,
                     label_column: str | None = None, groups: Sequence[Any] | None = None, folds: int = 5,
                     seed: int = 0) -> ProbeResult:
    """Claim-only (hypothesis-only) bias probe: cross-validated accuracy of a logistic regression on word n-grams.

    Uses the schema's edit columns (the claim, the hypothesis) unless ``columns`` is given. ``groups`` keeps rows
    that share a group in one fold; on augmented data pass ``cf_source_id`` (the default when that column exists)
    so a counterfactual is never scored against a model that saw its original.

    Examples:
        >>> texts = ["the film was not good"] * 20 + ["the film was good"] * 20
        >>> claim_only_probe((texts, ["neg"] * 20 + ["pos"] * 20)).accuracy
        1.0
    """
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold, StratifiedKFold

    texts, labels = _texts_and_labels(data, columns, label_column, schema)
    if groups is None and hasattr(data, "column_names") and "cf_source_id" in data.column_names:
        groups = list(data["cf_source_id"])
    counts = Counter(labels)
    if len(counts) < 2:
        raise ValueError(f"claim_only_probe needs at least two labels; got only {list(counts)}.")
    folds = min(folds, min(counts.values()) if groups is None else len(set(groups)))
    if folds < 2:
        raise ValueError("claim_only_probe: too few examples per label (or groups) for 2-fold cross-validation.")
    splitter = (GroupKFold(n_splits=folds).split(texts, labels, groups) if groups is not None else
                StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(texts, labels))
    correct = 0
    for train_idx, test_idx in splitter:
        vec = CountVectorizer(ngram_range=(1, 2), min_df=1, lowercase=True, token_pattern=r"(?u)\b\w+\b")
        x_train = vec.fit_transform([texts[i] for i in train_idx])
        clf = LogisticRegression(max_iter=1000, C=1.0, random_state=seed)
        clf.fit(x_train, [labels[i] for i in train_idx])
        pred = clf.predict(vec.transform([texts[i] for i in test_idx]))
        correct += sum(p == labels[i] for p, i in zip(pred, test_idx))
    return ProbeResult(correct / len(texts), counts.most_common(1)[0][1] / len(texts), folds, len(texts))
