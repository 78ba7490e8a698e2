"""CORE: the CF-DPR bi-encoder and its training, the corpus index, retrieval, keywords, prompts, parsing and the
augmenter (tiny in-process models; the HTTP editor is in test_llm_http.py, the contract suite in test_contract.py)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from datasets import Dataset

from cfaug_hf import BiEncoder, COREAugmenter, CorpusIndex, Generator, LabelChecker, SchemaError, TaskSchema
from cfaug_hf.components.retriever import EncoderMismatchError
from cfaug_hf.methods.core import build_prompt, keywords, parse_answer, reranker_rows, train_reranker
from cfaug_hf.testing import tiny_causal_lm, tiny_classifier, tiny_encoder
from cfaug_hf.training import mine_hard_negatives, retrieval_accuracy, train_cf_dpr

QUIET = {"disable_tqdm": True, "logging_strategy": "no"}


def shared_encoder():
    """Query and document encoders sharing weights: a text's nearest neighbour is itself."""
    model, tok = tiny_encoder()
    return BiEncoder(model, model, tok)


def corpus(n=60):
    """Distinct texts in the tiny tokenizer's vocabulary (n <= 480)."""
    adjectives = ["good", "bad", "great", "terrible", "clean", "dirty"]
    nouns = ["food", "film", "room", "staff", "king", "team", "band", "song", "dish", "hotel"]
    tails = ["", " in paris", " in london", " in 1990", " for ten days", " with the queen", " at the river",
             " over the war"]
    return [f"the {nouns[i % 10]} was {adjectives[(i // 10) % 6]}{tails[i // 60]} ." for i in range(n)]


# ----------------------------------------------------------------------------------------------------- bi-encoder
def test_bi_encoder_round_trip_keeps_vectors_and_fingerprint(tmp_path):
    enc = BiEncoder(tiny_encoder(0)[0], tiny_encoder(1)[0], tiny_encoder()[1], max_query_length=16)
    texts = ["the food was good .", "a bad film"]
    enc.save_pretrained(tmp_path / "enc")
    loaded = BiEncoder.from_pretrained(tmp_path / "enc")
    for which in ("query", "document"):
        np.testing.assert_allclose(loaded.encode(texts, which), enc.encode(texts, which), atol=1e-6)
    assert loaded.fingerprint() == enc.fingerprint() and loaded.config.max_query_length == 16
    assert not np.allclose(enc.encode(texts, "query"), enc.encode(texts, "document"))  # two encoders
    norms = np.linalg.norm(enc.encode(texts), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)


def test_bi_encoder_refuses_bad_input(tmp_path):
    enc = shared_encoder()
    with pytest.raises(TypeError, match="Text 1"):
        enc.encode(["ok", None])
    with pytest.raises(ValueError, match="which"):
        enc.encode(["ok"], "passage")
    enc.save_pretrained(tmp_path / "enc")
    (tmp_path / "enc" / "document_encoder" / "config.json").unlink()
    with pytest.raises(Exception, match="document_encoder"):
        BiEncoder.from_pretrained(tmp_path / "enc")


def test_dpr_training_pulls_counterfactuals_closer():
    queries = [f"the {n} was good ." for n in ["food", "film", "room", "staff", "king", "team", "band", "song"]]
    positives = [q.replace("good", "bad") for q in queries]
    negatives = [[q.replace("good", "great")] for q in queries]
    rows = Dataset.from_dict({"query": queries, "positive": positives, "hard_negatives": negatives})
    enc = BiEncoder(tiny_encoder(0)[0], tiny_encoder(0)[0], tiny_encoder()[1])
    before = retrieval_accuracy(enc, queries, positives + [n[0] for n in negatives], ks=(1,))["top1"]
    enc = train_cf_dpr(enc, rows, max_steps=40, batch_size=8, learning_rate=3e-3, training_args=QUIET)
    after = retrieval_accuracy(enc, queries, positives + [n[0] for n in negatives], ks=(1,))["top1"]
    assert after > before and after >= 0.75
    assert enc.training_info["hard_negatives_per_row"] == 1 and enc.training_info["global_step"] == 40


def test_a_lora_cf_dpr_saves_two_adapters_naming_its_base_and_reloads_the_same_vectors(tmp_path):
    model, tok = tiny_encoder()
    model.save_pretrained(tmp_path / "base")
    tok.save_pretrained(tmp_path / "base")
    enc = BiEncoder.from_base(str(tmp_path / "base"), max_query_length=16)
    rows = Dataset.from_dict({"query": ["the food was good .", "a bad film"] * 4,
                              "positive": ["the food was bad .", "a good film"] * 4})
    enc = train_cf_dpr(enc, rows, negatives_column=None, max_steps=3, lora=True, learning_rate=5e-3,
                       training_args=QUIET)
    assert enc.training_info["lora"]["r"] == 16
    enc.halve_adapter()
    saved = enc.save_pretrained(tmp_path / "enc")
    for sub in ("query_encoder", "document_encoder"):
        files = sorted(p.name for p in (saved / sub).iterdir())
        assert files == ["adapter_config.json", "adapter_model.safetensors"]
        config = json.loads((saved / sub / "adapter_config.json").read_text())
        assert config["base_model_name_or_path"] == enc.base_model
    back = BiEncoder.from_pretrained(saved)
    texts = ["the food was good .", "a dull film"]
    for which in ("query", "document"):
        np.testing.assert_allclose(back.encode(texts, which), enc.encode(texts, which), atol=1e-5)
    with pytest.raises(ValueError, match="no LoRA adapters"):
        BiEncoder(tiny_encoder()[0], tiny_encoder()[0], tok).halve_adapter()


def test_dpr_training_refuses_ragged_negatives_and_empty_texts():
    enc = shared_encoder()
    ragged = Dataset.from_dict({"query": ["a", "b"], "positive": ["c", "d"], "hard_negatives": [["e"], ["f", "g"]]})
    with pytest.raises(ValueError, match="same number of hard negatives"):
        train_cf_dpr(enc, ragged, max_steps=1)
    empty = Dataset.from_dict({"query": ["a", " "], "positive": ["c", "d"]})
    with pytest.raises(ValueError, match="'query' at row 1"):
        train_cf_dpr(enc, empty, negatives_column=None, max_steps=1)
    with pytest.raises(ValueError, match="missing"):
        train_cf_dpr(enc, empty.rename_column("positive", "cf"), max_steps=1)


def test_hard_negatives_keep_the_label_and_skip_the_counterfactual():
    texts = corpus(20)
    labels = ["pos" if "good" in t or "great" in t or "fine" in t else "neg" for t in texts]
    negs = mine_hard_negatives(shared_encoder(), texts, labels, n=2, exclude=[t.replace("good", "bad") for t in texts])
    for text, label, picked in zip(texts, labels, negs):
        assert len(picked) == 2 and text not in picked
        assert all(labels[texts.index(p)] == label for p in picked)
        assert text.replace("good", "bad") not in picked


# ---------------------------------------------------------------------------------------------------- the index
def test_flat_index_finds_each_text_first_and_dedups():
    enc = shared_encoder()
    texts = corpus(30)
    index = CorpusIndex.build(enc, texts + texts[:5] + ["", "   "])
    assert len(index) == 35 and index.config.index_type == "flat"  # empty texts dropped
    hits = index.search(enc, texts[:10], k=8)
    assert [h[0]["text"] for h in hits] == texts[:10]
    assert all(len({x["text"] for x in h}) == len(h) for h in hits)  # duplicates returned once


def test_ivf_matches_flat_when_every_list_is_probed_and_round_trips(tmp_path):
    enc = shared_encoder()
    texts = corpus(200)
    flat = CorpusIndex.build(enc, texts, index_type="flat")
    ivf = CorpusIndex.build(enc, Dataset.from_dict({"sentence": texts}), text_column="sentence", index_type="ivf",
                            nlist=8, nprobe=8)
    assert ivf.config.index_type == "ivf"
    queries = enc.encode(texts[:20], "query")
    np.testing.assert_allclose(ivf.search_vectors(queries, 5)[0], flat.search_vectors(queries, 5)[0], atol=1e-5)
    ivf.save_pretrained(tmp_path / "index")
    loaded = CorpusIndex.from_pretrained(tmp_path / "index")
    assert loaded.fingerprint() == ivf.fingerprint() and len(loaded) == 200
    assert loaded.search(enc, texts[:3], k=2) == ivf.search(enc, texts[:3], k=2)


def test_index_bad_input(caplog):
    enc = shared_encoder()
    with pytest.raises(ValueError, match="empty"):
        CorpusIndex.build(enc, ["", "  "])
    with pytest.raises(TypeError, match="Corpus text 1"):
        CorpusIndex.build(enc, ["ok", 3])
    with pytest.raises(ValueError, match="no column 'body'"):
        CorpusIndex.build(enc, Dataset.from_dict({"text": ["a"]}), text_column="body")
    with caplog.at_level(logging.WARNING):
        small = CorpusIndex.build(enc, corpus(20), index_type="ivf")
    assert small.config.index_type == "flat" and "fewer than the 300 IVF centroids" in caplog.text
    other = BiEncoder(tiny_encoder(3)[0], tiny_encoder(3)[0], tiny_encoder()[1])
    with pytest.raises(EncoderMismatchError, match="rebuild it"):
        small.search(other, ["the food"])
    with pytest.raises(EncoderMismatchError):
        COREAugmenter(lambda p: p, retriever=other, index=small)


# ----------------------------------------------------------------------------------------- keywords and prompts
def test_keywords_by_task():
    excerpts = ["The staff were rude and the rooms were filthy.", "Never again, a dreadful stay!"]
    assert keywords(excerpts, "sentiment", tagger=None) == ["staff", "rude", "rooms", "filthy", "dreadful", "stay"]
    assert keywords(excerpts, "sentiment", tagger=None, max_n=2, query="the staff") == ["rude", "rooms"]
    tagged = lambda texts: [[("The", "DET"), ("staff", "NOUN"), ("were", "AUX"), ("in", "ADP"), ("rude", "ADJ"),
                             (",", "PUNCT"), ("and", "CCONJ"), ("left", "VERB"), ("early", "ADV"), ("x", "X")]]
    assert keywords(["whatever"], "nli", tagger=tagged) == ["staff", "in", "rude", "left", "early"]
    assert keywords(["whatever"], "nli", tagger=tagged, max_n=2) == ["staff", "in"]


def test_prompts_hold_instructions_demonstrations_keywords_and_target():
    p = build_prompt("nli", {"premise": "A dog runs.", "hypothesis": "An animal moves.", "label": "entailment"},
                     "contradiction", ["asleep", "cat"])
    assert p.count("Rewritten sentence 2:") == 5  # 4 demonstrations + the input
    assert p.endswith("Suggested words: ['asleep', 'cat']\nTarget relation: definitely false\nRewritten sentence 2:")
    assert "Suggested words" not in build_prompt("sentiment", {"text": "ok", "label": "negative"}, "positive", None)
    with pytest.raises(ValueError, match="lacks \\['edited'\\]"):
        build_prompt("text", {"text": "a", "label": "x"}, "y", ["w"], demonstrations=[{"text": "a", "label": "x",
                                                                                          "keywords": [], "target": "y"}])
    with pytest.raises(ValueError, match="Unknown CORE task"):
        build_prompt("ner", {}, "x", None)


MALFORMED = [
    ("", "llm_unparseable"), ("   \n\n", "llm_unparseable"), ("...", "llm_unparseable"), ('""', "llm_unparseable"),
    ("Review: A dull film.", "llm_unchanged"), ("Target sentiment: positive", "llm_unparseable"),
    ("A dull film.", "llm_unchanged"), ("  a DULL   film. ", "llm_unchanged"), (None, "llm_unparseable"),
]


@pytest.mark.parametrize("answer,reason", MALFORMED)
def test_unusable_answers_are_counted_reasons(answer, reason):
    assert parse_answer(answer, "A dull film.", "sentiment") == (None, reason)


@pytest.mark.parametrize("answer", [
    "A lively film.", "Rewritten review: A lively film.", '"A lively film."', "“A lively film.”",
    "Edited review: 'A lively film.'\nReview: another one", "\nA lively film.\n\nSentiment: positive",
    "Answer: A lively film.",
])
def test_usable_answers_are_cleaned(answer):
    assert parse_answer(answer, "A dull film.", "sentiment") == ("A lively film.", None)


# ---------------------------------------------------------------------------------------------------- augmenter
def core_parts():
    enc = shared_encoder()
    return enc, CorpusIndex.build(enc, corpus(60))


def test_core_sentiment_end_to_end_with_provenance():
    enc, index = core_parts()
    prompts = []

    def editor(batch):
        prompts.extend(batch)
        return ["Rewritten review: the food was great ." for _ in batch]

    data = Dataset.from_dict({"text": ["the food was bad .", "the film was good ."], "label": ["negative", "positive"]})
    aug = COREAugmenter(editor, retriever=enc, index=index, top_k=5)
    out = aug.augment(data)
    cfs = [r for r in out.to_list() if r["cf_is_counterfactual"]]
    assert [c["label"] for c in cfs] == ["positive", "negative"]
    assert aug.stats.produced == {"core": 2}
    import json

    edit = json.loads(cfs[0]["cf_edit"])
    assert edit["target"] == "positive" and len(edit["excerpts"]) == 2 and edit["keywords"]
    assert "Suggested words: [" in prompts[0] and prompts[0].rstrip().endswith("Rewritten review:")
    assert "Target sentiment: positive" in prompts[0]  # the target as meant (the reference code inverts it)


def test_core_counts_unusable_answers_and_ablations():
    enc, index = core_parts()
    data = Dataset.from_dict({"text": ["the food was bad .", "the film was bad .", "the room was bad ."],
                              "label": ["negative"] * 3})
    answers = iter(["", "the film was bad .", "the room was good ."])
    aug = COREAugmenter(lambda batch: [next(answers) for _ in batch], retriever=enc, index=index)
    aug.augment(data)
    assert aug.stats.skipped == {"llm_unchanged": 1, "llm_unparseable": 1} and aug.stats.produced == {"core": 1}
    retrieved = COREAugmenter(retriever=enc, index=index, mode="retrieval_only", keep_original=False).augment(data)
    assert list(retrieved["cf_kind"]) == ["cf-dpr"] * 3 and set(retrieved["text"]) <= set(corpus(60))
    edited = COREAugmenter(lambda b: ["a new text ." for _ in b], mode="editor_only", keep_original=False)
    assert list(edited.augment(data)["cf_kind"]) == ["llm-edit"] * 3


def test_core_bad_set_up():
    enc, index = core_parts()
    with pytest.raises(TypeError, match="needs an editor"):  # no editor ships for a generic text task
        COREAugmenter(schema=TaskSchema(text_columns=("text",), edit_columns=("text",), label_column="label",
                                        label_names=("a", "b"), task="text-classification"),
                      retriever=enc, index=index)
    with pytest.raises(TypeError, match="needs retriever="):
        COREAugmenter(lambda p: p, retriever=None, index=None)
    text_task = TaskSchema(text_columns=("text",), edit_columns=("text",), label_column="label",
                           label_names=("a", "b"), task="text-classification")
    with pytest.raises(TypeError, match=r"for task 'text': CORE ships them for \['sentiment', 'nli'\] only"):
        COREAugmenter(lambda p: p, text_task)
    with pytest.raises(SchemaError, match="edits one text column"):
        COREAugmenter(lambda p: p, TaskSchema.fact_verification(), mode="editor_only")
    with pytest.raises(ValueError, match="mode must be"):
        COREAugmenter(lambda p: p, mode="retrieve")
    with pytest.raises(SchemaError, match="label"):
        COREAugmenter(lambda p: p, mode="editor_only").augment(Dataset.from_dict({"text": ["a"], "label": ["meh"]}))


def test_targets_one_draws_a_single_seeded_label_for_multiclass():
    schema = TaskSchema(text_columns=("text",), edit_columns=("text",), label_column="label",
                        label_names=("sports", "politics", "science"), task="topic")
    data = Dataset.from_dict({"text": [f"text number {i}" for i in range(9)], "label": ["sports"] * 9})
    every = COREAugmenter(lambda b: ["new text" for _ in b], schema, mode="editor_only", keep_original=False)
    assert sorted(set(every.augment(data)["label"])) == ["politics", "science"]
    one = COREAugmenter(lambda b: ["new text" for _ in b], schema, mode="editor_only", keep_original=False,
                        targets="one")
    labels = list(one.augment(data)["label"])
    assert len(labels) == 9 and set(labels) <= {"politics", "science"}
    assert labels == list(one.augment(data, load_from_cache_file=False)["label"])


def test_reranker_reorders_excerpts_and_checker_filters():
    enc, index = core_parts()
    reranker = LabelChecker(*tiny_classifier(("other", "counterfactual")))
    aug = COREAugmenter(lambda b: ["the food was great ." for _ in b], retriever=enc, index=index, reranker=reranker,
                        top_k=6)
    hits = aug.retrieve(["the food was bad ."])[0]
    assert [h["rerank"] for h in hits] == sorted((h["rerank"] for h in hits), reverse=True)
    checker = LabelChecker(*tiny_classifier(("negative", "positive")))
    data = Dataset.from_dict({"text": ["the food was bad ."] * 2 + ["the film was good ."], "label": ["negative"] * 2
                              + ["positive"]})
    filtered = COREAugmenter(lambda b: ["the food was great ." for _ in b], retriever=enc, index=index,
                             checker=checker)
    filtered.augment(data)
    assert filtered.stats.counterfactuals + filtered.stats.events["filtered:label_flip"] == 3


def test_reranker_training_on_cf_dpr_triples():
    triples = Dataset.from_dict({"query": ["the food was good ."] * 4, "positive": ["the food was bad ."] * 4,
                                 "hard_negatives": [["the food was great ."]] * 4})
    rows = reranker_rows(triples)
    assert len(rows) == 8 and list(rows["label"]).count("counterfactual") == 4
    reranker = train_reranker(LabelChecker(*tiny_classifier(("other", "counterfactual"))), triples, max_steps=2,
                              training_args=QUIET)
    assert reranker.training_info["for_method"] == "core" and reranker.label_names == ("other", "counterfactual")


def test_local_generator_stops_at_stop_strings():
    gen = Generator(*tiny_causal_lm(), chat=True, do_sample=True, num_beams=1, max_new_tokens=12, stop=("the",))
    res = gen.generate_with_info(["the cat sat on the mat"] * 3, seeds=[0, 1, 2])
    for text in sum(res.texts, []):
        assert "the" not in text.split()
    free = Generator(*tiny_causal_lm(), chat=True, do_sample=True, num_beams=1, max_new_tokens=12, stop=())
    assert all(len(t.split()) >= 1 for t in sum(free.generate(["the cat"], seeds=[0]), []))
    with pytest.raises(ValueError, match="stop"):
        Generator(*tiny_causal_lm(), stop=("",))


def test_sentence_level_editing_edits_the_chosen_sentences_in_place():
    enc, index = core_parts()
    review = "The film was in Paris. The food was bad. The staff was terrible. The band played a song."
    data = Dataset.from_dict({"text": [review], "label": ["negative"]})
    scorer = lambda sentences, label: [s.count("bad") + s.count("terrible") for s in sentences]
    prompts = []

    def editor(batch):
        prompts.extend(batch)
        return ["The food was good." if "Review: The food" in p.split("\n\n")[-1] else "The staff was great."
                for p in batch]

    aug = COREAugmenter(editor, retriever=enc, index=index, edit_sentences=2, sentence_scorer=scorer,
                        keep_original=False)
    out = aug.augment(data)
    assert out[0]["text"] == "The film was in Paris. The food was good. The staff was great. The band played a song."
    import json

    edit = json.loads(out[0]["cf_edit"])
    assert [s["position"] for s in edit["sentences"]] == [1, 2] and len(prompts) == 2
    assert "Review: The food was bad." in prompts[0]
    with pytest.raises(TypeError, match="sentence_scorer"):
        COREAugmenter(editor, retriever=enc, index=index, edit_sentences=1)
    with pytest.raises(ValueError, match="NLI"):
        COREAugmenter(editor, TaskSchema.nli(), mode="editor_only", edit_sentences=1, sentence_scorer=scorer)


def test_nli_retrieval_never_returns_the_rows_own_premise():
    enc = shared_encoder()
    premise = "the king lived in london ."
    index = CorpusIndex.build(enc, [premise, "the king was born in paris .", "the queen lived in london ."])
    data = Dataset.from_dict({"premise": [premise], "hypothesis": ["the king lived in england ."],
                              "label": ["entailment"]})
    out = COREAugmenter(retriever=enc, index=index, schema=TaskSchema.nli(), mode="retrieval_only",
                        keep_original=False).augment(data)
    assert list(out["premise"]) == [premise] and premise not in list(out["hypothesis"])


def test_a_review_is_never_replaced_by_a_much_shorter_answer():
    """Reported: CORE with mode="editor_only" replaced a lower-case or long review by the editor's few words and
    recorded it as produced. The family: a few-word answer to a long review (any case), and a review longer than the
    editor's input (its tail must survive the edit). Both the prompted path and the trained-Editor path share the
    screen."""
    long_review = " ".join(["the plot was dull and the acting was flat"] * 3)
    data = Dataset.from_dict({"text": [long_review, long_review.upper(), "a dull film ."],
                              "label": ["negative"] * 3})
    aug = COREAugmenter(lambda b: ["great ." for _ in b], mode="editor_only", keep_original=False, checker=None)
    out = aug.augment(data)
    assert aug.stats.skipped == {"llm_too_short": 2} and out["text"] == ["great ."]
    tail = " the ending was the worst part of it ."
    head = "a dull film ." * 10

    def rewrite(prompts):  # the review the prompt ends with, made positive
        return [[line for line in p.splitlines() if line.startswith("Review: ")][-1][8:].replace("dull", "fine")
                for p in prompts]

    cut = COREAugmenter(rewrite, mode="editor_only", keep_original=False, checker=None,
                        max_input_chars=len(head) + 1)
    edited = cut.augment(Dataset.from_dict({"text": [head + tail], "label": ["negative"]}))
    assert cut.stats.by_prefix("truncated") == {"editor_input": 1}
    assert edited["text"][0].endswith(tail.strip()) and "fine" in edited["text"][0]
    assert json_of(edited["cf_edit"][0])["kept_unedited_chars"] >= len(tail) - 1


def json_of(text):
    import json

    return json.loads(text)


def test_a_missing_shipped_core_retriever_names_the_command_that_builds_it(tmp_path, monkeypatch):
    from cfaug_hf.methods.core import shipped

    monkeypatch.setattr(shipped, "CORE_DIR", tmp_path)
    shipped.shipped_retriever.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match=r"python -m scripts.build_core --task nli"):
            COREAugmenter(lambda p: p, TaskSchema.nli())
    finally:
        shipped.shipped_retriever.cache_clear()


@pytest.mark.integration
def test_core_runs_out_of_the_box_on_the_shipped_retriever_and_corpus(tmp_path, monkeypatch):
    """The NLI retriever and corpus ship: the index is built on the first search, kept in the cache, and read
    back (not built again) by the next process."""
    from cfaug_hf.methods.core import shipped

    monkeypatch.setenv("CFAUG_HF_CACHE", str(tmp_path))
    shipped.shipped_index.cache_clear()
    answers = []

    def editor(prompts):
        answers.extend(prompts)
        return ["A man is awake." for _ in prompts]

    aug = COREAugmenter(editor, TaskSchema.nli(), checker=None, keep_original=False)
    assert vars(aug)["_index"] == "default"  # not built yet: construction stays quick
    rows = Dataset.from_dict({"premise": ["A man sleeps on a bench in the park."], "hypothesis": ["A man is asleep."],
                              "label": ["entailment"]})
    out = aug.augment(rows)
    assert out["hypothesis"] == ["A man is awake."] and out["label"] == ["contradiction"]
    assert "A man is asleep." in answers[-1] and "no_retrieval" not in aug.stats.to_dict().get("skipped", {})
    built = list((tmp_path / "core-index").iterdir())
    assert len(built) == 1 and len(aug.index) > 3000
    shipped.shipped_index.cache_clear()
    monkeypatch.setattr(CorpusIndex, "build", lambda *a, **k: pytest.fail("built again"))
    assert len(shipped.shipped_index("nli")) == len(aug.index)
    shipped.shipped_index.cache_clear()
