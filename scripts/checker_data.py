"""The held-out sets and the acceptance rule the flip checkers are built and judged with (used by
``scripts/build_checkers.py`` and ``benchmarks/flip_checker.py``)."""

from __future__ import annotations

from typing import Any

from scripts.shared_data import cad_nli, cad_sentiment, fever_symmetric, vitaminc_rows

__all__ = ["held_out", "texts", "accepted", "every_layer"]


def every_layer() -> Any:
    """A peft config that trains every transformer layer, the pooler and the head of a BERT-style classifier
    (saved whole, in the adapter) and gives the word embeddings a rank-4 adapter: end-to-end fine-tuning that
    still saves as an adapter naming its base (about 21 MB in half precision for MiniLM, against 1.6 MB for the
    rank-16 adapter, and it learns in one epoch what that one does not learn in two)."""
    from peft import LoraConfig, TaskType

    return LoraConfig(r=4, lora_alpha=8, target_modules=["word_embeddings"], task_type=TaskType.SEQ_CLS,
                      modules_to_save=["encoder", "pooler", "classifier"])


def _rows(ds: Any) -> list[dict[str, Any]]:
    return [dict(r) for r in ds]


def held_out(task: str) -> dict[str, tuple[list[dict[str, Any]], str]]:
    """name -> (rows with first/second/label, what they are) for one task's held-out sets."""
    if task == "fact-verification":
        vit = _rows(vitaminc_rows("heldout"))
        by_case: dict[str, set[str]] = {}
        for r in vit:
            by_case.setdefault(r["case_id"], set()).add(r["label"])
        flips = [r for r in vit if r["label"] == "REFUTES" and "SUPPORTS" in by_case[r["case_id"]]]
        fsym = _rows(fever_symmetric())
        edited = [r for r in fsym if str(r["id"]).endswith(("0000002", "0000003", "0000004"))]
        return {
            "originals": ([r for r in vit if r["label"] == "SUPPORTS"], "VitaminC held-out cases, SUPPORTS rows"),
            "human flips": (flips, "VitaminC held-out cases: REFUTES edits of a supported claim"),
            "FEVER-Symmetric edits": (edited, "FEVER-Symmetric v0.2 dev, the 3 human-edited rows of each quad"),
        }
    if task == "natural-language-inference":
        return {"originals": (_rows(cad_nli("original", "dev")), "CAD-SNLI dev originals"),
                "human flips": (_rows(cad_nli("revised_combined", "dev")),
                                "CAD-SNLI dev revised premises and hypotheses")}
    from scripts.shared_data import cad_sentiment_edit_rows

    from cfaug_hf.training import partial_flips

    return {"originals": (_rows(cad_sentiment("orig", "dev")), "CAD IMDb dev originals"),
            "human flips": (_rows(cad_sentiment("new", "dev")), "CAD IMDb dev human counterfactuals"),
            "partial flips": (_rows(partial_flips(cad_sentiment_edit_rows("dev"), seed=0)),
                              "CAD IMDb dev pairs with some of the annotator's sentence changes made (label: the side "
                              "each came from; a checker must not accept it as the other label)")}


def texts(task: str, rows: list[dict[str, Any]]) -> tuple[list[str], list[Any] | None]:
    if task == "fact-verification":
        return [r["claim"] for r in rows], [r["evidence"] for r in rows]
    if task == "natural-language-inference":
        return [r["premise"] for r in rows], [r["hypothesis"] for r in rows]
    return [r["text"] for r in rows], None


def accepted(checker: Any, probs: Any, labels: list[str], threshold: float | str | None) -> list[bool]:
    """The label-flip filter's rule (cfaug_hf.filters.LabelFlipFilter); ``"shipped"`` is the checker's own
    calibrated ``accept_threshold``."""
    if threshold == "shipped":
        threshold = checker.config.accept_threshold
    out = []
    for row, label in zip(probs, labels):
        t = checker.label_id(label)
        out.append(bool(row.argmax() == t) if threshold is None else bool(row[t] >= threshold))
    return out
