"""The claim-only model of the FEVER tables: a bag of words over the claim alone, the shortcut Schuster et al.
(2019) found (a claim with "not" or "only" is mostly REFUTES whatever the evidence). Two uses: the re-weighting
row's weights (`claim_only_weights`), and the split of FEVER-Symmetric into the rows where that shortcut gives the
right label and those where it gives the wrong one (`split_by_claim_only`); a model that leans on the claim alone
is much better on the first half than on the second, which is the bias the FEVER validity check asks to see."""

from __future__ import annotations

from typing import Any

from cfaug_hf import TaskSchema

from .classifiers import bow_pipeline, label_ids

#: The two halves of FEVER-Symmetric added to the ``fever`` configuration's test sets.
RIGHT, WRONG = "fever-symmetric: claim-only right", "fever-symmetric: claim-only wrong"


def claims(data: Any, schema: TaskSchema) -> list[str]:
    """The claim column's text (the schema's first bias column), lists joined."""
    return [v if isinstance(v, str) else " ".join(v) for v in data[schema.bias_columns[0]]]


def claim_only_weights(train: Any, schema: TaskSchema, folds: int = 5) -> list[float]:
    """1 / p(label | claim) from a bag-of-words claim-only model, out-of-fold so no example scores itself;
    normalised to mean 1 (Schuster et al. 2019's re-weighting baseline)."""
    import numpy as np
    from sklearn.model_selection import cross_val_predict

    labels = np.array(label_ids(train, schema))
    probs = cross_val_predict(bow_pipeline(), claims(train, schema), labels, cv=folds, method="predict_proba")
    weights = 1.0 / np.clip(probs[np.arange(len(labels)), labels], 0.05, 1.0)
    return list(weights / weights.mean())


def split_by_claim_only(train: Any, test: Any, schema: TaskSchema) -> tuple[Any, Any]:
    """``test``'s rows where a claim-only model fitted on ``train`` predicts the gold label, and those where it
    does not. On FEVER-Symmetric each claim comes with evidence for either label, so the claim alone is right on
    about half of the rows; the accuracy gap between the halves is how much a model follows the claim alone."""
    import numpy as np

    model = bow_pipeline().fit(claims(train, schema), label_ids(train, schema))
    right = model.predict(claims(test, schema)) == np.array(label_ids(test, schema))
    return test.select(np.flatnonzero(right)), test.select(np.flatnonzero(~right))
