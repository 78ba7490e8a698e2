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
    gen = Generator(*tiny_seq2seq(), num_beams=4, num_return_sequences=4, max_new_tokens=6)
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
