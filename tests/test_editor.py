"""The counterfactual Editor: its input format, pairs from human counterfactuals, training, saving, and its use as
CORE's editor (tiny in-process models; the shipped editors' quality is measured by scripts/build_editors.py)."""

from __future__ import annotations

import json

import pytest
from datasets import Dataset
from hypothesis import given, settings
from hypothesis import strategies as st

from cfaug_hf import BiEncoder, COREAugmenter, CorpusIndex, Editor, EditorConfig, Generator, TaskSchema
from cfaug_hf.components.editor import candidates, edit_input, resolve_editor
from cfaug_hf.generation import GenerationResult
from cfaug_hf.testing import tiny_causal_lm, tiny_classifier, tiny_encoder, tiny_seq2seq
from cfaug_hf.training import edit_pairs, train_editor
from cfaug_hf.training.editor import changed_sentences

QUIET = {"disable_tqdm": True, "logging_strategy": "no"}
field_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


# ------------------------------------------------------------------------------------------------- input format
@settings(max_examples=60, deadline=None)
@given(text=field_text, target=field_text, context=st.none() | field_text,
       words=st.none() | st.lists(field_text, max_size=3))
def test_edit_input_keeps_one_field_per_line_whatever_the_text(text, target, context, words):
    prompt = edit_input(text, target, context=context, keywords=words)
    lines = prompt.split("\n")
    assert lines[0].startswith("Target:") and lines[-1] == "Rewrite:" and lines[-2].startswith("Text:")
    # Every field is one line: newlines inside a text never reach the model as a new field.
    expected = 3 + bool(context and context.split()) + bool(words)
    assert len(lines) == expected or (context is not None and not context.split())


def test_candidates_drop_empty_duplicates_and_the_input():
    assert candidates("A dull film.", [" a dull  film.", "", "A fine film.", "a fine film.", "Great."]) == \
        ["A fine film.", "Great."]


# ------------------------------------------------------------------------------------------------------ pairs
def test_changed_sentences_align_around_an_inserted_sentence():
    old = "I went. It was dull. The cast was weak. The end."
    new = "I went. Honestly. It was gripping. The cast was strong. The end."
    got = changed_sentences(old, new)
    # The inserted "Honestly." has no counterpart: it is not paired with "It was dull." and shifts nothing.
    assert ("It was dull.", "It was gripping.") in [(a, b) for a, b, _ in got]
    assert ("The cast was weak.", "The cast was strong.") in [(a, b) for a, b, _ in got]
    assert all(a != "I went." for a, _, _ in got)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 8), changed=st.sets(st.integers(0, 7)))
def test_changed_sentences_finds_exactly_the_replaced_sentences(n, changed):
    changed = {i for i in changed if i < n}
    old = [f"Sentence number {i} is plain." for i in range(n)]
    new = [f"Sentence number {i} is changed now." if i in changed else s for i, s in enumerate(old)]
    got = changed_sentences(" ".join(old), " ".join(new), neighbours=1)
    assert sorted(a for a, _, _ in got) == sorted(old[i] for i in changed)
    for a, b, ctx in got:
        i = old.index(a)
        assert b == new[i] and (ctx is None) == (n == 1) and (ctx is None or "[edit]" in ctx)


def test_edit_pairs_by_text_and_by_sentence_and_bad_rows():
    rows = Dataset.from_dict({"text": ["It was dull. The end.", "Same."], "counterfactual":
                              ["It was gripping. The end.", "Same."], "target": ["positive", "negative"],
                              "premise": ["p1", "p2"]})
    by_text = edit_pairs(rows, context_column="premise")
    assert by_text["text"] == ["It was dull. The end."] and by_text["context"] == ["p1"]  # unchanged row dropped
    by_sentence = edit_pairs(rows, level="sentence", min_words=1)
    assert by_sentence["text"] == ["It was dull."] and by_sentence["context"] == ["[edit] The end."]
    bad = Dataset.from_dict({"text": ["ok", "fine"], "counterfactual": ["yes", ""], "target": ["a", "b"]})
    with pytest.raises(ValueError, match=r"row 1, column 'counterfactual'"):
        edit_pairs(bad)
    with pytest.raises(ValueError, match="missing"):
        edit_pairs(rows.remove_columns("target"))
    with pytest.raises(ValueError, match="level"):
        edit_pairs(rows, level="word")


# --------------------------------------------------------------------------------------------------- training
def test_train_editor_learns_a_rewrite_and_round_trips(tmp_path):
    pairs = Dataset.from_dict({"text": ["the food was bad ."] * 8, "target": ["positive"] * 8,
                               "counterfactual": ["the food was good ."] * 8})
    editor = Editor(*tiny_causal_lm(), num_return_sequences=1, do_sample=False, num_beams=1, max_new_tokens=8)
    editor = train_editor(editor, pairs, lora=False, max_steps=40, learning_rate=5e-3, batch_size=4,
                          keyword_rate=0.0, task="sentiment", training_args=QUIET)
    assert editor.edit(["the food was bad ."], ["positive"]) == [["the food was good ."]]
    assert editor.training_info["edits"] == "sentiment" and editor.config.task == "sentiment"
    editor.save_pretrained(tmp_path / "ed")
    assert json.loads((tmp_path / "ed" / "cfaug_editor.json").read_text())["component_type"] == "editor"
    loaded = Editor.from_pretrained(tmp_path / "ed")
    assert isinstance(loaded.config, EditorConfig) and loaded.fingerprint() == editor.fingerprint()
    assert loaded.edit(["the food was bad ."], ["positive"]) == [["the food was good ."]]
    assert resolve_editor(str(tmp_path / "ed"), "sentiment", "test").fingerprint() == editor.fingerprint()
    from cfaug_hf.sharing.folders import ComponentLoadError

    with pytest.raises(ComponentLoadError, match="not a saved Generator.*It holds a saved editor"):
        Generator.from_pretrained(tmp_path / "ed")


def test_train_editor_keyword_hints_and_bad_arguments(monkeypatch):
    pairs = Dataset.from_dict({"text": ["the food was bad ."] * 4, "target": ["positive"] * 4,
                               "counterfactual": ["the food was good and clean ."] * 4})
    seen = []
    editor = Editor(*tiny_causal_lm())
    import cfaug_hf.training.editor as module

    real = module.train_generator

    def spy(gen, data, **kwargs):
        seen.extend(data["source"])
        return real(gen, data, **kwargs)

    monkeypatch.setattr(module, "train_generator", spy)
    train_editor(editor, pairs, lora=False, max_steps=1, keyword_rate=1.0, distractors=0, training_args=QUIET)
    # Every row shows the words the human edit added, never words of the original text.
    assert all("Keywords:" in s and "good" in s and "clean" in s for s in seen)
    with pytest.raises(ValueError, match="keyword_rate"):
        train_editor(Editor(*tiny_causal_lm()), pairs, keyword_rate=2.0)
    with pytest.raises(ValueError, match="causal"):
        train_editor(Editor(*tiny_seq2seq()), pairs)
    with pytest.raises(TypeError, match="needs an Editor"):
        train_editor(Generator(*tiny_causal_lm()), pairs)
    with pytest.raises(TypeError, match="EditorConfig"):
        Editor(*tiny_causal_lm(), config=object())
    with pytest.raises(ValueError, match="Editor.edit got 2 targets for 1 texts"):
        editor.edit(["a"], ["b", "c"])
    with pytest.raises(ValueError, match="no editor ships"):
        resolve_editor("default", "ner", "test")


def test_edits_are_reproducible_per_row_whatever_the_batch():
    editor = Editor(*tiny_causal_lm(), num_return_sequences=2, max_new_tokens=5)
    both = editor.edit(["the food was bad .", "a dull film"], ["positive", "positive"], seeds=[3, 4])
    alone = editor.edit(["a dull film"], ["positive"], seeds=[4])
    assert both[1] == alone[0]


# ------------------------------------------------------------------------------------------------ CORE + Editor
class ScriptedEditor(Editor):
    """An Editor whose candidates are scripted per text, recording what it was asked."""

    def __init__(self, script):
        super().__init__(*tiny_causal_lm())
        self.script, self.calls = script, []

    def edit_with_info(self, texts, targets, *, contexts=None, keywords=None, seeds=None):
        self.calls.append({"texts": list(texts), "targets": list(targets), "contexts": list(contexts or []),
                           "keywords": list(keywords or [])})
        outs = [list(self.script.get(t, [t])) for t in texts]
        return GenerationResult(outs, [False] * len(texts), [[False] * len(o) for o in outs])


def test_core_with_an_editor_passes_context_and_keywords_and_lets_the_checker_choose():
    model, tok = tiny_encoder()
    enc = BiEncoder(model, model, tok)
    index = CorpusIndex.build(enc, ["the food was good .", "the staff was great .", "the room was clean ."])
    review = "The film was in Paris. The food was bad. The band played a song."
    editor = ScriptedEditor({"The food was bad.": ["The food was bad.", "The food was awful.", "The food was good."]})

    class Checker:
        """Labels a text positive when it says good (a stand-in for the flip checker's probabilities)."""
        label_names = ("negative", "positive")

        def label_id(self, label):
            return self.label_names.index(label)

        def predict_proba(self, texts, pairs=None):
            import numpy as np

            return np.array([[0.1, 0.9] if "good" in t else [0.8, 0.2] for t in texts])

    aug = COREAugmenter(editor, retriever=enc, index=index, checker=None, edit_sentences=1,
                        sentence_scorer=lambda s, label: [x.count("bad") for x in s], keep_original=False)
    aug.checker = Checker()  # scoring only: the filter stack keeps its default (none)
    out = aug.augment(Dataset.from_dict({"text": [review], "label": ["negative"]}))
    assert out[0]["text"] == "The film was in Paris. The food was good. The band played a song."
    call = editor.calls[0]
    assert call["contexts"] == ["The film was in Paris. [edit] The band played a song."]
    assert call["keywords"][0] and all(w not in ("food", "was") for w in call["keywords"][0])
    edit = json.loads(out[0]["cf_edit"])["sentences"][0]
    assert edit["candidates"] == 2 and edit["checker_prob"] == 0.9 and edit["editor"] == editor.fingerprint()[:16]


def test_core_nli_with_an_editor_reads_the_premise_and_counts_unchanged():
    editor = ScriptedEditor({"a man sleeps .": ["a man runs ."]})
    aug = COREAugmenter(editor, TaskSchema.nli(), mode="editor_only", checker=None, keep_original=False)
    data = Dataset.from_dict({"premise": ["a man runs in the park .", "two dogs play ."],
                              "hypothesis": ["a man sleeps .", "dogs play ."],
                              "label": ["contradiction", "entailment"]})
    out = aug.augment(data)
    assert out["hypothesis"] == ["a man runs ."] and out["label"] == ["entailment"]
    assert editor.calls[0]["contexts"] == ["a man runs in the park .", "two dogs play ."]
    assert aug.stats.to_dict()["skipped"].get("llm_unchanged") == 1


def test_core_with_a_trained_tiny_editor_runs_end_to_end(tmp_path):
    from cfaug_hf import LabelChecker

    checker = LabelChecker(*tiny_classifier(("negative", "positive")))
    editor = Editor(*tiny_causal_lm(), num_return_sequences=2, max_new_tokens=6)
    aug = COREAugmenter(editor, mode="editor_only", checker=checker, keep_original=False)
    data = Dataset.from_dict({"text": ["the food was bad .", "the staff was great ."],
                              "label": ["negative", "positive"]})
    aug.augment(data)
    assert sum(aug.stats.to_dict()["skipped"].values()) + aug.stats.to_dict().get("produced", {}).get(
        "llm-edit", 0) >= 2
    aug.save_pretrained(tmp_path / "aug")
    from cfaug_hf import Augmenter

    again = Augmenter.from_pretrained(tmp_path / "aug")
    assert isinstance(again.editor, Editor) and again.editor.fingerprint() == editor.fingerprint()


def test_llm_augmenter_with_an_editor_rewrites_sentiment_and_nli():
    from cfaug_hf import LLMCounterfactualAugmenter

    editor = ScriptedEditor({"the food was bad .": ["the food was bad .", "the food was good ."],
                             "a man sleeps .": ["a man runs .", "a man is awake ."]})
    aug = LLMCounterfactualAugmenter(editor, checker=None, keep_original=False)
    out = aug.augment(Dataset.from_dict({"text": ["the food was bad .", "no change here ."],
                                         "label": ["negative", "negative"]}))
    assert out["text"] == ["the food was good ."] and out["label"] == ["positive"]
    assert json.loads(out[0]["cf_edit"])["editor"] == editor.fingerprint()[:16]
    assert aug.stats.to_dict()["skipped"] == {"llm_unchanged": 1}
    nli = LLMCounterfactualAugmenter(editor, TaskSchema.nli(), checker=None, keep_original=False,
                                     constraints=False)
    out = nli.augment(Dataset.from_dict({"premise": ["a man runs in the park ."], "hypothesis": ["a man sleeps ."],
                                         "label": ["contradiction"]}))
    # One edit per target label, each given the premise as its context.
    assert sorted(out["label"]) == ["entailment", "neutral"] and len(editor.calls[-1]["texts"]) == 2
    assert editor.calls[-1]["contexts"] == ["a man runs in the park ."] * 2
    with pytest.raises(TypeError, match="NER"):
        LLMCounterfactualAugmenter(editor, TaskSchema.token_classification(tag_names=("O", "B-PER", "I-PER")))


def test_llm_augmenter_edits_nli_premises_with_a_premise_editor_the_hypothesis_as_context(tmp_path):
    """CAD-SNLI's annotators also revised premises (the hypothesis kept): edit_side='premise' gives a premise
    editor the hypothesis as its context, the checker reads (candidate premise, hypothesis), and the constraint
    filter keeps the hypothesis as it was."""
    import numpy as np

    from cfaug_hf import LLMCounterfactualAugmenter

    editor = ScriptedEditor({"a man runs in the park .": ["a man runs in the park .", "a man sleeps in the park .",
                                                           "a man runs in the park at noon ."]})
    editor.config.task = "nli-premise"
    seen = []

    class Checker:
        label_names = ("entailment", "neutral", "contradiction")

        def label_id(self, label):
            return self.label_names.index(label)

        def predict_proba(self, texts, pairs=None):
            seen.extend(zip(texts, pairs))
            return np.array([[0.1, 0.1, 0.8] if "sleeps" in t else [0.1, 0.8, 0.1] if "noon" in t else
                             [0.8, 0.1, 0.1] for t in texts])

    aug = LLMCounterfactualAugmenter(editor, TaskSchema.nli(), checker=None, keep_original=False,
                                     edit_side="premise", targets="all")
    aug.checker = Checker()  # ranking only; the filters are the constraint check
    data = Dataset.from_dict({"premise": ["a man runs in the park ."], "hypothesis": ["a man is moving ."],
                              "label": ["entailment"]})
    out = aug.augment(data)
    assert editor.calls[-1]["texts"] == ["a man runs in the park ."] * 2
    assert editor.calls[-1]["contexts"] == ["a man is moving ."] * 2
    assert set(seen) >= {("a man sleeps in the park .", "a man is moving .")}
    by_label = dict(zip(out["label"], out["premise"]))
    assert by_label == {"contradiction": "a man sleeps in the park .", "neutral": "a man runs in the park at noon ."}
    assert set(out["hypothesis"]) == {"a man is moving ."}
    # saved and loaded, it edits the same side, and its constraint filter keeps the hypothesis
    from cfaug_hf import Augmenter
    from cfaug_hf.filters import NLIConstraintFilter

    aug.checker = None
    aug.save_pretrained(tmp_path / "aug")
    again = Augmenter.from_pretrained(tmp_path / "aug")
    assert again.config.edit_side == "premise" and again.edit_column == "premise"
    assert [f.side for f in again.filters if isinstance(f, NLIConstraintFilter)] == ["premise"]


@pytest.mark.parametrize("setup,why", [
    ({"task": "nli"}, "an editor of 'nli'"),  # the shipped hypothesis editor
    ({"task": "nli-premise", "schema": "sentiment"}, "task 'sentiment'"),
    ({"task": "nli-premise", "until_flipped": True}, "until_flipped"),
])
def test_edit_side_premise_refuses_what_cannot_edit_premises(setup, why):
    from cfaug_hf import LLMCounterfactualAugmenter

    editor = ScriptedEditor({})
    editor.config.task = setup["task"]
    schema = TaskSchema.sentiment() if setup.get("schema") == "sentiment" else TaskSchema.nli()
    with pytest.raises(ValueError, match=f"edit_side='premise'.*{why}"):
        LLMCounterfactualAugmenter(editor, schema, checker=None, edit_side="premise",
                                   until_flipped=setup.get("until_flipped", False))
    with pytest.raises(ValueError, match="edit_side must be"):
        LLMCounterfactualAugmenter(editor, TaskSchema.nli(), checker=None, edit_side="both")


def test_amplify_trains_on_the_annotated_rows_and_writes_for_the_others():
    from cfaug_hf.amplify import amplify

    data = Dataset.from_dict({"text": ["It was dull. The end.", "It was fine.", "A bad plot.", "Great cast."],
                              "label": ["negative", "positive", "negative", "positive"],
                              "counterfactual": ["It was gripping. The end.", None, "", None]})
    editor = ScriptedEditor({"It was fine.": ["It was awful."], "A bad plot.": ["A fine plot."]})
    out, report = amplify(data, editor=editor, checker=None, train_options={"max_steps": 0})  # no checker: whole texts
    assert report.annotated_rows == 1 and report.training_pairs == 1 and report.rows_edited == 3
    kinds = list(zip(out["cf_kind"], out["text"], out["label"]))
    assert kinds[:4] == [("original", t, lab) for t, lab in zip(data["text"], data["label"])]
    assert ("human", "It was gripping. The end.", "positive") in kinds
    assert ("llm-edit", "It was awful.", "negative") in kinds and ("llm-edit", "A fine plot.", "positive") in kinds
    assert report.editor_counterfactuals == 2 and "counterfactual" not in out.column_names
    human = out.filter(lambda k: k == "human", input_columns="cf_kind")[0]
    assert human["cf_method"] == "human" and human["cf_original_label"] == "negative"
    assert human["cf_source_id"] == out[0]["cf_source_id"]
    lines = report.summary_lines()
    assert lines[0].startswith("annotated rows: 1")


def test_amplify_cross_fitting_gives_every_row_a_counterfactual_from_an_editor_that_never_saw_its_pair(
        monkeypatch):
    import cfaug_hf.training
    from cfaug_hf.amplify import amplify

    texts = [f"It was dull {i}." if i % 2 else f"It was fine {i}." for i in range(12)]
    flip = {t: [t.replace("dull", "fine") if "dull" in t else t.replace("fine", "dull")] for t in texts}
    data = Dataset.from_dict({"text": texts, "label": ["negative" if i % 2 else "positive" for i in range(12)],
                              "counterfactual": [flip[t][0] if i < 8 else None for i, t in enumerate(texts)]})
    seen, editors = [], []  # the human pairs each fold's editor learned from; the editors

    def fake_train(editor, pairs, **_):
        seen.append(set(pairs["text"]))
        editors.append(ScriptedEditor(flip))
        return editors[-1]

    monkeypatch.setattr(cfaug_hf.training, "train_editor", fake_train)
    out, report = amplify(data, editor=ScriptedEditor({}), checker=None, folds=4, include_human=False)
    assert len(report.folds) == 4 and len(editors) == 4 and report.rows_edited == 12
    assert all(f["training_rows"] == 6 for f in report.folds)  # 8 annotated rows, 2 per fold: the others' 6
    asked = [{t for call in e.calls for t in call["texts"]} for e in editors]
    assert set().union(*asked) == set(texts)  # every row, annotated or not, is edited once
    assert all(asked[k].isdisjoint(seen[k]) for k in range(4))  # by an editor that never saw its human pair
    assert sorted(out.filter(lambda k: k == "llm-edit", input_columns="cf_kind")["text"]) == \
        sorted(flip[t][0] for t in texts)
    assert "human" not in out["cf_kind"] and report.human_counterfactuals == 0
    assert "fold 0: editor trained on 6 annotated rows" in "\n".join(report.summary_lines())
    with pytest.raises(ValueError, match="folds must be an integer of at least 2"):
        amplify(data, editor=ScriptedEditor({}), checker=None, folds=1)
    one = data.map(lambda r, i: {"counterfactual": r["counterfactual"] if i == 0 else None}, with_indices=True)
    with pytest.raises(Exception, match="leaves fold 0's editor no annotated row"):
        amplify(one, editor=ScriptedEditor({}), checker=None, folds=2)


def test_amplify_refuses_bad_input_with_the_row_and_column():
    from cfaug_hf.amplify import amplify

    editor = ScriptedEditor({})
    base = {"text": ["a", "b"], "label": ["negative", "positive"]}
    with pytest.raises(Exception, match="column 'counterfactual' is missing"):
        amplify(Dataset.from_dict(base), editor=editor, checker=None)
    with pytest.raises(Exception, match="no row has a human counterfactual"):
        amplify(Dataset.from_dict({**base, "counterfactual": [None, ""]}), editor=editor, checker=None)
    with pytest.raises(Exception, match="row 1, column 'counterfactual': expected a string"):
        amplify(Dataset.from_dict({**base, "counterfactual": [None, 3]}), editor=editor, checker=None)
    nli = Dataset.from_dict({"premise": ["p"], "hypothesis": ["h"], "label": ["neutral"], "counterfactual": ["x"]})
    with pytest.raises(Exception, match="target_column"):
        amplify(nli, TaskSchema.nli(), editor=editor, checker=None)
    nli = nli.add_column("target", ["neutral"])
    with pytest.raises(Exception, match="row 0: the counterfactual's label 'neutral' equals"):
        amplify(nli, TaskSchema.nli(), target_column="target", editor=editor, checker=None)


def test_cfaug_amplify_command(tmp_path, capsys):
    from cfaug_hf.cli import main

    Editor(*tiny_causal_lm(), max_new_tokens=4, num_return_sequences=1).save_pretrained(tmp_path / "editor")
    rows = [{"text": "the food was bad .", "label": "negative", "counterfactual": "the food was good ."},
            {"text": "the staff was great .", "label": "positive", "counterfactual": None},
            {"text": "the room was dirty .", "label": "negative", "counterfactual": None}]
    (tmp_path / "data.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    code = main(["amplify", str(tmp_path / "data.jsonl"), "--out", str(tmp_path / "out"), "--editor",
                 str(tmp_path / "editor"), "--max-steps", "0", "--no-checker", "--edit-sentences", "0"])
    assert code == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["annotated_rows"] == 1 and report["rows_edited"] == 2
    from datasets import load_from_disk

    out = load_from_disk(str(tmp_path / "out" / "data"))
    assert out["cf_kind"][:3] == ["original"] * 3 and "human" in out["cf_kind"]
    assert "annotated rows: 1" in capsys.readouterr().out
    assert main(["amplify", str(tmp_path / "data.jsonl"), "--out", str(tmp_path / "x"), "--task", "nli",
                 "--no-checker"]) != 0  # no premise/hypothesis columns: a clear error, not a traceback
    rows[1]["counterfactual"] = "the staff was rude ."
    (tmp_path / "data.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert main(["amplify", str(tmp_path / "data.jsonl"), "--out", str(tmp_path / "cross"), "--editor",
                 str(tmp_path / "editor"), "--max-steps", "0", "--no-checker", "--edit-sentences", "0",
                 "--folds", "2", "--no-human"]) == 0
    report = json.loads((tmp_path / "cross" / "report.json").read_text())
    assert [f["rows_edited"] for f in report["folds"]] in ([2, 1], [1, 2]) and report["rows_edited"] == 3
    assert "human" not in load_from_disk(str(tmp_path / "cross" / "data"))["cf_kind"]
    assert main(["amplify", str(tmp_path / "data.jsonl"), "--out", str(tmp_path / "y"), "--folds", "1",
                 "--no-checker"]) == 2  # one fold is no cross-fitting: a one-line error


def test_sharing_weights_copies_settings_not_the_model():
    editor = Editor(*tiny_causal_lm(), num_return_sequences=2)
    editor.stats["input_truncated"] = 3
    twin = editor.sharing_weights()
    twin.config.num_return_sequences = 1
    assert editor.config.num_return_sequences == 2 and twin.model is editor.model and not twin.stats
    assert twin.fingerprint() != editor.fingerprint()  # the settings are part of the fingerprint


def test_a_twin_of_a_merged_lora_editor_keeps_the_fingerprint():
    from cfaug_hf.training.common import with_lora

    editor = Editor(*tiny_causal_lm(), num_return_sequences=1, max_new_tokens=3)
    editor.model = with_lora(editor.model, True, "CAUSAL_LM")
    before = editor.fingerprint()
    editor.edit(["a b c"], ["positive"])  # generation merges the adapter into the base
    assert editor._lora_layers()[0].merged and editor.fingerprint() == before
    twin = editor.sharing_weights()
    assert twin.fingerprint() == before  # the weights were hashed before the merge; the twin knows
    twin.config.num_return_sequences = 2
    assert twin.fingerprint() != before and editor.fingerprint() == before


def test_training_a_saved_lora_editor_goes_on_with_its_own_adapter(tmp_path):
    # the path of scripts/distill_editor.py: a saved editor (adapter loaded frozen) fine-tuned further
    import torch
    from peft import LoraConfig

    pairs = Dataset.from_dict({"text": ["the food was bad ."] * 8, "target": ["positive"] * 8,
                               "counterfactual": ["the food was good ."] * 8})
    model, tok = tiny_causal_lm()
    model.save_pretrained(tmp_path / "base")
    tok.save_pretrained(tmp_path / "base")
    editor = Editor.from_base(str(tmp_path / "base"), num_return_sequences=1, do_sample=False, max_new_tokens=8)
    editor = train_editor(editor, pairs, max_steps=1, keyword_rate=0.0, training_args=QUIET)
    editor.save_pretrained(tmp_path / "ed")
    assert (tmp_path / "ed" / "adapter_model.safetensors").is_file()
    loaded = Editor.from_pretrained(tmp_path / "ed")
    named = dict(loaded.model.named_parameters())
    before = {n: p.detach().clone() for n, p in named.items()}
    loaded = train_editor(loaded, pairs, max_steps=3, learning_rate=5e-2, keyword_rate=0.0, training_args=QUIET)
    after = dict(loaded.model.named_parameters())
    moved = {n for n in before if not torch.equal(before[n], after[n].detach())}
    assert moved and all("lora_" in n for n in moved)  # the adapter learned, the base did not
    assert loaded.training_info["lora"]["r"] == 16 and len(loaded._lora_layers()) == len(editor._lora_layers())
    with pytest.raises(ValueError, match="already carries a LoRA adapter.*Generator.from_base"):
        train_editor(loaded, pairs, lora=LoraConfig(r=4), max_steps=1, training_args=QUIET)


def test_a_stricter_checker_threshold_keeps_the_looser_runs_rows_that_score_above_it():
    """The benchmark's strict premise rows filter an archived run by each row's recorded label-flip score instead
    of regenerating: equal to a run with checker_threshold, because candidates are tried best score first."""
    import json
    import zlib

    import numpy as np

    from cfaug_hf import LLMCounterfactualAugmenter

    premises = [f"a man runs in park {i} ." for i in range(12)]
    editor = ScriptedEditor({p: [p.replace("runs", w) for w in ("sleeps", "walks", "sits", "eats")] for p in premises})
    editor.config.task = "nli-premise"

    class Checker:
        label_names = ("entailment", "neutral", "contradiction")

        class config:
            accept_threshold = 0.3

        def label_id(self, label):
            return self.label_names.index(label)

        def predict_proba(self, texts, pairs=None):
            rows = [np.random.default_rng(zlib.crc32(t.encode())).dirichlet([0.6] * 3) for t in texts]
            return np.array(rows)

    data = Dataset.from_dict({"premise": premises, "hypothesis": ["a man is moving ."] * 12,
                              "label": ["entailment"] * 12})

    def run(threshold):
        aug = LLMCounterfactualAugmenter(editor, TaskSchema.nli(), checker=Checker(), keep_original=False,
                                         edit_side="premise", targets="all", checker_threshold=threshold)
        return aug.augment(data)

    loose = run(None)
    scores = [json.loads(e)["filter_scores"]["label_flip"] for e in loose["cf_edit"]]
    assert len(loose) >= 6 and min(scores) >= 0.3
    for threshold in (0.5, 0.7, 0.9):
        strict = run(threshold)
        kept = [i for i, s in enumerate(scores) if s >= threshold]
        assert strict["premise"] == [loose["premise"][i] for i in kept]
        assert strict["label"] == [loose["label"][i] for i in kept]
        assert 0 < len(kept) < len(loose) or threshold == 0.9
