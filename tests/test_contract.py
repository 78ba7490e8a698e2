"""The contract every registered augmenter keeps (peft's TEST_CASES pattern): a new method adds one factory here
and gets the whole suite.

For each method: the same output whatever the batch size and ``num_proc``; ``augment()``'s statistics equal those
recovered from the output; save -> load gives the same fingerprint and output; push -> pull through the loopback
Hub gives the same output and a card that names the method and its citation; and the method-independent part of
the bad-input catalogue.
"""

from __future__ import annotations

import uuid

import pytest
from datasets import Dataset

from cfaug_hf import (AugmentationStats, Augmenter, CrossAugAugmenter, Generator, RationaleSelector,
                      RationaleSwapAugmenter, SchemaError, TaskSchema, registry)
from cfaug_hf.testing import NegateAugmenter, tiny_encoder, tiny_seq2seq


def crossaug_case():
    gen = Generator(*tiny_seq2seq(), num_beams=2, num_return_sequences=2, max_new_tokens=6)
    schema = TaskSchema.fact_verification(id_column="id")
    words = ["the cat sat on the mat", "the dog ran in paris", "the film was good", "the king lived in london",
             "the team won in 1990", "the band played a song"]
    data = Dataset.from_dict({"id": [f"r{i}" for i in range(12)], "claim": [words[i % 6] for i in range(12)],
                              "evidence": [[words[i % 6] + " .", "it was good ."] for i in range(12)],
                              "label": ["SUPPORTS", "REFUTES", "SUPPORTS"] * 4})
    return CrossAugAugmenter(gen, schema), data


def icda_case():
    selector = RationaleSelector.from_encoder(tiny_encoder(), sentence_layers=1, sentence_heads=2,
                                              label_names=["negative", "positive"])
    good, bad = ["the food was good .", "the food was great ."], ["the food was bad .", "the food was terrible ."]
    docs = [[(good if i % 2 else bad)[i % 2], "the room was clean .", "the staff was good ."] for i in range(12)]
    data = Dataset.from_dict({"id": [f"d{i}" for i in range(12)], "text": [" ".join(d) for d in docs],
                              "label": ["positive" if i % 2 else "negative" for i in range(12)]})
    return RationaleSwapAugmenter(selector, TaskSchema.sentiment(id_column="id")), data


def negate_case():
    data = Dataset.from_dict({"text": [f"the film {i} was good" if i % 3 else f"a film {i}" for i in range(12)],
                              "label": ["positive", "negative"] * 6})
    return NegateAugmenter(TaskSchema.sentiment()), data


def core_case():
    from cfaug_hf import BiEncoder, COREAugmenter, CorpusIndex
    from cfaug_hf.testing import tiny_causal_lm

    encoder = BiEncoder(tiny_encoder(0)[0], tiny_encoder(1)[0], tiny_encoder()[1])
    index = CorpusIndex.build(encoder, ["the food was great .", "the staff was good .", "the room was bad .",
                                        "the film was terrible ."])
    editor = Generator(*tiny_causal_lm(), chat=True, do_sample=True, num_beams=1, max_new_tokens=8,
                       max_source_length=200)
    data = Dataset.from_dict({"id": [f"s{i}" for i in range(12)],
                              "text": [f"the food was {'good' if i % 2 else 'bad'} ." for i in range(12)],
                              "label": ["positive" if i % 2 else "negative" for i in range(12)]})
    demo = {"text": "the film was bad .", "label": "negative", "keywords": ["good"], "target": "positive",
            "edited": "the film was good ."}
    return COREAugmenter(editor, TaskSchema.sentiment(id_column="id"), retriever=encoder, index=index,
                         demonstrations=[demo], instructions="edit the text ."), data


def llm_case():
    from cfaug_hf import LLMCounterfactualAugmenter
    from cfaug_hf.testing import tiny_causal_lm

    llm = Generator(*tiny_causal_lm(), chat=True, do_sample=True, num_beams=1, max_new_tokens=8,
                    max_source_length=200)
    data = Dataset.from_dict({"id": [f"s{i}" for i in range(12)],
                              "text": [f"the food was {'good' if i % 2 else 'bad'} ." for i in range(12)],
                              "label": ["positive" if i % 2 else "negative" for i in range(12)]})
    demo = {"text": "the film was bad .", "label": "negative", "target": "positive", "edited": "the film was good ."}
    return LLMCounterfactualAugmenter(llm, TaskSchema.sentiment(id_column="id"), guidelines=False,
                                      demonstrations=[demo]), data


def cfgen_case():
    from cfaug_hf import CFGenAugmenter

    people, places = ["Ada", "Bob", "Eve", "Max"], ["Paris", "Rome", "Oslo"]
    data = Dataset.from_dict({
        "tokens": [[people[i % 4], "went", "to", places[i % 3], "."] if i % 5 else ["it", "rained", "."]
                   for i in range(12)],
        "ner_tags": [["B-PER", "O", "O", "B-LOC", "O"] if i % 5 else ["O", "O", "O"] for i in range(12)]})
    return CFGenAugmenter.from_dataset(data, TaskSchema.token_classification(), per_input=2), data


def race_case():
    from cfaug_hf import LabelChecker, RACEAugmenter
    from cfaug_hf.components.ner import LexiconNER
    from cfaug_hf.testing import tiny_classifier

    gen = Generator(*tiny_seq2seq(), num_beams=3, num_return_sequences=2, max_new_tokens=6)
    ner = LexiconNER({"paris": "GPE", "london": "GPE", "rome": "GPE", "king": "PERSON", "band": "ORG",
                      "1990": "DATE"})
    places = ["paris", "london", "rome"]
    data = Dataset.from_dict({
        "id": [f"f{i}" for i in range(12)],
        "claim": [f"the king lived in {places[i % 3]}" for i in range(12)],
        "evidence": [[f"the king lived in {places[i % 3]} .", f"the band played in {places[(i + 1) % 3]} in 1990 ."]
                     for i in range(12)],
        "label": ["SUPPORTS", "REFUTES"] * 6})
    return RACEAugmenter(gen, LabelChecker(*tiny_classifier()), ner, TaskSchema.fact_verification(id_column="id"),
                         min_drop=-1.0, paper_decoding=False), data


CASES = {"crossaug": crossaug_case, "icda": icda_case, "negate": negate_case, "core": core_case, "llm": llm_case,
         "cfgen": cfgen_case, "race": race_case}


def rows(dataset):
    return dataset.to_list()


def test_every_built_in_method_has_a_case():
    assert set(registry.available()["augmenters"]) >= {"crossaug", "icda"}
    built_in = {name for name, entry in registry.METHODS.items() if str(entry.augmenter).startswith("cfaug_hf.")}
    missing = built_in - set(CASES)
    assert not missing, f"add a contract case for {sorted(missing)}"


@pytest.mark.parametrize("method", sorted(CASES))
def test_same_output_whatever_the_batch_size_and_num_proc(method):
    aug, data = CASES[method]()
    reference = rows(aug.augment(data, batch_size=1, load_from_cache_file=False))
    for kwargs in ({"batch_size": 8}, {"batch_size": 64}, {"batch_size": 8, "num_proc": 2}):
        assert rows(aug.augment(data, load_from_cache_file=False, **kwargs)) == reference, kwargs


@pytest.mark.parametrize("method", sorted(CASES))
def test_stats_equal_the_stats_recovered_from_the_output(method):
    aug, data = CASES[method]()
    out = aug.augment(data)
    assert aug.stats.rows_in == len(data) and aug.stats.rows_out == len(out)
    assert AugmentationStats.from_dataset(out).to_dict() == aug.stats.to_dict()


@pytest.mark.parametrize("method", sorted(CASES))
def test_save_load_gives_the_same_fingerprint_and_output(method, tmp_path):
    aug, data = CASES[method]()
    out = rows(aug.augment(data))
    aug.save_pretrained(tmp_path / "aug")
    back = Augmenter.from_pretrained(tmp_path / "aug")
    assert type(back) is type(aug) and rows(back.augment(data)) == out
    assert back.fingerprint() == aug.fingerprint()  # after augment(): ICDA's fingerprint includes its fitted plan


@pytest.mark.parametrize("method", sorted(CASES))
def test_push_pull_and_card(method):
    from huggingface_hub import ModelCard

    aug, data = CASES[method]()
    out = rows(aug.augment(data))
    repo = f"alice/contract-{method}-{uuid.uuid4().hex[:6]}"
    aug.push_to_hub(repo, token="hf_alice_write", copy_components=True)
    back = Augmenter.from_pretrained(repo)
    assert type(back) is type(aug) and rows(back.augment(data)) == out
    card = ModelCard.load(repo).text
    assert method in card and type(aug).__name__ in card
    if aug.citation:
        assert aug.citation.splitlines()[0] in card


@pytest.mark.parametrize("method", sorted(CASES))
def test_method_independent_bad_input(method):
    aug, data = CASES[method]()
    text, label = aug.schema.text_columns[0], aug.schema.label_column
    tokens = aug.schema.is_token_level  # cells are lists: an empty list is the blank, a list of tags the label
    with pytest.raises(SchemaError, match=f"Column '{label}' is missing"):
        aug.augment(data.remove_columns(label))
    blank = data.map(lambda t, i: {text: ([] if tokens else "") if i == 5 else t}, input_columns=text,
                     with_indices=True)
    with pytest.raises(SchemaError, match=f"Column '{text}' at row 5: got {'' if tokens else repr('')}"):
        aug.augment(blank)
    wrong = data.map(lambda y, i: {label: (["MAYBE"] * len(y) if tokens else "MAYBE") if i == 3 else y},
                     input_columns=label, with_indices=True)
    with pytest.raises(SchemaError, match=f"Column '{label}' at row 3: unknown label 'MAYBE'"):
        aug.augment(wrong)
    with pytest.raises(SchemaError, match="already the output of an augmenter"):
        aug.augment(aug.augment(data))
    if method != "icda":  # ICDA needs fit() on the whole dataset before a plain map
        with pytest.raises(TypeError, match="batched=True"):
            data.map(aug)
