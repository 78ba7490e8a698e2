"""LLM-prompted counterfactuals (sentiment, NLI, NER, RE), the CFGen baseline, entity helpers, constraint and
consistency filters, and the parsing of malformed LLM answers."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from datasets import ClassLabel, Dataset, Features, List, Value

from cfaug_hf import (CFGenAugmenter, EntityLexicon, LabelChecker, LLMCounterfactualAugmenter, SchemaError,
                      TaskSchema)
from cfaug_hf.text.entities import (MarkupError, iob2_problem, iob2_spans, mark_entities, relation_entities,
                                    strip_markup, substitute)
from cfaug_hf.filters import NERConstraintFilter, NLIConstraintFilter, Pair, REConstraintFilter, TagConsistencyFilter
from cfaug_hf.methods.llm import (balanced_target_probs, build_prompt, cot_consistent, parse_list,
                                  parse_replacements, parse_text, relation_text)
from cfaug_hf.testing import tiny_classifier

NER = TaskSchema.token_classification()
RE = TaskSchema.relation_extraction()


def ner_data(ids: bool = False) -> Dataset:
    tokens = [["Ada", "lives", "in", "New", "York", "."], ["Bob", "met", "Eve", "in", "Rome", "."],
              ["Nothing", "here", "."], ["Acme", "hired", "Ada", "."]]
    tags = [["B-PER", "O", "O", "B-LOC", "I-LOC", "O"], ["B-PER", "O", "B-PER", "O", "B-LOC", "O"],
            ["O", "O", "O"], ["B-ORG", "O", "B-PER", "O"]]
    if not ids:
        return Dataset.from_dict({"tokens": tokens, "ner_tags": tags})
    names = list(NER.label_names)
    feats = Features({"tokens": List(Value("string")), "ner_tags": List(ClassLabel(names=names))})
    return Dataset.from_dict({"tokens": tokens, "ner_tags": [[names.index(t) for t in row] for row in tags]},
                             features=feats)


# ------------------------------------------------------------------------------------------------------ entities
def test_iob2_spans_substitution_and_validation():
    tokens, tags = ["Ada", "lives", "in", "New", "York", "."], ["B-PER", "O", "O", "B-LOC", "I-LOC", "O"]
    assert [(e.start, e.end, e.type, e.text) for e in iob2_spans(tokens, tags)] == [(0, 1, "PER", "Ada"),
                                                                                    (3, 5, "LOC", "New York")]
    new_tokens, new_tags = substitute(tokens, tags, {0: "Mary Ann Evans", 1: ["Rome"]})
    assert new_tokens == ["Mary", "Ann", "Evans", "lives", "in", "Rome", "."]
    assert new_tags == ["B-PER", "I-PER", "I-PER", "O", "O", "B-LOC", "O"]
    assert iob2_problem(new_tags) is None
    assert "after 'O'" in iob2_problem(["O", "I-LOC"]) and "I-LOC" in iob2_problem(["B-PER", "I-LOC"])
    assert "expected 'O'" in iob2_problem(["PER"])
    with pytest.raises(IndexError, match="2 entities"):
        substitute(tokens, tags, {5: "x"})
    with pytest.raises(ValueError, match="empty"):
        substitute(tokens, tags, {0: " "})


def test_lexicon_from_dataset_with_class_label_ids():
    lex = EntityLexicon.from_dataset(ner_data(ids=True), NER)
    assert lex.to_dict()["PER"] == {"Ada": 2, "Bob": 1, "Eve": 1}
    assert lex.types_of("new york") == {"LOC"} and lex.types_of("Paris") == set()
    rng = random.Random(0)
    assert {lex.sample("PER", rng, exclude=["ada"]) for _ in range(30)} == {"Bob", "Eve"}
    assert lex.sample("MISC", rng) is None


def test_relation_markup_helpers():
    text = "The <e1>key</e1> was in a <e2>chest</e2>."
    assert relation_entities(text) == ("key", "chest", True)
    assert relation_entities("A <e2>box</e2> holds the <e1>key</e1>.") == ("key", "box", False)
    assert strip_markup(text) == "The key was in a chest."
    assert mark_entities("The key came out of a chest.", "key", "chest") == \
        "The <e1>key</e1> came out of a <e2>chest</e2>."
    assert mark_entities("The key came out.", "key", "chest") is None
    for bad in ("no markup", "<e1>a</e1> <e1>b</e1> <e2>c</e2>", "</e1>a<e1> <e2>c</e2>", "<e1> </e1> <e2>c</e2>"):
        with pytest.raises(MarkupError):
            relation_entities(bad)


# --------------------------------------------------------------------------------------------------- schema
def test_token_classification_schema_checks_tags():
    NER.validate_features(ner_data(ids=True).features)
    assert NER.batch_labels(ner_data().to_dict())[0] == "B-PER O O B-LOC I-LOC O"
    bad = {"tokens": [["a", "b"]], "ner_tags": [["O"]]}
    with pytest.raises(SchemaError, match=r"'ner_tags' at row 7: got 1 tags for 2 tokens"):
        NER.validate_batch(bad, [7])
    with pytest.raises(SchemaError, match="not valid IOB2: tag 1 is 'I-LOC' after 'B-PER'"):
        NER.validate_batch({"tokens": [["a", "b"]], "ner_tags": [["B-PER", "I-LOC"]]})
    with pytest.raises(SchemaError, match="unknown label 'B-XYZ'"):
        NER.validate_batch({"tokens": [["a"]], "ner_tags": [["B-XYZ"]]})
    with pytest.raises(SchemaError, match="list of tags per row"):
        NER.validate_features(Features({"tokens": List(Value("string")), "ner_tags": Value("string")}))
    assert NER.encode_label_like("B-PER O", [1, 0]) == [1, 0]
    assert NER.encode_label_like("B-PER O", ["O", "O"]) == ["B-PER", "O"]


# --------------------------------------------------------------------------------------------------- parsing
MALFORMED_TEXT = [  # (answer, expected text or None, reason)
    ('Revised text: "The food was awful."', "The food was awful.", None),
    ("'The food was awful.'\nText: next example", "The food was awful.", None),
    ("Sure! Here is the revised text: The food was awful.", "The food was awful.", None),
    ('Causal words: "great" | Replacements: "great" -> "awful" | Revised text: "The food was awful."',
     "The food was awful.", None),
    ("Causal words: great\nReplacements: great -> awful\nRevised text: The food was awful.", "The food was awful.",
     None),
    ('{"revised_sentence": "The food was awful."}', "The food was awful.", None),
    ('{"revised_sentence": "The food was aw', "The food was aw", None),
    ('"The food was awful', "The food was awful", None),
    ("", None, "llm_empty"),
    ("\n\n  \n", None, "llm_empty"),
    ("Text: The food was great.", None, "llm_unparseable"),
    ("Target sentiment: negative", None, "llm_unparseable"),
    ("...", None, "llm_unparseable"),
    (",", None, "llm_unparseable"),
    ('"', None, "llm_unparseable"),
    ("The target sentiment is negative, so the causal words change.", None, "llm_meta"),
    ("The food was great!", None, "llm_unchanged"),
    ("the FOOD was great", None, "llm_unchanged"),
    (None, None, "llm_empty"),
]


@pytest.mark.parametrize("answer,text,reason", MALFORMED_TEXT)
def test_parse_text_on_malformed_answers(answer, text, reason):
    assert parse_text(answer, "The food was great.") == (text, reason)


MALFORMED_LISTS = [
    ('["A.", "B."]', ["A.", "B."]),
    ("Revised hypotheses: ['A.', \"B.\"] and more prose", ["A.", "B."]),
    ('["A.", "B. with \\"quote\\""]', ["A.", 'B. with "quote"']),
    ('["A.", "B', ["A."]),
    ('[{"hypothesis": "A."}, {"hypothesis": "B."}]', ["A.", "B."]),
    ("1. A.\n2. B.", ["A.", "B."]),
    ("- A.\n- B.", ["A.", "B."]),
    ("no list at all", []),
    ("[]", []),
    ('["", " , ", "A."]', ["A."]),
    ('[",", ";"]', []),
    (None, []),
]


@pytest.mark.parametrize("answer,items", MALFORMED_LISTS)
def test_parse_list_on_malformed_answers(answer, items):
    assert parse_list(answer) == items


def test_parse_replacements_variants():
    spans = ["Ada", "Rome"]
    assert parse_replacements("[['Bob'], ['Oslo', 'Lima']]", spans) == [["Bob"], ["Oslo", "Lima"]]
    assert parse_replacements('[{"entity_span": "rome", "replaceable_entity_words": ["Oslo"]}]', spans) == \
        [[], ["Oslo"]]
    assert parse_replacements('[{"span": "Ada", "replacements": ["Bob", "Eve"]}, {"span": "Rome", "replacements": '
                              '["Oslo", "Li', spans) == [["Bob", "Eve"], ["Oslo"]]
    assert parse_replacements("Ada: Bob, Eve\nRome: Oslo", spans) == [["Bob", "Eve"], ["Oslo"]]
    assert parse_replacements("I do not know.", spans) == [[], []]
    assert parse_replacements(None, spans) == [[], []]


def test_cot_consistency_and_relation_names():
    assert cot_consistent('"bad" -> "good" | Revised text: "A good day."', "A good day.") is True
    assert cot_consistent('"bad" -> "good" | Revised text: "A fine day."', "A fine day.") is False
    assert cot_consistent("Revised text: A day.", "A day.") is None
    assert relation_text("Component-Whole(e2,e1)") == "whole-component"
    assert relation_text("Other") == "other"


def test_prompts_follow_the_options():
    row = {"text": "A fine film.", "label": "positive", "target": "negative"}
    with_g, without = build_prompt("sentiment", row), build_prompt("sentiment", row, guidelines=False)
    assert with_g.startswith("Task:") and not without.startswith("Task:") and with_g.endswith(without)
    cot = build_prompt("sentiment", row, cot=True)
    assert cot.endswith("Causal words:") and "Replacements: " in cot
    nli = build_prompt("nli", {"premise": "P.", "hypothesis": "H.", "label": "neutral",
                               "targets": ["entailment", "contradiction"]})
    assert 'Target relations: ["entailment", "contradiction"]' in nli and nli.endswith("Revised hypotheses:")
    ner = build_prompt("ner", {"tokens": ["Ada", "ran"], "entities": [{"span": "Ada", "type": "PER"}]})
    assert '[{"span": "Ada", "type": "person"}]' in ner
    re_prompt = build_prompt("re", {"text": "The <e1>a</e1> b <e2>c</e2>.", "label": "Cause-Effect(e2,e1)",
                                    "target": "Other"})
    assert 'Relation: "effect-cause"' in re_prompt and 'Head entity: "a"' in re_prompt
    with pytest.raises(ValueError, match="Unknown task"):
        build_prompt("pos", row)
    with pytest.raises(ValueError, match="lacks"):
        build_prompt("sentiment", row, demonstrations=[{"text": "x"}])
    with pytest.raises(ValueError, match="chain-of-thought"):
        build_prompt("ner", {"tokens": ["a"], "entities": []}, cot=True)


# ------------------------------------------------------------------------------------------------ augmenter
def scripted(answers):
    """An LLM answering each prompt with ``answers(prompt)``."""
    prompts_seen = []

    def llm(prompts):
        prompts_seen.extend(prompts)
        return [answers(p) for p in prompts]

    llm.prompts = prompts_seen
    return llm


def test_sentiment_all_targets_and_stats():
    data = Dataset.from_dict({"text": ["The food was great.", "The room was dirty.", "It rained."],
                              "label": ["positive", "negative", "positive"]})
    table = {"The food was great.": '"The food was awful."', "The room was dirty.": "Revised text: The room was clean.",
             "It rained.": "Target sentiment: negative"}
    llm = scripted(lambda p: table[json.loads(p.splitlines()[-4].split(": ", 1)[1])])
    aug = LLMCounterfactualAugmenter(llm)
    out = aug.augment(data)
    cfs = out.filter(lambda r: r["cf_is_counterfactual"])
    assert list(cfs["text"]) == ["The food was awful.", "The room was clean."]
    assert list(cfs["label"]) == ["negative", "positive"]
    assert aug.stats.by_prefix("target") == {"negative": 2, "positive": 1}
    assert aug.stats.skipped == {"llm_unparseable": 1}


def test_nli_one_prompt_per_row_with_a_list_of_targets():
    data = Dataset.from_dict({"premise": ["A man climbs a wall.", "Kids play."],
                              "hypothesis": ["A man is outdoors.", "Kids sleep."],
                              "label": ["entailment", "contradiction"]})
    answers = {"A man is outdoors.": '["A man is asleep.", "A man is climbing with friends."]',
               "Kids sleep.": '["Kids play."]'}
    llm = scripted(lambda p: answers[json.loads(p.splitlines()[-4].split(": ", 1)[1])])
    aug = LLMCounterfactualAugmenter(llm, TaskSchema.nli())
    out = aug.augment(data)
    assert len(llm.prompts) == 2
    cfs = out.filter(lambda r: r["cf_is_counterfactual"])
    assert list(zip(cfs["hypothesis"], cfs["label"])) == [("A man is asleep.", "neutral"),
                                                         ("A man is climbing with friends.", "contradiction")]
    # "Kids play." is the premise: the NLI constraint drops it; the second target got no item.
    assert aug.stats.by_prefix("nli_constraints") == {"copied_premise": 1}
    assert aug.stats.skipped["llm_missing_target"] == 1
    assert set(cfs["premise"]) == {"A man climbs a wall."}


def test_ner_replacements_are_substituted_with_recomputed_tags():
    def answer(prompt):
        return ('[{"span": "Ada", "type": "person", "replacements": ["Mary Ann", "Eve"]}, '
                '{"span": "New York", "type": "location", "replacements": ["Paris"]}]')

    llm = scripted(answer)
    aug = LLMCounterfactualAugmenter(llm, NER, per_target=2)
    out = aug.augment(ner_data(ids=True).select([0, 2]))
    cfs = out.filter(lambda r: r["cf_is_counterfactual"])
    names = NER.label_names
    assert cfs[0]["tokens"] == ["Mary", "Ann", "lives", "in", "Paris", "."]
    assert [names[t] for t in cfs[0]["ner_tags"]] == ["B-PER", "I-PER", "O", "O", "B-LOC", "O"]
    assert cfs[1]["tokens"] == ["Eve", "lives", "in", "New", "York", "."]
    assert json.loads(cfs[0]["cf_edit"])["replaced"][0] == {"new": "Mary Ann", "old": "Ada", "type": "PER"}
    assert aug.stats.skipped == {"no_entities": 1}


def test_ner_failures_are_counted():
    aug = LLMCounterfactualAugmenter(scripted(lambda p: "I am not sure."), NER)
    aug.augment(ner_data().select([0]))
    assert aug.stats.skipped == {"llm_no_replacement": 1}
    aug = LLMCounterfactualAugmenter(scripted(lambda p: '[{"span": "Ada", "replacements": ["Ada"]}]'), NER)
    aug.augment(ner_data().select([0]))
    assert aug.stats.skipped == {"llm_no_replacement": 1}


def test_re_markup_is_restored_or_the_answer_rejected():
    data = Dataset.from_dict({"text": ["The <e1>key</e1> was moved into a <e2>chest</e2>.",
                                       "The <e1>fire</e1> came from a <e2>heater</e2>.",
                                       "A <e1>cup</e1> is in the <e2>box</e2>."],
                              "label": ["Entity-Destination(e1,e2)", "Cause-Effect(e2,e1)", "Content-Container(e1,e2)"]})
    answers = {"key": '"The key was taken out of a chest."',  # markup dropped: restored
               "fire": '"The <e2>heater</e2> caused the <e1>fire</e1>."',  # order swapped: constraint drops it
               "cup": '"A mug is in the box."'}  # head lost
    llm = scripted(lambda p: next(v for k, v in answers.items() if f'Head entity: "{k}"' in p.split("Now the")[1]))
    aug = LLMCounterfactualAugmenter(llm, RE, targets="random", exclude_targets=["Other"])
    out = aug.augment(data)
    cfs = out.filter(lambda r: r["cf_is_counterfactual"])
    assert list(cfs["text"]) == ["The <e1>key</e1> was taken out of a <e2>chest</e2>."]
    assert cfs[0]["label"] not in ("Entity-Destination(e1,e2)", "Other")
    assert aug.stats.events["re:markup_restored"] == 1
    assert aug.stats.by_prefix("re_constraints") == {"order": 1}
    assert aug.stats.skipped["llm_lost_entities"] == 1


def test_re_rows_without_markup_fail_before_generation():
    llm = scripted(lambda p: "x")
    data = Dataset.from_dict({"text": ["ok <e1>a</e1> <e2>b</e2>", "no markup here"], "label": ["Other", "Other"]})
    with pytest.raises(SchemaError, match=r"'text' at row 1: expected exactly one <e1>"):
        LLMCounterfactualAugmenter(llm, RE, targets="random").augment(data)
    assert llm.prompts == []


def test_balanced_targets_even_out_a_skewed_dataset():
    names = tuple("abcd")
    schema = TaskSchema(("text",), ("text",), "label", names)
    data = Dataset.from_dict({"text": [f"row {i}" for i in range(400)],
                              "label": ["a"] * 250 + ["b"] * 100 + ["c"] * 40 + ["d"] * 10})
    llm = scripted(lambda p: "Revised text: changed row")
    shares = {}
    for mode in ("random", "balanced"):
        aug = LLMCounterfactualAugmenter(llm, schema, task="sentiment", targets=mode)
        aug.augment(data)
        counts = aug.stats.by_prefix("target")
        shares[mode] = max(counts.values()) / min(counts.values())
    assert shares["balanced"] < 1.35 < shares["random"]
    with pytest.raises(ValueError, match="label counts"):
        data.map(LLMCounterfactualAugmenter(llm, schema, task="sentiment", targets="balanced"), batched=True)
    probs = balanced_target_probs({"a": 1, "b": 1}, {"a": ["b"], "b": ["a"]})
    assert probs == {"a": {"b": 1.0}, "b": {"a": 1.0}}


def test_consistency_filters_drop_counterfactuals_the_task_model_disagrees_with():
    checker = LabelChecker(*tiny_classifier(("negative", "positive")))
    data = Dataset.from_dict({"text": ["the food was good .", "the food was bad ."], "label": ["positive", "negative"]})
    llm = scripted(lambda p: "Revised text: the staff was good .")
    aug = LLMCounterfactualAugmenter(llm, checker=checker)
    out = aug.augment(data)
    predicted = checker.predict(["the staff was good ."])[0]
    kept = out.filter(lambda r: r["cf_is_counterfactual"])
    assert list(kept["label"]) == [predicted]  # only the row whose target the checker predicts survives
    assert aug.stats.by_prefix("filtered") == {"label_flip": 1}

    answer = '[{"span": "Ada", "replacements": ["Zed"]}]'
    tagger = lambda batch: [["O"] * len(t) for t in batch]  # finds no entity: every counterfactual disagrees
    aug = LLMCounterfactualAugmenter(scripted(lambda p: answer), NER, tagger=tagger)
    aug.augment(ner_data().select([0]))
    assert aug.stats.by_prefix("tag_consistency") == {"tags_disagree": 1}



def test_checker_threshold_replaces_the_checkers_own_and_is_validated():
    """A counterfactual the checker gives its target 0.88 is kept under the checker's own 0.6 and under an
    augmenter threshold of 0.8, and dropped under 0.9; the loop's stopping point follows the same option."""
    from cfaug_hf.methods.llm import LLMConfig
    from cfaug_hf.methods.until_flipped import flip_decision
    from cfaug_hf.testing import keyword_checker

    checker = keyword_checker({"negative": ["bad"], "positive": ["good"]})
    data = Dataset.from_dict({"text": ["the food was bad ."], "label": ["negative"]})
    llm = scripted(lambda p: "Revised text: the staff was good .")
    kept = {}
    for threshold in (None, 0.8, 0.9):
        aug = LLMCounterfactualAugmenter(llm, checker=checker, checker_threshold=threshold, keep_original=False)
        kept[threshold] = len(aug.augment(data))
    assert kept == {None: 1, 0.8: 1, 0.9: 0}
    assert aug.stats.by_prefix("filtered") == {"label_flip": 1}
    assert flip_decision(checker, LLMConfig(checker_threshold=0.7, flip_margin=0.1)).need == pytest.approx(0.8)
    assert flip_decision(checker, LLMConfig(flip_margin=0.1)).need == pytest.approx(0.7)
    with pytest.raises(ValueError, match=r"checker_threshold must be a probability in \[0, 1\] or None, got 1.5"):
        LLMConfig(checker_threshold=1.5)

def test_constraint_filters_name_their_reasons():
    def pair(src, cf, label="B-PER O", original="B-PER O"):
        return Pair({"tokens": src}, {"tokens": cf}, label, original, ("tokens",), ("tokens",), 0)

    f = NERConstraintFilter(EntityLexicon({"LOC": ["Paris"], "PER": ["Ada"]}))
    pairs = [pair(["Ada", "ran"], ["Bob", "ran"]), pair(["Ada", "ran"], ["Bob", "ran", "x"]),
             pair(["Ada", "ran"], ["Bob", "ran"], "I-PER O"), pair(["Ada", "ran"], ["Bob", "ran"], "B-LOC O"),
             pair(["Ada", "ran"], ["Bob", "walked"]), pair(["Ada", "ran"], ["Paris", "ran"])]
    keep, _ = f.keep(pairs)
    assert keep == [True, False, False, False, False, False]
    assert f.reasons == [None, "tag_count", "iob2", "entity_types", "context_changed", "type_conflict"]

    r = REConstraintFilter()
    src = {"text": "The <e1>a</e1> b <e2>c</e2>."}
    texts = ["The <e1>a</e1> d <e2>c</e2>.", "The a d c.", "The <e1>x</e1> d <e2>c</e2>.",
             "The <e1>a</e1> d <e2>x</e2>.", "<e2>c</e2> d <e1>a</e1>."]
    keep, _ = r.keep([Pair(src, {"text": t}, "Other", "Other", ("text",), ("text",), 0) for t in texts])
    assert r.reasons == [None, "markup", "head_changed", "tail_changed", "order"]

    n = NLIConstraintFilter()
    src = {"premise": "P here.", "hypothesis": "H."}
    keep, _ = n.keep([Pair(src, {**src, "hypothesis": "New."}, "x", "y", ("hypothesis",), ("premise", "hypothesis"), 0),
                      Pair(src, {"premise": "Other.", "hypothesis": "New."}, "x", "y", ("premise", "hypothesis"),
                           ("premise", "hypothesis"), 0),
                      Pair(src, {**src, "hypothesis": "p HERE."}, "x", "y", ("hypothesis",),
                           ("premise", "hypothesis"), 0)])
    assert n.reasons == [None, "premise_changed", "copied_premise"]
    side = NLIConstraintFilter(side="premise")  # the premise edited: the hypothesis is what must stay
    keep, _ = side.keep([Pair(src, {**src, "premise": "New."}, "x", "y", ("premise",), ("premise", "hypothesis"), 0),
                         Pair(src, {"premise": "New.", "hypothesis": "Other."}, "x", "y", ("premise", "hypothesis"),
                              ("premise", "hypothesis"), 0),
                         Pair(src, {**src, "premise": "h."}, "x", "y", ("premise",), ("premise", "hypothesis"), 0)])
    assert side.reasons == [None, "hypothesis_changed", "copied_hypothesis"] and keep == [True, False, False]
    assert n.get_config_dict() == {"filter": "nli_constraints"} and side.init_args() == {"side": "premise"}
    with pytest.raises(ValueError, match="side must be"):
        NLIConstraintFilter(side="both")
    tag = TagConsistencyFilter(lambda batch: [["B-PER", "O"] for _ in batch])
    assert tag.keep([pair(["Ada", "ran"], ["Bob", "ran"])])[0] == [True]


def test_llm_errors_are_counted_not_raised(tmp_path):
    from llm_server import LLMServer

    from cfaug_hf import OpenAICompatibleLLM

    server = LLMServer()
    try:
        server.faults["dirty"] = ["400"]
        server.responder = lambda prompt, body: '"The room was clean."'
        llm = OpenAICompatibleLLM(base_url=server.url, model="m", backoff_s=0.0, max_retries=0)
        data = Dataset.from_dict({"text": ["The food was great.", "The room was dirty."],
                                  "label": ["positive", "negative"]})
        aug = LLMCounterfactualAugmenter(llm)
        aug.augment(data)
        assert aug.stats.skipped == {"llm_error": 1} and aug.stats.produced == {"llm": 1}
    finally:
        server.close()


def test_demonstrations_chosen_by_similarity_from_the_pool():
    class BagEncoder:
        vocab = ["food", "room", "film", "great", "dirty", "awful"]

        def encode(self, texts):
            v = np.array([[t.lower().count(w) for w in self.vocab] for t in texts], dtype=float) + 1e-6
            return v / np.linalg.norm(v, axis=1, keepdims=True)

    pool = [{"text": "The food was great.", "label": "positive", "target": "negative", "edited": "FOOD DEMO"},
            {"text": "The film was great.", "label": "positive", "target": "negative", "edited": "FILM DEMO"},
            {"text": "The room was dirty.", "label": "negative", "target": "positive", "edited": "ROOM DEMO"}]
    llm = scripted(lambda p: "Revised text: changed.")
    aug = LLMCounterfactualAugmenter(llm, demo_pool=pool, demo_encoder=BagEncoder())
    aug.augment(Dataset.from_dict({"text": ["A great film night.", "Great food!"], "label": ["positive"] * 2}))
    assert "FILM DEMO" in llm.prompts[0] and "FOOD DEMO" not in llm.prompts[0]
    assert "FOOD DEMO" in llm.prompts[1] and "ROOM DEMO" not in llm.prompts[1]
    with pytest.raises(TypeError, match="demo_encoder"):
        LLMCounterfactualAugmenter(llm, demo_pool=pool)


@pytest.mark.parametrize("make,error,match", [
    (lambda llm: LLMCounterfactualAugmenter(llm, TaskSchema(("t",), ("t",), "l", ("a", "b"))), ValueError,
     "Unknown task 'text-classification'"),
    (lambda llm: LLMCounterfactualAugmenter(llm, NER, cot=True), ValueError, "chain-of-thought"),
    (lambda llm: LLMCounterfactualAugmenter(llm, TaskSchema.sentiment(), task="ner"), SchemaError,
     "token-classification"),
    (lambda llm: LLMCounterfactualAugmenter(llm, TaskSchema.nli(), task="sentiment"), SchemaError, "1 text column"),
    (lambda llm: LLMCounterfactualAugmenter(llm, RE, exclude_targets=["Unrelated"]), SchemaError,
     "'Unrelated'.*not in the schema"),
    (lambda llm: LLMCounterfactualAugmenter(None), TypeError, "needs an llm"),
    (lambda llm: LLMCounterfactualAugmenter(llm, task="pos"), ValueError, "task must be one of"),
    (lambda llm: LLMCounterfactualAugmenter(llm, NER, checker=LabelChecker(*tiny_classifier(("a", "b")))),
     TypeError, "tagger="),
    (lambda llm: LLMCounterfactualAugmenter(llm, checker=LabelChecker(*tiny_classifier(("good", "bad")))),
     Exception, "negative|label"),
])
def test_bad_configuration_fails_clearly(make, error, match):
    with pytest.raises(error, match=match):
        make(scripted(lambda p: ""))


def test_labels_outside_the_schema_fail_with_the_row():
    aug = LLMCounterfactualAugmenter(scripted(lambda p: "x"))
    with pytest.raises(SchemaError, match=r"'label' at row 1: unknown label 'neutral'"):
        aug.augment(Dataset.from_dict({"text": ["a", "b"], "label": ["positive", "neutral"]}))


# ---------------------------------------------------------------------------------------------------- CFGen
def test_cfgen_replaces_entities_from_the_dataset():
    data = ner_data(ids=True)
    aug = CFGenAugmenter.from_dataset(data, NER, per_input=3)
    out = aug.augment(data)
    cfs = out.filter(lambda r: r["cf_is_counterfactual"])
    assert aug.stats.skipped == {"no_entities": 1} and len(cfs) >= 3
    lex = EntityLexicon.from_dataset(data, NER)
    for row in cfs:
        tags = [NER.label_names[t] for t in row["ner_tags"]]
        for ent in iob2_spans(row["tokens"], tags):
            assert ent.type in lex.types_of(ent.text)
        src = json.loads(row["cf_edit"])["replaced"]
        assert all(r["old"] != r["new"] for r in src)
    one = CFGenAugmenter(NER, lexicon=lex, replace="one")
    one.augment(data.select([1]))
    edit = json.loads(one.augment(data.select([1])).filter(lambda r: r["cf_is_counterfactual"])[0]["cf_edit"])
    assert len(edit["replaced"]) == 1


def test_cfgen_bad_input():
    with pytest.raises(ValueError, match="lexicon"):
        CFGenAugmenter(NER)
    with pytest.raises(SchemaError, match="token-classification"):
        CFGenAugmenter(TaskSchema.sentiment(), lexicon={"PER": ["Ada"]})
    with pytest.raises(ValueError, match="replace must be"):
        CFGenAugmenter(NER, lexicon={"PER": ["Ada"]}, replace="some")


def test_train_tagger_learns_a_tiny_tag_set():
    from transformers import BertConfig, BertForTokenClassification

    from cfaug_hf.testing import tiny_tokenizer
    from cfaug_hf.training import train_tagger

    tok = tiny_tokenizer()
    model = BertForTokenClassification(BertConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                                                  num_hidden_layers=1, num_attention_heads=2, num_labels=9))
    data = Dataset.from_dict({"tokens": [["paris", "is", "big"], ["the", "cat", "sat"]] * 8,
                              "ner_tags": [["B-LOC", "O", "O"], ["O", "O", "O"]] * 8})
    tagger = train_tagger((model, tok), data, NER, max_steps=60, learning_rate=5e-3,
                          training_args={"disable_tqdm": True, "logging_strategy": "no"})
    assert tagger([["paris", "is", "big"], ["the", "cat", "sat"]]) == [["B-LOC", "O", "O"], ["O", "O", "O"]]
    assert TagConsistencyFilter(tagger).keep([Pair({"tokens": ["paris", "is", "big"]}, {"tokens": ["paris", "is",
                                                                                                   "big"]},
                                                   "B-LOC O O", "B-LOC O O", ("tokens",), ("tokens",), 0)])[0] == [True]


def test_parsers_never_raise_on_random_answers():
    import string

    from cfaug_hf.methods.llm.augmenter import _after_cue

    rng = random.Random(0)
    parts = ['"', "'", "[", "]", "{", "}", ",", ":", "span", "replacements", "Revised text:", "\n", " ", "->", "|",
             "1.", "- ", "None", "null", "Ada", "Rome", "“", "”"]
    for _ in range(3000):
        answer = "".join(rng.choice(parts) if rng.random() < 0.6 else rng.choice(string.printable)
                         for _ in range(rng.randint(0, 30)))
        text, reason = parse_text(answer, "x")
        assert (text is None) != (reason is None)
        assert all(isinstance(item, str) and item for item in parse_list(answer, 2))
        assert len(parse_replacements(answer, ["Ada", "Rome"])) == 2
        _after_cue(answer, "Revised hypotheses")


def test_relation_extraction_lets_the_llm_choose_the_target_or_none():
    """targets='choose' (the paper's RE prompt): the candidates are listed, the LLM names one relation and its
    revision, or None; a relation outside the candidates is refused."""
    from cfaug_hf import TaskSchema
    from cfaug_hf.methods.llm import LLMCounterfactualAugmenter

    answers = iter(['Revised sentence: {"target_relation": "entity-origin", "revised_sentence": '
                    '"The <e1>key</e1> came out of a <e2>chest</e2>."}', "None",
                    '{"target_relation": "teleportation", "revised_sentence": "x"}'])
    prompts = []

    def llm(batch):
        prompts.extend(batch)
        return [next(answers) for _ in batch]

    schema = TaskSchema.relation_extraction(label_names=["Entity-Destination(e1,e2)", "Entity-Origin(e1,e2)",
                                                         "Other"])
    aug = LLMCounterfactualAugmenter(llm, schema, targets="choose", exclude_targets=["Other"], checker=None,
                                     constraints=False)
    data = Dataset.from_dict({"text": ["The <e1>key</e1> was moved into a <e2>chest</e2>.",
                                       "The <e1>cat</e1> sat in the <e2>box</e2>.",
                                       "The <e1>ink</e1> went into the <e2>pen</e2>."],
                              "label": ["Entity-Destination(e1,e2)"] * 3})
    out = aug.augment(data, batch_size=1)
    made = [(r["text"], r["label"]) for r in out if r["cf_is_counterfactual"]]
    assert made == [("The <e1>key</e1> came out of a <e2>chest</e2>.", "Entity-Origin(e1,e2)")]
    assert 'Candidate relations: ["entity-origin"]' in prompts[0] and "Target relation:" not in prompts[0]
    assert aug.stats.events["skipped:llm_no_target"] == 1 and aug.stats.events["skipped:llm_not_a_candidate"] == 1


def test_choose_is_refused_outside_relation_extraction():
    from cfaug_hf.methods.llm import LLMCounterfactualAugmenter

    with pytest.raises(ValueError, match="targets='choose' lets the LLM choose a relation"):
        LLMCounterfactualAugmenter(lambda p: p, targets="choose", checker=None)


def test_the_paper_preset_lets_the_llm_choose_relations_and_names_targets_elsewhere():
    from cfaug_hf.methods.llm import LLMCounterfactualAugmenter

    preset = LLMCounterfactualAugmenter.presets["paper"]
    assert preset.recipe("relation-extraction")["config"]["targets"] == "choose"
    assert preset.recipe("sentiment-analysis")["config"]["targets"] == "all"
