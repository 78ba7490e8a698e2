import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cfaug_hf.text import classify_edit, diff_tokens, find_span, substitute_span, tokenize


def test_tokenize_offsets_round_trip():
    text = "Penélope Cruz has modelled for Mango, Ralph Lauren and L'Oréal (in 2006)."
    toks = tokenize(text)
    assert all(text[t.start:t.end] == t.text for t in toks)
    assert [t.text for t in toks][-6:] == ["L'Oréal", "(", "in", "2006", ")", "."]


def test_diff_prefix_suffix():
    d = diff_tokens("Little Miss Sunshine was filmed over 30 days.",
                    "Little Miss Sunshine was filmed less than 10 days.")
    assert [t.text for t in d.old_tokens] == ["over", "30"] and [t.text for t in d.new_tokens] == ["less", "than", "10"]
    assert d.kind == "replacement"
    assert diff_tokens("He played.", "He never played.").kind == "insertion"
    assert diff_tokens("He never played.", "He played.").kind == "deletion"
    assert diff_tokens("He played.", "he  played .").kind == "identical"
    assert diff_tokens("He played.", "He played").kind == "identical"  # punctuation alone is no change
    assert diff_tokens("It is clear, almost white", "It is clear.").kind == "deletion"
    assert diff_tokens("He played.", "He never played.").flips_negation
    assert not diff_tokens("He played well.", "He played.").flips_negation


def test_diff_suffix_does_not_overlap_prefix():
    d = diff_tokens("a b a", "a b b a")
    assert d.kind == "insertion" and [t.text for t in d.new_tokens] == ["b"]


def test_find_span_overlapping_partial_match():
    # a matcher that restarts after the partial "a" would miss this
    assert find_span(["a a b"], ["a", "b"]) == [(0, 2, 5)]
    assert len(find_span(["a a a"], ["a", "a"])) == 2
    assert find_span(["the party"], ["art"]) == []
    assert find_span(["x y", "y z"], ["y", "y"]) == []  # never across pieces


def sub(evidence, old, new, **kw):
    return substitute_span(evidence if isinstance(evidence, list) else [evidence], diff_tokens(old, new), old, new,
                           **kw)


def test_substitution_keeps_spacing_and_punctuation():
    ev = "Filming began in June , and took place  over 30 days in Arizona ."
    s = sub(ev, "It was filmed over 30 days.", "It was filmed less than 10 days.")
    assert s.reason == "substituted"
    assert s.pieces == ["Filming began in June , and took place  less than 10 days in Arizona ."]


def test_substitution_case_and_sentence_start():
    s = sub("Over 30 days were spent.", "It took over 30 days.", "It took under 5 days.")
    assert s.pieces == ["Under 5 days were spent."]
    s = sub("He lives in paris now.", "Paris is big.", "Lyon is big.")
    assert s.reason == "substituted"  # case-insensitive match
    s = sub("The team moved to boston.", "Boston is cold.", "Denver is cold.")
    assert s.pieces == ["The team moved to Denver."]  # a name keeps its capitals
    s = sub("It aired on the Food Network.", "The Food Network aired it.", "Netflix aired it.")
    assert s.pieces == ["It aired on Netflix."]
    s = sub("Fans saw the film there.", "The film was a hit.", "This film was a hit.")
    assert s.pieces == ["Fans saw this film there."]  # a function word that only started the claim


def test_common_noun_does_not_edit_a_proper_name():
    assert sub("He lived in Yavapai County.", "He lived in the county.", "He lived in the city.").reason == \
        "span_not_found"
    s = sub("The county is large. It borders Yavapai County.", "The county is large.", "The city is large.")
    assert s.pieces == ["The city is large. It borders Yavapai County."]


def test_clitics():
    s = sub("The Hobbit is Tolkien's book.", "Tolkien wrote it.", "Lewis wrote it.")
    assert s.pieces == ["The Hobbit is Lewis's book."]
    assert sub("It was built in 1900.", "It was built.", "It wasn't built.").reason == "insertion"


def test_substitution_multi_piece_evidence():
    pieces = ["Magic Johnson is a player.", "He played for the Lakers."]
    s = sub(pieces, "He played for the Lakers.", "He played for the Celtics.")
    assert s.pieces == ["Magic Johnson is a player.", "He played for the Celtics."] and s.piece == 1


def test_substitution_reasons():
    assert sub("a b c", "x y.", "x y.").reason == "identical"
    assert sub("He played.", "He played.", "He never played.").reason == "insertion"
    assert sub("He never played.", "He never played.", "He played.").reason == "deletion"
    assert sub("one two three four five", "one two three four five", "six seven eight nine ten").reason == \
        "span_too_long"
    assert sub("nothing here", "It was red.", "It was blue.").reason == "span_not_found"
    assert sub("red car, red house", "It was red.", "It was blue.").reason == "span_not_unique"
    assert sub("red car", "It was red.", "It was blue.", max_span_tokens=1).reason == "substituted"


words = st.sampled_from(["a", "b", "c", "the", "red", "blue", "30", "days", ",", "."])
sentences = st.lists(words, min_size=1, max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(evidence=st.lists(sentences, min_size=1, max_size=3), claim=sentences, new_claim=sentences,
       limit=st.integers(1, 4))
def test_substitution_properties(evidence, claim, new_claim, limit):
    diff = diff_tokens(claim, new_claim)
    s = substitute_span(evidence, diff, claim, new_claim, max_span_tokens=limit)
    n_old = sum(any(ch.isalnum() for ch in t.text) for t in diff.old_tokens)
    n_new = sum(any(ch.isalnum() for ch in t.text) for t in diff.new_tokens)
    if n_old > limit or n_new > limit:
        assert s.pieces is None  # spans over the limit are never substituted
    if s.pieces is None:
        return
    # exactly one piece changed, and only inside the replaced span
    changed = [i for i, (a, b) in enumerate(zip(evidence, s.pieces)) if a != b]
    assert len(changed) <= 1 and len(s.pieces) == len(evidence)
    p = s.piece
    before, after = evidence[p], s.pieces[p]
    assert before[:s.start] == after[:s.start]
    tail = len(before) - s.start - len(s.old_text)
    assert before[len(before) - tail:] == after[len(after) - tail:]
    assert after[s.start:s.start + len(s.new_text)] == s.new_text
    # the old span occurred exactly once
    assert len(find_span(evidence, [t.key for t in diff.old_tokens])) == 1


@pytest.mark.parametrize("old,new,kind", [
    ("EdIT has worked with Myka 9.", "EdIT has worked with Myka9.", "same_meaning"),       # spacing
    ("He took a Ph.D. at Birmingham.", "He took a PhD at Birmingham.", "same_meaning"),     # full stops
    ("ABB sold it to Alstom, and focused on energy.", "ABB sold it to Alastom.", "same_meaning"),  # typo + deletion
    ("She hosted the show and stars in Sharon.", "She hosts the show.", "same_meaning"),    # tense + deletion
    ("It opened on January ninth of 1957.", "It opened on January 9, 1957", "same_meaning"),  # number words
    ("It was built in 2005.", "It was built in 2007.", "change"),
    ("He was born in Rome, Italy.", "He was born in Naples.", "change"),
    ("It takes place in a zone and employs people.", "It does not take place in a zone.", "change"),
    ("Acme Ltd. was founded in 1990 in Paris.", "Acme Ltd was founded in Paris", "deletion"),
    ("He can clean & jerk and won in 1988.", "He can clean and jerk.", "same_meaning"),     # a filler word added
    ("He had a studio and was elected.", "He had a studio but was elected.", "same_meaning"),  # conjunctions
    ("It was the Mongolian empire.", "It was the Mongol empire.", "same_meaning"),      # a shorter form of a name
    ("He was born in Austria.", "He was born in Australia.", "change"),
    ("He escaped Tibet.", "He fled Tibet.", "change"),                                    # synonyms need a thesaurus
])

def test_classify_edit(old, new, kind):
    assert classify_edit(old, new).kind == kind


def test_a_synonym_test_can_be_plugged_in():
    from cfaug_hf.text import set_synonym_test

    set_synonym_test(lambda a, b: {a, b} == {"escaped", "fled"})
    try:
        assert classify_edit("He escaped Tibet.", "He fled Tibet.").kind == "same_meaning"
    finally:
        set_synonym_test(None)
