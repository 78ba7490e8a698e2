"""The text-generator protocol: Generators, callables and per-row constraints behave alike."""

import pytest

from cfaug_hf import Generator
from cfaug_hf.generation import CallableGenerator, TextGenerator, as_text_generator, satisfies
from cfaug_hf.testing import tiny_seq2seq


def test_a_generator_and_a_callable_speak_the_same_protocol():
    gen = Generator(*tiny_seq2seq(), num_beams=3, num_return_sequences=3, max_new_tokens=5)
    assert as_text_generator(gen) is gen and isinstance(gen, TextGenerator)
    wrapped = as_text_generator(lambda texts: [[t, t + " !"] for t in texts])
    assert isinstance(wrapped, CallableGenerator)
    res = wrapped.generate_with_info(["a", "b"])
    assert res.texts == [["a", "a !"], ["b", "b !"]] and res.constraint_failures == [0, 0]


def test_constraints_are_verified_on_every_candidate():
    gen = Generator(*tiny_seq2seq(), num_beams=4, num_return_sequences=4, max_new_tokens=6,
                    constrained_decoding=False)  # the outputs of plain beam search, filtered
    texts = ["the cat sat on the mat", "a dog ran in paris"]
    free = gen.generate_with_info(texts)
    word = free.texts[0][0].split()[0] if free.texts[0][0] else "the"
    constraints = [[[word]], None]
    res = gen.generate_with_info(texts, constraints=constraints)
    assert all(satisfies(t, constraints[0]) for t in res.texts[0]) and res.texts[1] == free.texts[1]
    assert res.constraint_failures[0] == len(free.texts[0]) - len(res.texts[0])
    assert gen.stats["constraint_failures"] == res.constraint_failures[0]
    with pytest.raises(ValueError, match="Got 1 constraints for 2 texts"):
        gen.generate_with_info(texts, constraints=[None])


# ------------------------------------------------------------------------------------------ constrained decoding
@pytest.mark.parametrize("factory", ["seq2seq", "causal"])
def test_constrained_beam_search_works_the_phrases_in(factory):
    from cfaug_hf.generation import satisfies
    from cfaug_hf.testing import tiny_causal_lm, tiny_seq2seq

    model, tok = (tiny_seq2seq if factory == "seq2seq" else tiny_causal_lm)()
    constraint = [["paris", "london"], ["the king"]]
    plain = Generator(model, tok, num_beams=6, num_return_sequences=3, max_new_tokens=10, stop=(),
                      constrained_decoding=False)
    guided = Generator(model, tok, num_beams=6, num_return_sequences=3, max_new_tokens=10, stop=())
    texts = ["the cat sat on the mat", "a dog ran"]
    before = plain.generate_with_info(texts, constraints=[constraint, None])
    after = guided.generate_with_info(texts, constraints=[constraint, None])
    assert before.texts[0] == [] and before.constraint_failures[0] == 3  # a random tiny model never says them
    assert 1 <= len(after.texts[0]) <= 3 and after.constraint_failures == [0, 0]
    assert all(satisfies(t, constraint) for t in after.texts[0])
    assert after.texts[1] == before.texts[1]  # rows without a constraint decode as before
    assert guided.stats["constrained_rows"] == 1


def test_constrained_beam_search_gives_up_within_its_length():
    from cfaug_hf.generation.constrained import constrained_beam_search, phrase_token_ids
    from cfaug_hf.testing import tiny_seq2seq

    model, tok = tiny_seq2seq()
    # Three groups of two words cannot fit in two new tokens: nothing is returned rather than a broken output.
    assert constrained_beam_search(model, tok, "the cat", [["paris"], ["king"], ["song"]], num_beams=4,
                                   max_new_tokens=2) == []
    assert phrase_token_ids(tok, "the king") == [tok("the king", add_special_tokens=False)["input_ids"]]


@pytest.mark.parametrize("factory", ["seq2seq", "causal"])
def test_batched_constrained_search_equals_one_row_at_a_time(factory):
    from cfaug_hf.generation.constrained import constrained_beam_search, constrained_beam_search_batch
    from cfaug_hf.testing import tiny_causal_lm, tiny_seq2seq

    model, tok = (tiny_seq2seq if factory == "seq2seq" else tiny_causal_lm)()
    prompts = ["the cat sat on the mat", "a dog", "the king lived in paris in 1990 with the band"]
    constraints = [[["paris"], ["king"]], [["song"]], [["london", "rome"]]]
    batch = constrained_beam_search_batch(model, tok, prompts, constraints, num_beams=5, num_return_sequences=2,
                                          max_new_tokens=8)
    assert batch == [constrained_beam_search(model, tok, p, c, num_beams=5, num_return_sequences=2,
                                             max_new_tokens=8) for p, c in zip(prompts, constraints)]


@pytest.mark.parametrize("answer,original,reason", [
    ("the downbeat downbeat downbeat downbeat upbeat score", "the upbeat score", "llm_repetition"),
    ("This movie was very high high high budgeted.", "This movie was very low budgeted.", "llm_repetition"),
    ("It was very very very good.", "It was very very very bad.", None),  # the review's own stutter, kept
    ("It was very, very good.", "It was bad.", None),  # twice is how people write
    ("A dull film.", "A fine film.", None),
])
def test_an_answer_that_stutters_is_screened_out(answer, original, reason):
    """Issue 81, item 3 (the part built): a unit edit that does not read as text is rejected with its own reason
    (held-back reviews showed "the downbeat downbeat downbeat downbeat downbeat upbeat"; on the 1526 edits of the
    committed whole-input rows the check rejects 7, all the one garbled "very high high high budgeted")."""
    from cfaug_hf.generation import screen_answer

    assert screen_answer(answer, original) == reason
