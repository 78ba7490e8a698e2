"""The edit-until-flipped loop (cfaug_hf.methods.until_flipped) on its own and switched on in CORE and the LLM
method, with a keyword checker and rule editors, so each decision of the loop can be checked exactly."""

from __future__ import annotations

import json
import re

import pytest
from datasets import Dataset
from hypothesis import given, settings
from hypothesis import strategies as st

from cfaug_hf import COREAugmenter, LLMCounterfactualAugmenter, TaskSchema
from cfaug_hf.methods.until_flipped import WholeInputConfig, edit_until_flipped, input_units
from cfaug_hf.testing import keyword_checker

WORDS = {"negative": ["bad", "dull", "awful", "boring"], "positive": ["good", "great", "fine", "moving"]}
SWAP = {"bad": "good", "dull": "great", "awful": "fine", "boring": "moving"}


def flip_words(text: str) -> str:
    def swap(m):
        new = SWAP[m.group(1).lower()]
        return new.capitalize() if m.group(1)[0].isupper() else new

    return re.sub(r"\b(bad|dull|awful|boring)\b", swap, text, flags=re.IGNORECASE)


def rule_propose(requests):
    out = []
    for r in requests:
        new = flip_words(r.text)
        out.append((new, {"seen_context": r.context()}, None) if new != r.text else (None, {}, "llm_unchanged"))
    return out


def run(texts, labels, targets, **config):
    checker = keyword_checker(WORDS)
    return edit_until_flipped(texts, labels, targets, propose=rule_propose, checker=checker,
                              config=WholeInputConfig(**config)), checker


def test_stops_as_soon_as_the_whole_input_reads_as_the_target():
    out, _ = run(["A bad plot. Nice hats. A dull cast. Awful songs. Boring end."], ["negative"], ["positive"],
                 edits_per_round=1, flip_margin=0.1, residual=1.0)
    # keyword checker: one net positive word gives 0.88 >= 0.6 + 0.1; three edits get there
    o = out[0]
    assert o.text is not None and o.reason is None
    assert o.probability >= 0.7
    assert len(o.edits) == o.rounds  # one unit a round
    assert "Nice hats." in o.text  # a unit that does not carry the label is never edited
    assert all(e["old"] != "Nice hats." for e in o.edits)
    # not every label-carrying sentence had to be edited: minimal by construction
    assert len(o.edits) < 4


def test_no_unit_may_keep_the_old_verdict():
    # the whole input flips after 3 edits, but "Boring end." alone still reads negative (0.88 >= residual 0.8)
    out, _ = run(["A bad plot. Nice hats. A dull cast. Awful songs. Boring end."], ["negative"], ["positive"],
                 edits_per_round=1, flip_margin=0.1)
    assert out[0].text == "A good plot. Nice hats. A great cast. Fine songs. Moving end."
    assert len(out[0].edits) == 4


def test_an_edit_that_keeps_the_old_verdict_is_not_a_flip():
    def propose(requests):  # the edit of "A bad cast." still says "bad"
        return [(r.text.replace("cast.", "cast, truly."), {}, None) for r in requests]

    text = "A great plot. Great songs. A bad cast."  # labelled negative, so only the cast carries its label
    out = edit_until_flipped([text], ["negative"], ["positive"], propose=propose, checker=keyword_checker(WORDS),
                             config=WholeInputConfig())
    # the whole text reads positive (0.88), but the edited sentence alone still reads negative: named as left
    assert out[0].text is None and out[0].reason == "residual" and out[0].probability >= 0.7
    assert [(u["position"], u["text"]) for u in out[0].residual] == [(2, "A bad cast, truly.")]
    assert out[0].note("positive")["residual"][0]["probability"] >= 0.8
    out = edit_until_flipped([text], ["negative"], ["positive"], propose=propose, checker=keyword_checker(WORDS),
                             config=WholeInputConfig(residual=1.0))
    assert out[0].text == "A great plot. Great songs. A bad cast, truly."


def test_edits_strongest_units_first():
    # "Bad, dull, awful." carries the label most; it goes first
    out, _ = run(["A bad plot. Bad, dull, awful. Nice hats."], ["negative"], ["positive"], edits_per_round=1,
                 max_edits=1, flip_margin=0.0)
    assert [e["position"] for e in out[0].edits] == [1]


def test_budget_spent_gives_no_counterfactual_and_its_own_reason():
    out, _ = run(["A bad plot. A dull cast. Awful songs. Boring end."], ["negative"], ["positive"],
                 edits_per_round=1, max_edits=1)
    assert out[0].text is None and out[0].reason == "not_flipped"
    assert len(out[0].edits) == 1


def flip_first_word(text):
    """The first negative word flipped, the others left: an edit that may leave the unit's old verdict."""
    m = re.search(r"\b(bad|dull|awful|boring)\b", text, re.IGNORECASE)
    return text[:m.start()] + flip_words(m.group(0)) + text[m.end():] if m else None


def first_word_propose(requests):
    return [(new, {}, None) if (new := flip_first_word(r.text)) else (None, {}, "llm_unchanged") for r in requests]


def test_a_unit_still_carrying_the_old_verdict_is_edited_again_with_retries():
    text = "A bad, dull, awful cast. Great songs. Great hats."
    kw = dict(propose=first_word_propose, checker=keyword_checker(WORDS))
    once = edit_until_flipped([text], ["negative"], ["positive"], config=WholeInputConfig(), **kw)[0]
    # one edit leaves "good, dull, awful": the whole reads positive, the unit alone still negative (0.88)
    assert once.text is None and once.reason == "residual" and [u["position"] for u in once.residual] == [0]
    again = edit_until_flipped([text], ["negative"], ["positive"], config=WholeInputConfig(retries=1), **kw)[0]
    assert again.text == "A good, great, awful cast. Great songs. Great hats." and again.reason is None
    assert [(e["old"], e["new"]) for e in again.edits] == [
        ("A bad, dull, awful cast.", "A good, dull, awful cast."), ("A good, dull, awful cast.",
                                                                    "A good, great, awful cast.")]


def test_no_cap_edits_every_unit_that_carries_the_label():
    text = " ".join(["A bad plot."] * 8)
    capped, _ = run([text], ["negative"], ["positive"], residual=0.5)
    assert capped[0].text is None and len(capped[0].edits) == 6
    free, _ = run([text], ["negative"], ["positive"], residual=0.5, max_edits=0)
    assert free[0].text == " ".join(["A good plot."] * 8) and len(free[0].edits) == 8


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["bad", "dull", "good", "great", "hats", "red"]), min_size=1, max_size=4),
                min_size=1, max_size=7),
       st.sampled_from([0.5, 0.8, 1.0]), st.integers(0, 2), st.integers(0, 5), st.integers(1, 3))
def test_what_the_loop_keeps_or_skips_holds_for_any_input(sentences, residual, retries, max_edits, per_round):
    """Kept: the whole input reaches the bar and no unit alone gives the old label at the residual; skipped with
    ``residual``: the whole input reaches it and the units named are exactly those that do; never past the budget."""
    from cfaug_hf.filters.flip_check import FlipCheck

    text = " ".join(" ".join(words).capitalize() + "." for words in sentences)
    checker = keyword_checker(WORDS)
    config = WholeInputConfig(residual=residual, retries=retries, max_edits=max_edits, edits_per_round=per_round)
    out = edit_until_flipped([text], ["negative"], ["positive"], propose=first_word_propose, checker=checker,
                             config=config)[0]
    check = FlipCheck(checker, margin=config.flip_margin, residual=residual)
    carrying = len([u for u in input_units(text) if checker.predict_proba([u])[0][checker.label_id("negative")] > 0.5])
    assert len(out.edits) <= (max_edits or carrying * (1 + retries))
    final = out.text if out.text is not None else None
    if final is not None:
        units = input_units(final)
        alone = [float(checker.predict_proba([u])[0][checker.label_id("negative")]) for u in units]
        p = float(checker.predict_proba([final])[0][checker.label_id("positive")])
        assert check.flipped(p, alone) and out.reason is None and not out.residual
    elif out.reason == "residual":
        assert out.probability >= check.need and out.residual
        for unit in out.residual:
            p = checker.predict_proba([unit["text"]])[0][checker.label_id("negative")]
            assert p >= residual and abs(p - unit["probability"]) < 1e-3
    else:
        assert out.reason in ("not_flipped", "no_units", "llm_unchanged") and not out.residual


def test_nothing_carries_the_label_is_no_units():
    out, _ = run(["Nice hats. Red shoes."], ["negative"], ["positive"])
    assert out[0].text is None and out[0].reason == "no_units" and out[0].edits == []


def test_a_unit_the_proposer_cannot_edit_is_passed_over():
    def propose(requests):
        return [(None, {}, "llm_unparseable") if "plot" in r.text else (flip_words(r.text), {}, None)
                for r in requests]

    out = edit_until_flipped(["A bad bad plot. A dull cast. Awful songs."], ["negative"], ["positive"],
                             propose=propose, checker=keyword_checker(WORDS),
                             config=WholeInputConfig(edits_per_round=1, flip_margin=0.0))
    # the strongest unit could not be edited; the others were, and two negative words are left: no flip
    assert [e["position"] for e in out[0].edits] == [1, 2]
    assert out[0].text is None and out[0].reason == "not_flipped" and out[0].probability == 0.5


def test_context_is_the_current_neighbours_with_earlier_edits_made():
    out, _ = run(["A bad plot. A dull cast. Awful songs. Boring end."], ["negative"], ["positive"],
                 edits_per_round=1, flip_margin=0.3, max_edits=4)
    contexts = [e["seen_context"] for e in out[0].edits]
    # a later edit sees the earlier edits in its neighbours
    assert any("good" in c or "great" in c or "fine" in c for c in contexts[1:])


def test_one_checker_call_per_round_for_all_rows():
    texts = ["A bad plot. A dull cast.", "Awful songs. Boring end. Bad hats.", "A bad film."]
    out, checker = run(texts, ["negative"] * 3, ["positive"] * 3, edits_per_round=1, flip_margin=0.0)
    rounds = max(o.rounds for o in out)
    # one call reads every unit of every row alone; then one call per round for all rows' whole inputs and new units
    assert len(checker.calls) == 1 + rounds
    assert checker.calls[0] == sum(len(input_units(t)) for t in texts)
    assert all(o.text is not None for o in out)


def test_a_checkers_sentence_checker_reads_the_units_and_the_checker_the_whole():
    # the whole-input checker does not know that "I vote a 2." is negative; its sentence checker does
    def propose(requests):
        return [(flip_words(r.text).replace("vote a 2", "vote a 9"), {}, None) for r in requests]

    text = "A bad plot. Great songs. Great hats. I vote a 2."
    whole = keyword_checker(WORDS)
    out = edit_until_flipped([text], ["negative"], ["positive"], propose=propose, checker=whole,
                             config=WholeInputConfig(edits_per_round=1))
    assert out[0].text == "A good plot. Great songs. Great hats. I vote a 2."  # the rating is left: a partial flip
    whole = keyword_checker(WORDS)
    whole.sentence_checker = keyword_checker({"negative": [*WORDS["negative"], "2"], "positive": WORDS["positive"]})
    out = edit_until_flipped([text], ["negative"], ["positive"], propose=propose, checker=whole,
                             config=WholeInputConfig(edits_per_round=1))
    assert out[0].text == "A good plot. Great songs. Great hats. I vote a 9."
    # units went to the sentence checker (4 alone, then each new unit), whole inputs to the checker only
    assert whole.sentence_checker.calls == [4, 1, 1] and whole.calls == [1, 1]


def test_occlusion_ranks_by_what_the_whole_input_loses():
    out, _ = run(["Nice hats. A bad bad plot. A dull cast."], ["negative"], ["positive"], rank_units="occlusion",
                 edits_per_round=1, max_edits=1, flip_margin=0.0)
    assert out[0].edits[0]["position"] == 1


def test_scorer_overrides_the_ranking():
    calls = []

    def scorer(units, label):
        calls.append(label)
        return [1.0 if "cast" in u else 0.6 if "plot" in u else 0.0 for u in units]

    out = edit_until_flipped(["A bad plot. A dull cast. Red hats."], ["negative"], ["positive"], propose=rule_propose,
                             checker=keyword_checker(WORDS), config=WholeInputConfig(edits_per_round=1, max_edits=1),
                             scorer=scorer)
    assert calls == ["negative"] and out[0].edits[0]["position"] == 1


def test_needs_a_checker_and_matching_lengths():
    with pytest.raises(ValueError, match="needs a checker"):
        edit_until_flipped(["a"], ["negative"], ["positive"], propose=rule_propose, checker=None,
                           config=WholeInputConfig())
    with pytest.raises(ValueError, match="1 texts, 2 labels"):
        edit_until_flipped(["a"], ["negative", "positive"], ["positive"], propose=rule_propose,
                           checker=keyword_checker(WORDS), config=WholeInputConfig())


@pytest.mark.parametrize("field,value,match", [
    ("max_edits", -1, "max_edits"), ("edits_per_round", 0, "edits_per_round"), ("retries", -1, "retries"),
    ("flip_margin", 1.0, "flip_margin"), ("residual", 0.49, "residual"), ("residual", 1.01, "residual"),
    ("rank_units", "gradient", "rank_units"), ("units", "words", "units")])
def test_config_refuses_bad_values(field, value, match):
    with pytest.raises(ValueError, match=match):
        WholeInputConfig(**{field: value})


def test_units_are_clauses_of_a_one_sentence_input():
    assert input_units("The cast is great, but the plot drags; I left early.") == [
        "The cast is great,", "but the plot drags;", "I left early."]
    assert input_units("Great cast. Dull plot.") == ["Great cast.", "Dull plot."]
    assert input_units("Fine.") == ["Fine."]


def test_clause_units_split_every_sentence():
    assert input_units("Great cast, but a dull plot. I left early.", clauses=True) == [
        "Great cast,", "but a dull plot.", "I left early."]
    assert input_units("Great cast, but a dull plot. I left early.") == [
        "Great cast, but a dull plot.", "I left early."]


def test_clause_units_edit_only_the_clause_that_carries_the_label():
    text = "Great to look at, but the plot is dull. Nice hats. Bad songs."
    edited = []

    def propose(requests):
        edited.extend(r.text for r in requests)
        return rule_propose(requests)

    checker = keyword_checker(WORDS)
    out = edit_until_flipped([text], ["negative"], ["positive"], propose=propose, checker=checker,
                             config=WholeInputConfig(units="clauses", residual=0.6, max_edits=0))[0]
    assert out.text == "Great to look at, but the plot is great. Nice hats. Good songs."
    # the positive clause of the mixed sentence was never handed to the editor: copied as it stands
    assert sorted(edited) == ["Bad songs.", "but the plot is dull."]
    assert {e["old"] for e in out.edits} == {"Bad songs.", "but the plot is dull."}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["The cast is great", "but", "the plot drags", ";", "It ends.", "Dull!", ",",
                                 "although", "Mr. Smith sings.", "yet"]), min_size=1, max_size=12), st.booleans())
def test_units_joined_give_the_text_back(words, clauses):
    text = " ".join(words)
    assert " ".join(input_units(text, clauses=clauses)).split() == text.split()


# ------------------------------------------------------------------------------------------------ in the methods
def prompt_editor(prompts):
    """CORE's few-shot prompt answered by the rule editor: the last 'Review:' line, its negative words flipped."""
    return [flip_words(re.findall(r"Review: (.*)", p)[-1]) for p in prompts]


REVIEWS = Dataset.from_dict({
    "text": ["A bad plot. Nice hats. A dull cast. Awful songs.", "Red shoes. Blue hats.", "A bad film. Dull. Awful."],
    "label": ["negative", "negative", "negative"]})


def core(**kw):
    return COREAugmenter(prompt_editor, mode="editor_only", checker=keyword_checker(WORDS), until_flipped=True, **kw)


def test_core_switch_writes_whole_flips_with_provenance():
    out = core(edits_per_round=1).augment(REVIEWS)
    cfs = [r for r in out if r["cf_is_counterfactual"]]
    assert {r["cf_source_id"] for r in cfs} == {out[0]["cf_source_id"], out[4]["cf_source_id"]} or len(cfs) == 2
    for r in cfs:
        edit = json.loads(r["cf_edit"])
        assert edit["until_flipped"]["probability"] >= 0.7 and edit["sentences"]
        assert r["label"] == "positive"
    aug = core(edits_per_round=1)
    aug.augment(REVIEWS)
    assert aug.stats.events["skipped:no_units"] == 1  # "Red shoes. Blue hats." carries no label
    assert aug.stats.events["produced:llm-edit"] == 2
    assert json.loads(out[2]["cf_edit"]) == {"skipped": [{"target": "positive", "reason": "no_units",
                                                          "probability": None}]}


def test_a_skipped_row_names_the_units_left_in_its_originals_cf_edit():
    def one_word_editor(prompts):  # CORE's prompt answered with the first negative word flipped only
        return [flip_first_word(re.findall(r"Review: (.*)", p)[-1]) or "" for p in prompts]

    data = Dataset.from_dict({"text": ["A bad, dull, awful cast. Great songs. Great hats."], "label": ["negative"]})
    aug = COREAugmenter(one_word_editor, mode="editor_only", checker=keyword_checker(WORDS), until_flipped=True)
    out = aug.augment(data)
    assert len(out) == 1 and out[0]["cf_outcome"] == ["skipped:residual"]
    note = json.loads(out[0]["cf_edit"])["skipped"][0]
    assert note["reason"] == "residual" and note["residual"][0]["text"] == "A good, dull, awful cast."
    out = COREAugmenter(one_word_editor, mode="editor_only", checker=keyword_checker(WORDS), until_flipped=True,
                        retries=1).augment(data)
    assert out[1]["text"] == "A good, great, awful cast. Great songs. Great hats." and out[0]["cf_edit"] == ""


def test_core_switch_does_not_depend_on_the_batch():
    a = core().augment(REVIEWS, batch_size=1)
    b = core().augment(REVIEWS, batch_size=3)
    assert a.to_list() == b.to_list()


@pytest.mark.parametrize("kw,match", [
    ({"edit_sentences": 2}, "two ways of choosing"), ({"mode": "retrieval_only"}, "retrieval_only")])
def test_core_switch_refuses_settings_it_cannot_honour(kw, match):
    with pytest.raises(ValueError, match=match):
        COREAugmenter(prompt_editor, checker=keyword_checker(WORDS), until_flipped=True, **kw)


def test_core_switch_needs_a_checker_and_a_single_text():
    with pytest.raises(TypeError, match="needs checker="):
        COREAugmenter(prompt_editor, mode="editor_only", checker=None, until_flipped=True)
    with pytest.raises(ValueError, match="sentiment and text tasks"):
        COREAugmenter(prompt_editor, TaskSchema.nli(), mode="editor_only", checker=None, until_flipped=True)


def llm_answers(prompts):
    return ["Revised text: " + flip_words(re.findall(r"Text: (.*)", p)[-1]) for p in prompts]


def test_llm_method_switch():
    aug = LLMCounterfactualAugmenter(llm_answers, checker=keyword_checker(WORDS), until_flipped=True,
                                     edits_per_round=1)
    out = aug.augment(REVIEWS)
    cfs = [r for r in out if r["cf_is_counterfactual"]]
    assert len(cfs) == 2 and all(r["label"] == "positive" for r in cfs)
    assert all(json.loads(r["cf_edit"])["until_flipped"]["probability"] >= 0.7 for r in cfs)
    assert aug.stats.events["skipped:no_units"] == 1


def test_llm_method_switch_refuses_tasks_without_sentences():
    with pytest.raises(ValueError, match="sentiment task"):
        LLMCounterfactualAugmenter(llm_answers, TaskSchema.nli(), checker=None, until_flipped=True)


def test_a_rating_the_checker_misses_is_edited_and_turned():
    """The keyword checker reads "Rating: 3/10." as neither label; the loop still edits it, and turns the rating
    the editor left as it was."""
    from cfaug_hf.methods.until_flipped import WholeInputConfig, edit_until_flipped
    from cfaug_hf.testing import keyword_checker

    checker = keyword_checker({"positive": ["good", "great"], "negative": ["bad", "dull"]})
    swap = {"Dull plot.": "Great plot."}
    propose = lambda reqs: [(swap.get(r.text, r.text), {}, None) for r in reqs]  # noqa: E731
    text = "Dull plot. Rating: 3/10."
    on = edit_until_flipped([text], ["negative"], ["positive"], propose=propose, checker=checker,
                            config=WholeInputConfig(edits_per_round=2, ratings=True))
    assert on[0].text == "Great plot. Rating: 8/10."
    assert any(e.get("rating_turned") for e in on[0].edits)
    off = edit_until_flipped([text], ["negative"], ["positive"], propose=propose, checker=checker,
                             config=WholeInputConfig(edits_per_round=2))
    assert off[0].text == "Great plot. Rating: 3/10."  # the partial flip the switch prevents


def test_ratings_are_found_and_turned_on_every_scale():
    from hypothesis import given
    from hypothesis import strategies as st

    from cfaug_hf.text.ratings import find_ratings, flip_ratings

    @given(st.sampled_from([("{v}/10", 10), ("{v} out of 10", 10), ("{v}/5", 5), ("{v} out of five", 5),
                            ("{v}/100", 100)]), st.integers(0, 100), st.text(alphabet="abc .!", max_size=20))
    def prop(form, value, around):
        pattern, scale = form
        low = 0 if scale == 100 else 1
        value = low + value % (scale - low + 1)
        text = around + " " + pattern.format(v=value) + " " + around
        found = find_ratings(text)
        assert [(r.value, r.scale) for r in found] == [(float(value), float(scale))]
        turned = flip_ratings(text)
        assert find_ratings(turned)[0].value == scale + low - value
        assert flip_ratings(turned) == text  # turning twice gives the text back

    prop()
    assert find_ratings("He scored 50% on 3 of 4 tests, born 1990.") == []


def test_a_stuttering_unit_is_never_put_in_whoever_proposes_it():
    # the proposer (an editor in a decoding loop) stutters on one unit: that unit is not put in, the loop goes on
    # with the next, and a row left with nothing else to edit says why
    def stutter(requests):
        return [(("A great great great plot." if "bad plot" in r.text else flip_words(r.text)), {}, None)
                for r in requests]

    checker = keyword_checker(WORDS)
    out = edit_until_flipped(["A bad plot. Nice hats. A dull cast. Awful songs.", "A bad plot."],
                             ["negative", "negative"], ["positive", "positive"], propose=stutter, checker=checker,
                             config=WholeInputConfig(edits_per_round=1, residual=1.0))
    assert out[0].text is not None and "great great great" not in out[0].text
    assert all("great great" not in e["new"] for e in out[0].edits)
    assert out[1].text is None and out[1].reason == "llm_repetition"
