"""Neutral hypotheses by addition (`cfaug_hf.text.additions`) and the candidates an NLI editor adds with them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cfaug_hf import Editor
from cfaug_hf.components.editor import EditorConfig
from cfaug_hf.testing import tiny_causal_lm
from cfaug_hf.text.additions import (ADJECTIVES, ANIMAL_ADJECTIVES, CIRCUMSTANCES, subject_kind,
                                     unverifiable_additions)

WORDS = st.sampled_from("a an the two some man woman dog is are playing runs bowling on stage happy tired the "
                        "street ball . ! A The Three".split())


def _added(original: str, output: str) -> list[str]:
    """The words of ``output`` that are not in ``original`` (an article may have changed to agree)."""
    before = [w for w in original.lower().replace(".", " ").replace("!", " ").split() if w not in ("a", "an")]
    after = [w for w in output.lower().replace(".", " ").replace("!", " ").split() if w not in ("a", "an")]
    for w in before:
        assert w in after, f"{original!r} -> {output!r} lost {w!r}"
        after.remove(w)
    return after


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, min_size=0, max_size=9).map(" ".join), st.lists(WORDS, max_size=6).map(" ".join),
       st.integers(0, 10 ** 6), st.integers(0, 8))
def test_additions_only_add_one_detail_the_premise_does_not_mention(hypothesis, premise, seed, n):
    out = unverifiable_additions(hypothesis, premise, seed=seed, n=n)
    assert len(out) <= n and len(set(out)) == len(out)
    assert out == unverifiable_additions(hypothesis, premise, seed=seed, n=n)  # seeded
    details = {" ".join(w for w in d.split() if w not in ("a", "an")): d for d in (*ADJECTIVES, *CIRCUMSTANCES)}
    mentioned = set(re.findall(r"[a-z]+", f"{premise} {hypothesis}".lower()))
    for text in out:
        added = " ".join(_added(hypothesis, text))
        assert added in details, (hypothesis, text)
        assert not (set(added.split()) - {"for", "the", "on", "after", "to", "before"}) & mentioned, (premise, text)


def test_articles_agree_and_circumstances_go_on_actions_only():
    assert unverifiable_additions("An officer is tall.", n=8) == [
        f"{'An' if a[0] in 'aeiou' else 'A'} {a} officer is tall." for a in _order("An officer is tall.", "")]
    assert all(c not in " ".join(unverifiable_additions("The cat is white.", n=8)) for c in CIRCUMSTANCES)
    acting = unverifiable_additions("A boy is bowling.", n=8)
    assert any(a.endswith(f"{c}.") for a in acting for c in CIRCUMSTANCES)
    assert unverifiable_additions("People sit.", n=4) == []  # no determiner to follow, no action to qualify
    assert unverifiable_additions("", n=4) == [] and unverifiable_additions("A man runs.", n=0) == []


def _order(hypothesis: str, premise: str) -> list[str]:
    return [re.findall(r"^\S+ (\S+)", a)[0] for a in unverifiable_additions(hypothesis, premise, n=8)]


def _editor(**kw):
    return Editor(*tiny_causal_lm(), num_return_sequences=2, max_new_tokens=4, task="nli", **kw)


def test_an_nli_editor_adds_them_to_neutral_edits_only():
    editor = _editor(neutral_additions=3)
    texts, premises = ["A man plays with a baby.", "A dog runs."], ["A man plays on a deck.", "A dog runs."]
    extra = editor.neutral_candidates(texts, ["neutral", "contradiction"], premises, seeds=[0, 1])
    assert 1 <= len(extra[0]) <= 3 and extra[1] == []
    assert any(e.endswith("man plays with a baby.") for e in extra[0])  # a detail on the hypothesis itself
    result = editor.edit_with_info(texts, ["neutral", "contradiction"], contexts=premises, seeds=[0, 1])
    assert result.texts[0][-len(extra[0]):] == extra[0]
    assert len(result.output_truncated[0]) == len(result.texts[0])
    plain = _editor(neutral_additions=0).edit_with_info(texts, ["neutral", "contradiction"], contexts=premises,
                                                         seeds=[0, 1])
    assert result.texts[0][:len(plain.texts[0])] == plain.texts[0] and result.texts[1] == plain.texts[1]


def test_no_additions_without_premises_or_for_other_tasks():
    assert _editor().neutral_candidates(["A man runs."], ["neutral"], None, seeds=[0]) == [[]]
    other = Editor(*tiny_causal_lm(), num_return_sequences=2, max_new_tokens=4, task="sentiment")
    assert other.neutral_candidates(["A man runs."], ["neutral"], ["A man runs fast."], seeds=[0]) == [[]]


def test_neutral_additions_is_checked_and_saved(tmp_path):
    with pytest.raises(ValueError, match="neutral_additions must be >= 0, got -1"):
        EditorConfig(neutral_additions=-1)
    editor = _editor(neutral_additions=2)
    editor.save_pretrained(tmp_path / "ed")
    assert Editor.from_pretrained(tmp_path / "ed").config.neutral_additions == 2
    assert _editor(neutral_additions=2).fingerprint() != _editor(neutral_additions=3).fingerprint()


@pytest.mark.parametrize("hypothesis", ["", "   ", ".", "A", "a", "Two", "A .", "The ...", "Three !"])
def test_nothing_is_added_where_there_is_nothing_to_qualify(hypothesis):
    assert unverifiable_additions(hypothesis, "A man runs.", n=4) == []


def test_additions_are_one_line_and_keep_an_all_capitals_article():
    for text in unverifiable_additions("A man is running\n fast.", n=4):
        assert "\n" not in text and "  " not in text
    assert all(t.split()[0] in ("AN", "A") for t in unverifiable_additions("AN ELEPHANT IS WALKING", n=4)
               if t.split()[1] in ADJECTIVES)


@pytest.mark.parametrize("sentence, kind", [
    ("A man in a blue shirt", "person"), ("Two women are talking", "person"), ("The children play", "person"),
    ("A group of people", "person"), ("An old fisherman sits", "person"), ("Three cyclists race", "person"),
    ("A street musician plays", "person"), ("Some soccer players", "person"), ("A little girl's dog", "person"),
    ("A bunch of guys", "person"), ("One of the children", "person"), ("Some of the dogs", "animal"),
    ("A piece of cake", None), ("A little white and brown dog runs", "animal"),
    ("Two track and field sprinters", "person"), ("A ball and a dog", None), ("A ball and two dogs", None),
    ("A brown dog runs", "animal"), ("Two puppies sleep", "animal"), ("The horses are", "animal"),
    ("The room is well-lit", None), ("A black and white striped ramp is", None), ("A red car in the street", None),
    ("The water is cold", None), ("A sweater on a chair", None), ("A ball near a man", None), ("", None), ("A", None),
])
def test_subject_kind_reads_the_noun_phrase_after_the_determiner(sentence, kind):
    assert subject_kind(sentence.split()) == kind


@pytest.mark.parametrize("hypothesis", ["The room is well-lit.", "A black and white striped ramp is a skateboard.",
                                        "The water is cold.", "A red car is parked.", "The ball near a man is red."])
def test_no_state_of_mind_is_given_to_a_thing(hypothesis):
    out = unverifiable_additions(hypothesis, n=8)
    assert not any(a in text.lower().split() for text in out for a in ADJECTIVES), out


def test_an_animal_gets_only_the_adjectives_that_fit_an_animal():
    assert ANIMAL_ADJECTIVES < set(ADJECTIVES)
    added = {t.split()[1] for t in unverifiable_additions("A dog sits.", n=24)}
    assert added and added <= ANIMAL_ADJECTIVES
    assert {t.split()[1] for t in unverifiable_additions("A man sits.", n=24)} - ANIMAL_ADJECTIVES
