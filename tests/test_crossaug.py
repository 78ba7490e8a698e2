import json

import pytest
from datasets import ClassLabel, Dataset, Features, List, Value

from cfaug_hf import CrossAugAugmenter, CrossAugConfig, Generator, LabelChecker, SchemaError, TaskSchema
from cfaug_hf.testing import tiny_classifier, tiny_seq2seq


def by_kind(out):
    return {(r["cf_source_id"], r["cf_kind"]): r for r in out}


def test_paper_pipeline(fever_rows, rule_rewriter):
    ds = Dataset.from_dict(fever_rows)
    aug = CrossAugAugmenter(rule_rewriter, TaskSchema.fact_verification(id_column="id"))
    out = ds.map(aug, batched=True)
    rows = by_kind(out)
    # r0: a 2-token -> 3-token replacement found once in the evidence: all three counterfactuals
    assert rows[("r0", "c'+e")]["claim"] == "Little Miss Sunshine was filmed less than 10 days."
    assert rows[("r0", "c'+e")]["label"] == "REFUTES"
    assert rows[("r0", "c+e'")]["evidence"] == "Filming began in June and took place less than 10 days in Arizona."
    assert rows[("r0", "c+e'")]["label"] == "REFUTES"
    assert rows[("r0", "c'+e'")]["label"] == "SUPPORTS"
    assert rows[("r0", "c'+e'")]["claim"] == rows[("r0", "c'+e")]["claim"]
    edit = json.loads(rows[("r0", "c'+e'")]["cf_edit"])
    assert edit["claim"] == {"old": "over 30", "new": "less than 10", "type": "replacement"}
    assert edit["evidence"]["old"] == "over 30"
    # r1: an insertion ("never") gives c' only
    assert ("r1", "c'+e") in rows and ("r1", "c+e'") not in rows
    # r2: REFUTES rows pass through untouched
    assert ("r2", "original") in rows and ("r2", "c'+e") not in rows
    # r3: "Paris" -> "Lyon" found once
    assert rows[("r3", "c+e'")]["evidence"] == "Lyon is the capital and most populous city of France."
    # r4: the generator returned the claim unchanged
    assert ("r4", "c'+e") not in rows
    st = aug.stats
    assert st.rows_in == 5 and st.rows_out == len(out)
    assert st.produced == {"c'+e": 3, "c+e'": 2, "c'+e'": 2}
    assert st.skipped == {"label_not_augmented": 1, "same_claim": 1}
    assert st.by_prefix("no_evidence_edit") == {"insertion": 1}


def test_span_found_twice_or_missing(rule_rewriter):
    ds = Dataset.from_dict({"claim": ["Paris is nice.", "Paris is nice."],
                            "evidence": ["Paris, Paris and Paris.", "Rome is nice."], "label": ["SUPPORTS"] * 2})
    aug = CrossAugAugmenter(rule_rewriter)
    ds.map(aug, batched=True)
    assert aug.stats.by_prefix("no_evidence_edit") == {"span_not_found": 1, "span_not_unique": 1}


def test_list_evidence_and_classlabel_ids(rule_rewriter):
    feats = Features({"claim": Value("string"), "evidence": List(Value("string")),
                      "label": ClassLabel(names=["SUPPORTS", "REFUTES"])})
    ds = Dataset.from_dict({"claim": ["Magic Johnson played for the Lakers over 30 days."],
                            "evidence": [["Magic Johnson is a player.", "He stayed over 30 days."]], "label": [0]},
                           features=feats)
    out = CrossAugAugmenter(rule_rewriter).augment(ds)
    rows = {r["cf_kind"]: r for r in out}
    assert rows["c+e'"]["evidence"] == ["Magic Johnson is a player.", "He stayed less than 10 days."]
    assert rows["c+e'"]["label"] == 1 and rows["c'+e'"]["label"] == 0
    assert isinstance(out.features["label"], ClassLabel)


def test_span_limit_and_kinds_ablation(fever_rows, rule_rewriter):
    ds = Dataset.from_dict(fever_rows)
    tight = CrossAugAugmenter(rule_rewriter, max_span_tokens=2)
    ds.map(tight, batched=True)
    assert tight.stats.by_prefix("no_evidence_edit") == {"insertion": 1, "span_too_long": 1}
    claim_only = CrossAugAugmenter(rule_rewriter, kinds=("c'+e",))
    out = ds.map(claim_only, batched=True)
    assert set(out["cf_kind"]) == {"original", "c'+e"}
    with pytest.raises(ValueError, match="kinds must be"):
        CrossAugConfig(kinds=("c'e",))
    with pytest.raises(ValueError, match="min_span_tokens"):
        CrossAugConfig(max_span_tokens=0)


def test_nei_rows_dropped_by_default_and_kept_on_request(rule_rewriter):
    schema = TaskSchema.fact_verification(nei=True)
    ds = Dataset.from_dict({"claim": ["Paris is nice.", "Cats fly."], "evidence": ["Paris is nice.", "Unrelated."],
                            "label": ["SUPPORTS", "NOT ENOUGH INFO"]})
    aug = CrossAugAugmenter(rule_rewriter, schema)
    out = ds.map(aug, batched=True)
    assert "NOT ENOUGH INFO" not in out["label"] and aug.stats.skipped == {"nei_dropped": 1}
    kept = ds.map(CrossAugAugmenter(rule_rewriter, schema, keep_nei=True), batched=True)
    assert "NOT ENOUGH INFO" in kept["label"]


def test_candidates_first_that_differs():
    ds = Dataset.from_dict({"claim": ["Paris is nice."], "evidence": ["Paris is nice."], "label": ["SUPPORTS"]})
    out = ds.map(CrossAugAugmenter(lambda cs: [[c, "paris is nice .", "Lyon is nice."] for c in cs]), batched=True)
    assert list(out["claim"])[1] == "Lyon is nice."


def test_checker_post_filter(rule_rewriter, fever_rows):
    ds = Dataset.from_dict(fever_rows)
    model, tok = tiny_classifier(("SUPPORTS", "REFUTES"))
    import torch
    with torch.no_grad():  # a checker that always says REFUTES
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([-5.0, 5.0]))
    aug = CrossAugAugmenter(rule_rewriter, checker=LabelChecker(model, tok))
    out = ds.map(aug, batched=True)
    assert aug.stats.by_prefix("filtered") == {"label_flip": 2}
    assert aug.stats.produced == {"c'+e": 3, "c+e'": 2}
    kept = [r for r in out if r["cf_is_counterfactual"]]
    assert all(json.loads(r["cf_edit"])["filter_scores"]["label_flip"] > 0.99 for r in kept)
    strict = CrossAugAugmenter(rule_rewriter, checker=LabelChecker(model, tok), checker_threshold=0.9999999)
    ds.map(strict, batched=True)
    assert strict.stats.counterfactuals == 0 and strict.stats.skipped["all_filtered"] == 3


def test_checker_with_wrong_labels_fails_early(rule_rewriter):
    with pytest.raises(ValueError, match=r"knows the labels \['positive', 'negative'\], not \['SUPPORTS', 'REFUTES'\]"):
        CrossAugAugmenter(rule_rewriter, checker=LabelChecker(*tiny_classifier(("positive", "negative"))))


def test_schema_must_be_a_pair(rule_rewriter):
    with pytest.raises(SchemaError, match=r"needs a \(claim, evidence\) schema"):
        CrossAugAugmenter(rule_rewriter, TaskSchema.sentiment())
    with pytest.raises(SchemaError, match=r"supports_label='SUPPORTS' is not one of the schema's labels"):
        CrossAugAugmenter(rule_rewriter, TaskSchema.nli())
    CrossAugAugmenter(rule_rewriter, TaskSchema.nli(), supports_label="entailment", refutes_label="contradiction")
    with pytest.raises(TypeError):
        CrossAugAugmenter(3.5)


def test_bad_generator_output_length():
    ds = Dataset.from_dict({"claim": ["a b"], "evidence": ["a b"], "label": ["SUPPORTS"]})
    with pytest.raises(TypeError, match="returned 0 outputs for 1 claims"):
        ds.map(CrossAugAugmenter(lambda cs: []), batched=True)


def test_with_a_real_generator_model_and_truncation(caplog):
    gen = Generator(*tiny_seq2seq(), num_beams=2, max_new_tokens=4, max_source_length=3)
    ds = Dataset.from_dict({"claim": ["the cat sat on the mat today", "a dog"], "evidence": ["the cat sat", "a dog"],
                            "label": ["SUPPORTS", "SUPPORTS"]})
    aug = CrossAugAugmenter(gen)
    with caplog.at_level("WARNING"):
        out = ds.map(aug, batched=True)
    assert aug.stats.events["truncated:generator_input"] == 1 and gen.stats["input_truncated"] == 1
    assert sum("truncated" in r.message for r in caplog.records) == 1
    assert aug.stats.rows_in == 2 and len(out) >= 2


def test_reject_deletions_takes_next_candidate():
    ds = Dataset.from_dict({"claim": ["He played for the Lakers in 1990.", "He never played."],
                            "evidence": ["He played for the Lakers in 1990.", "He never played."],
                            "label": ["SUPPORTS"] * 2})
    cands = {"He played for the Lakers in 1990.": ["He played for the Lakers.", "He played for the Celtics in 1990."],
             "He never played.": ["He played.", "He played!"]}
    paper = CrossAugAugmenter(lambda cs: [cands[c] for c in cs], reject_deletions=False)
    out = ds.map(paper, batched=True)
    assert list(out["claim"])[1] == "He played for the Lakers."  # the paper keeps any change
    strict = CrossAugAugmenter(lambda cs: [cands[c] for c in cs])  # the default
    out = ds.map(strict, batched=True)
    claims = list(out["claim"])
    assert "He played for the Celtics in 1990." in claims
    assert "He played." in claims  # deleting a negation flips the claim, so it is kept


def test_punctuation_only_change_is_same_claim():
    ds = Dataset.from_dict({"claim": ["Cats purr."], "evidence": ["Cats purr."], "label": ["SUPPORTS"]})
    aug = CrossAugAugmenter(lambda cs: ["Cats purr"])
    ds.map(aug, batched=True)
    assert aug.stats.skipped == {"same_claim": 1}


@pytest.mark.parametrize("rewrite,reason", [
    ("The listings were historical.", "same_meaning"),       # inflection and another form of the word
    ("The listings are historic.", "same_meaning"),          # tense of a copula
    ("A listings were historic.", "same_meaning"),           # article
    ("The listngs were historic.", "same_meaning"),          # a typo
    ("The listings historic.", "deletion_only"),             # a deletion...
    ("listings were", "deletion_only"),                      # ...or several, anywhere
    ("The listings were historic", "same_claim"),            # punctuation only
])
def test_rewrites_that_are_not_negations_give_no_refutes_row(rewrite, reason):
    ds = Dataset.from_dict({"claim": ["The listings were historic."], "evidence": ["The listings were historic."],
                            "label": ["SUPPORTS"]})
    aug = CrossAugAugmenter(lambda cs: [rewrite])
    out = aug.augment(ds)
    assert aug.stats.skipped == {reason: 1} and not any(out["cf_is_counterfactual"])


def test_abbreviation_is_not_a_negation():
    ds = Dataset.from_dict({"claim": ["He moved to the United Kingdom."], "evidence": ["He moved to the UK."],
                            "label": ["SUPPORTS"]})
    aug = CrossAugAugmenter(lambda cs: ["He moved to the UK."])
    aug.augment(ds)
    assert aug.stats.skipped == {"same_meaning": 1}
