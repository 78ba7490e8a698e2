"""partial_flips: mixed texts from human counterfactual pairs, the negatives of the whole-input flip checker."""

from __future__ import annotations

import pytest
from datasets import Dataset
from hypothesis import given, settings
from hypothesis import strategies as st

from cfaug_hf.training import partial_flips
from cfaug_hf.training.partial import apply_blocks, changed_blocks

FLIP = {"positive": "negative", "negative": "positive"}


def pairs(texts, cfs, labels):
    return Dataset.from_dict({"text": texts, "counterfactual": cfs, "label": labels,
                              "target": [FLIP[x] for x in labels]})


def test_each_mixed_text_comes_with_either_label():
    rows = partial_flips(pairs(["Good cast. Fine plot. Loved it. Great end."],
                               ["Bad cast. Fine plot. Hated it. Awful end."], ["positive"]), per_pair=3, seed=1)
    assert len(rows) % 2 == 0 and len(rows) >= 2
    for a, b in zip(rows.select(range(0, len(rows), 2)), rows.select(range(1, len(rows), 2))):
        assert {a["label"], b["label"]} == {"positive", "negative"}
        assert a["share_applied"] + b["share_applied"] == pytest.approx(1.0)
        assert a["text"] != b["text"]


def test_pairs_with_fewer_than_two_changes_give_nothing():
    rows = partial_flips(pairs(["Good cast. Fine plot.", "Same."], ["Bad cast. Fine plot.", "Same."],
                               ["positive", "negative"]))
    assert len(rows) == 0


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match=r"\['target'\]"):
        partial_flips(Dataset.from_dict({"text": ["a"], "counterfactual": ["b"], "label": ["positive"]}))
    with pytest.raises(ValueError, match="per_pair"):
        partial_flips(pairs(["a"], ["b"], ["positive"]), per_pair=0)


SENTENCES = ["Good cast.", "Bad cast.", "Fine plot.", "Dull plot.", "Loved it.", "Hated it.", "The end!",
             "An actor sings.", "Great score."]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=8),
       st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=8), st.integers(0, 5))
def test_mixed_texts_are_neither_side_and_all_changes_give_the_counterfactual(old, new, seed):
    text, cf = " ".join(old), " ".join(new)
    sentences, blocks = changed_blocks(text, cf)
    assert apply_blocks(sentences, blocks) == cf  # every change made: the counterfactual
    assert apply_blocks(sentences, []) == text
    rows = partial_flips(pairs([text], [cf], ["positive"]), seed=seed)
    for r in rows:
        assert 0 < r["share_applied"] < 1
        assert r["text"] not in (text, cf) or text == cf


def test_sentence_verdicts_label_each_changed_sentence_by_its_side_and_shared_ones_both_ways():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from cfaug_hf.training import sentence_verdicts

    words = st.sampled_from(["Good cast.", "Bad cast.", "Set in Ohio.", "Loved it.", "Hated it.", "Long film."])

    @settings(max_examples=40, deadline=None)
    @given(st.lists(words, min_size=1, max_size=5), st.lists(words, min_size=1, max_size=5))
    def prop(old, new):
        pairs = Dataset.from_dict({"text": [" ".join(old)], "counterfactual": [" ".join(new)],
                                   "label": ["positive"], "target": ["negative"]})
        rows = sentence_verdicts(pairs, unchanged_per_pair=10)
        for text, label, kind in zip(rows["text"], rows["label"], rows["kind"]):
            assert (kind, label) in {("old", "positive"), ("new", "negative"), ("unchanged", "positive"),
                                     ("unchanged", "negative")}
            assert text in (old if kind != "new" else new)
        shared = [t for t, k in zip(rows["text"], rows["kind"]) if k == "unchanged"]
        assert all(shared.count(t) % 2 == 0 for t in shared)  # once with either label

    prop()


def test_sentence_verdicts_names_missing_columns():
    from cfaug_hf.training import sentence_verdicts

    with pytest.raises(ValueError, match=r"needs the columns \['counterfactual'"):
        sentence_verdicts(Dataset.from_dict({"text": ["a"], "label": ["positive"], "target": ["negative"]}))


def test_sentence_verdicts_with_no_verdict_give_each_shared_sentence_that_label_once():
    from cfaug_hf.training import sentence_verdicts

    pairs = Dataset.from_dict({"text": ["Good cast. Set in Ohio. Loved it.", "Dull plot. Set in Ohio. It runs long."],
                               "counterfactual": ["Bad cast. Set in Ohio. Hated it.",
                                                  "Gripping plot. Set in Ohio. It runs long."],
                               "label": ["positive", "negative"], "target": ["negative", "positive"]})
    rows = sentence_verdicts(pairs, unchanged_per_pair=10, no_verdict="none")
    shared = sorted(t for t, k, lab in zip(rows["text"], rows["kind"], rows["label"]) if k == "unchanged")
    assert shared == ["It runs long.", "Set in Ohio."]  # "Set in Ohio." is shared by both pairs: once
    assert {lab for k, lab in zip(rows["kind"], rows["label"]) if k == "unchanged"} == {"none"}
    assert sorted(lab for k, lab in zip(rows["kind"], rows["label"]) if k != "unchanged") == [
        "negative", "negative", "negative", "positive", "positive", "positive"]
    for bad in ("", "  ", 3):
        with pytest.raises(ValueError, match="no_verdict must be a label name"):
            sentence_verdicts(pairs, no_verdict=bad)
