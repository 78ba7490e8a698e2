"""The shared filter stack: each filter on its own, the order, the counts, the card and the fingerprint."""

from __future__ import annotations

import json

import pytest

from cfaug_hf.sharing.folders import ComponentLoadError
import torch
from datasets import Dataset

from cfaug_hf import AugmentationStats, Augmenter, CrossAugAugmenter, LabelChecker, TaskSchema
from cfaug_hf.filters import (EntityFidelityFilter, FluencyFilter, LabelFlipFilter, MinimalityFilter, Pair,
                              SemanticFidelityFilter, TopK)
from cfaug_hf.metrics.intrinsic import TextEmbedder
from cfaug_hf.testing import NegateAugmenter, tiny_causal_lm, tiny_classifier, tiny_encoder

SENT = TaskSchema.sentiment()


def reviews():
    return Dataset.from_dict({"text": ["the film was good", "it was a long and very slow film", "a film"],
                              "label": ["positive", "negative", "positive"]})


def pair(before, after, group=0, label="negative"):
    return Pair({"text": before}, {"text": after}, label, "positive", ("text",), ("text",), group)


def test_minimality_counts_drops_and_records_scores():
    aug = NegateAugmenter(SENT, filters=[MinimalityFilter(max_distance=0.15)])
    out = aug.augment(reviews())
    assert aug.stats.produced == {"negated": 1} and aug.stats.by_prefix("filtered") == {"minimality": 1}
    assert AugmentationStats.from_dataset(out).to_dict() == aug.stats.to_dict()
    kept = [r for r in out if r["cf_is_counterfactual"]]
    assert json.loads(kept[0]["cf_edit"])["filter_scores"]["minimality"] == pytest.approx(1 - 1 / 9, abs=1e-3)
    first = [r for r in out if r["text"] == "the film was good"][0]
    assert "skipped:all_filtered" in first["cf_outcome"] and "filtered:minimality" in first["cf_outcome"]


def test_filters_run_in_order_on_what_is_left():
    calls = []

    class Spy(MinimalityFilter):
        name = "spy"

        def scores(self, pairs):
            calls.append(len(pairs))
            return super().scores(pairs)

    aug = NegateAugmenter(SENT, filters=[MinimalityFilter(max_distance=0.15), Spy()])
    aug.augment(reviews())
    assert calls == [1]  # the second filter only saw the survivor of the first


def test_label_flip_filter_is_crossaugs_checker():
    model, tok = tiny_classifier(("SUPPORTS", "REFUTES"))
    with torch.no_grad():  # always REFUTES
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([-5.0, 5.0]))
    checker = LabelChecker(model, tok)
    aug = CrossAugAugmenter(lambda cs: [c.replace("Paris", "Lyon") for c in cs], checker=checker)
    assert isinstance(aug.filters[0], LabelFlipFilter)
    ds = Dataset.from_dict({"claim": ["Paris is big."], "evidence": ["Paris is big."], "label": ["SUPPORTS"]})
    aug.augment(ds)
    assert aug.stats.produced == {"c'+e": 1, "c+e'": 1} and aug.stats.by_prefix("filtered") == {"label_flip": 1}
    assert aug.get_config_dict()["filters"] == [{"filter": "label_flip", "threshold": None}]


def test_semantic_fluency_and_entity_filters_score_sensibly():
    pairs = [pair("the cat sat on the mat", "the cat sat on the mat"), pair("the cat sat on the mat", "war")]
    sem = SemanticFidelityFilter(TextEmbedder(tiny_encoder()), min_similarity=0.9)
    assert sem.keep(pairs)[0] == [True, False]
    flu = FluencyFilter(tiny_causal_lm(), max_ratio=1000.0)
    keep, scores = flu.keep(pairs)
    assert scores[0] == pytest.approx(1.0) and keep[0]
    ents = EntityFidelityFilter(lambda texts: [[w for w in t.split() if w in ("paris", "london")] for t in texts],
                                min_share=1.0)
    keep, scores = ents.keep([pair("paris and london", "paris and rome"), pair("a cat", "a dog")])
    assert scores == [0.5, 1.0] and keep == [False, True]


def test_top_k_keeps_the_best_per_source_row():
    pairs = [pair("a b c d", "a b c x", 0), pair("a b c d", "x y c d", 0), pair("a b", "a c", 1)]
    keep, _ = TopK([MinimalityFilter()], k=1).keep(pairs)
    assert keep == [True, False, True]
    with pytest.raises(ValueError, match="k must be >= 1"):
        TopK([MinimalityFilter()], k=0)


def test_filters_change_the_fingerprint_and_are_restored_on_load(tmp_path):
    from cfaug_hf import LabelChecker
    from cfaug_hf.filters import TopK
    from cfaug_hf.testing import tiny_classifier

    checker = LabelChecker(*tiny_classifier(("negative", "positive")))
    stack = [MinimalityFilter(max_distance=0.1),
             TopK([MinimalityFilter(), LabelFlipFilter(checker, threshold=0.3)], k=1, weights=[1.0, 2.0])]
    plain, filtered = NegateAugmenter(SENT), NegateAugmenter(SENT, filters=stack)
    assert plain.fingerprint() != filtered.fingerprint()
    filtered.save_pretrained(tmp_path / "aug")
    data = json.loads((tmp_path / "aug" / "cfaug_augmenter.json").read_text())
    assert data["filters"][0] == {"filter": "minimality", "args": {"min_distance": 0.0, "max_distance": 0.1}}
    back = Augmenter.from_pretrained(tmp_path / "aug")  # the whole pipeline, checker weights included
    assert [type(f) for f in back.filters] == [MinimalityFilter, TopK]
    assert back.filters[1].filters[1].checker.fingerprint() == checker.fingerprint()
    assert back.fingerprint() == filtered.fingerprint()
    assert Augmenter.from_pretrained(tmp_path / "aug", filters=[]).filters == []


def test_a_filter_that_cannot_be_saved_is_asked_for_on_load(tmp_path):
    NegateAugmenter(SENT, filters=[EntityFidelityFilter(lambda texts: [[] for _ in texts])]).save_pretrained(
        tmp_path / "aug")
    with pytest.raises(ComponentLoadError, match="filter 'entity_fidelity', which could not be saved.*filters="):
        Augmenter.from_pretrained(tmp_path / "aug")
    assert Augmenter.from_pretrained(tmp_path / "aug", filters=[]).filters == []


def test_a_method_s_own_filters_are_not_saved_twice(tmp_path):
    from cfaug_hf import CrossAugAugmenter, LabelChecker
    from cfaug_hf.testing import tiny_classifier

    checker = LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES")))
    aug = CrossAugAugmenter(lambda claims: claims, checker=checker, filters=[MinimalityFilter()])
    assert len(aug.filters) == 2
    aug.save_pretrained(tmp_path / "aug", references_only=True)
    assert [f["filter"] for f in json.loads((tmp_path / "aug" / "cfaug_augmenter.json").read_text())["filters"]] \
        == ["minimality"]


def test_bad_filters():
    with pytest.raises(TypeError, match="filters must be cfaug_hf.filters.Filter objects, got str"):
        NegateAugmenter(SENT, filters=["minimality"])
    with pytest.raises(ValueError, match="min_distance <= max_distance"):
        MinimalityFilter(min_distance=0.5, max_distance=0.2)
    with pytest.raises(ValueError, match=r"threshold must be a probability in \[0, 1\]"):
        LabelFlipFilter(object(), threshold=2)
    with pytest.raises(TypeError, match="entities must be a callable"):
        EntityFidelityFilter("spacy")


def test_shortcut_balance_stops_a_generator_from_planting_a_shortcut():
    from cfaug_hf.diagnostics import competency_test
    from cfaug_hf.filters import ShortcutBalanceFilter
    from cfaug_hf.testing import NegateAugmenter

    # Only positive reviews have "was", so negation adds "not" to negative counterfactuals only.
    texts = [f"review {i} says the film was good" for i in range(80)] + \
        [f"review {i} says the film seems bad" for i in range(80)]
    data = Dataset.from_dict({"text": texts, "label": ["positive"] * 80 + ["negative"] * 80})
    schema = TaskSchema.sentiment()
    assert "not" not in [t["token"] for t in competency_test(data, schema).significant]

    plain = NegateAugmenter(schema).augment(data)
    flagged = {t["token"]: t["label"] for t in competency_test(plain, schema).significant}
    assert flagged.get("not") == "negative"  # the generator's habit became a shortcut

    balance = ShortcutBalanceFilter(data, schema)
    aug = NegateAugmenter(schema, filters=[balance])
    out = aug.augment(data)
    assert "not" not in [t["token"] for t in competency_test(out, schema).significant]
    kept, dropped = aug.stats.produced["negated"], aug.stats.by_prefix("filtered")["shortcut_balance"]
    assert kept + dropped == 80 and 0 < kept < 80 and balance.blocked["not"] == dropped
    # the word behind each drop is an event: in the stats, the report's reasons table and the dataset card
    assert aug.stats.by_prefix("shortcut_balance") == {"not": dropped}
    from cfaug_hf.augmenter import AugmentationStats
    assert AugmentationStats.from_dataset(out).by_prefix("shortcut_balance") == {"not": dropped}
    from cfaug_hf.report import augmentation_report
    report = augmentation_report(data, out, schema, fluency_model=None, embedder=None, probe=False)
    assert f"| shortcut_balance:not | {dropped} |" in report.to_markdown()
    # recorded for cards and the cache
    assert aug.get_config_dict()["filters"][0]["filter"] == "shortcut_balance"
    assert ShortcutBalanceFilter(data, schema).fingerprint() == balance.fingerprint()
