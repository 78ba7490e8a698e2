"""One small protocol for everything that writes text: a trained `Generator`, an LLM backend, or
a plain Python callable.

A method asks `as_text_generator` for a `TextGenerator` and calls ``generate_with_info(texts,
seeds=..., constraints=...)``; it gets a `GenerationResult` with several candidates per input, and which
inputs and outputs were cut. Per-row seeds make sampling reproducible whatever the batch. Per-row constraints
("the output must contain at least one of these strings, for each group") are checked on every candidate:
candidates that break them are dropped and counted, so a method never sees one (a generator may also enforce them
while decoding).

Examples:
    >>> gen = as_text_generator(lambda texts: [t.upper() for t in texts])
    >>> res = gen.generate_with_info(["paris is big", "rome is old"], constraints=[[["PARIS"]], [["LYON"]]])
    >>> res.texts, res.constraint_failures
    ([['PARIS IS BIG'], []], [0, 1])
"""

from __future__ import annotations

import re

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["screen_answer", "stutters_more", "GenerationResult", "TextGenerator", "CallableGenerator", "Constraint", "satisfies", "as_text_generator",
           "RowSeeds",
           "apply_constraints"]

#: A conjunction of disjunctions: for each group, the output must contain at least one of its strings
#: (case-insensitive). RACE's entity constraint: one group per evidence piece, holding that piece's entities.
Constraint = Sequence[Sequence[str]]


@dataclass
class GenerationResult:
    """Outputs per input plus what was cut: inputs longer than the generator's limit, outputs without an end token,
    how many candidates of each input broke its constraint (and were dropped), and, for backends that can fail per
    request (an HTTP endpoint), the error of each input that got no answer (``None`` where it did; empty when the
    backend cannot fail that way)."""

    texts: list[list[str]]
    input_truncated: list[bool]
    output_truncated: list[list[bool]]
    constraint_failures: list[int] = field(default_factory=list)
    errors: list[str | None] = field(default_factory=list)

    def error(self, i: int) -> str | None:
        """The error of input ``i``, or None."""
        return self.errors[i] if self.errors else None


@runtime_checkable
class TextGenerator(Protocol):
    """Anything with ``generate_with_info(texts, *, seeds=None, constraints=None) -> GenerationResult``."""

    def generate_with_info(self, texts: list[str], *, seeds: list[int] | None = None,
                           constraints: Sequence[Constraint | None] | None = None) -> GenerationResult: ...


def satisfies(text: str, constraint: Constraint | None) -> bool:
    """Whether ``text`` contains, for every group of ``constraint``, at least one of the group's strings.

    Examples:
        >>> satisfies("Obama was born in Hawaii", [["Obama", "Barack"], ["Hawaii", "Honolulu"]])
        True
        >>> satisfies("Obama was born in Kenya", [["Obama"], ["Hawaii", "Honolulu"]])
        False
    """
    if not constraint:
        return True
    folded = text.casefold()
    return all(any(option.casefold() in folded for option in group) for group in constraint)


def apply_constraints(result: GenerationResult, constraints: Sequence[Constraint | None] | None) -> GenerationResult:
    """Drop the candidates that break their row's constraint and count them in ``constraint_failures``."""
    if constraints is None:
        result.constraint_failures = [0] * len(result.texts)
        return result
    if len(constraints) != len(result.texts):
        raise ValueError(f"Got {len(constraints)} constraints for {len(result.texts)} texts.")
    failures = []
    for i, constraint in enumerate(constraints):
        keep = [j for j, t in enumerate(result.texts[i]) if satisfies(t, constraint)]
        failures.append(len(result.texts[i]) - len(keep))
        result.texts[i] = [result.texts[i][j] for j in keep]
        result.output_truncated[i] = [result.output_truncated[i][j] for j in keep]
    result.constraint_failures = failures
    return result


class CallableGenerator:
    """Wraps ``fn(texts) -> outputs`` (one string, or a list of candidate strings, per text) as a
    `TextGenerator`, checking that ``fn`` keeps that contract. Seeds are ignored (a callable that samples
    should seed itself)."""

    def __init__(self, fn: Callable[[list[str]], Any], *, what: str = "text") -> None:
        if not callable(fn):
            raise TypeError(f"A text generator must be a Generator or a callable, got {type(fn).__name__}.")
        self.fn, self.what = fn, what

    @property
    def contract(self) -> str:
        return (f"a generator callable takes a list of {self.what}s and returns a list with, for each {self.what}, "
                f"one rewrite (a string) or a list of candidate rewrites")

    def generate_with_info(self, texts: list[str], *, seeds: list[int] | None = None,
                           constraints: Sequence[Constraint | None] | None = None) -> GenerationResult:
        from .contracts import batch_output

        n, what = len(texts), self.what
        outputs = batch_output(self.fn(texts), n, who="The generator", contract=self.contract, what=what)
        result = []
        for i, out in enumerate(outputs):
            candidates = [out] if isinstance(out, str) else out
            if not isinstance(candidates, (list, tuple)) or not all(isinstance(c, str) for c in candidates):
                raise TypeError(f"The generator's output {i} (for {what} {texts[i]!r}) is {out!r}; {self.contract}.")
            result.append(list(candidates))
        return apply_constraints(GenerationResult(result, [False] * n, [[False] * len(t) for t in result]),
                                 constraints)

    def __repr__(self) -> str:
        return f"CallableGenerator({getattr(self.fn, '__qualname__', type(self.fn).__name__)})"


def as_text_generator(obj: Any, *, what: str = "text") -> TextGenerator:
    """``obj`` itself when it already speaks the protocol (a `Generator`, an LLM backend),
    else a `CallableGenerator` around it."""
    if isinstance(obj, TextGenerator) and not isinstance(obj, type):
        return obj
    return CallableGenerator(obj, what=what)


class RowSeeds(Sequence):
    """The per-row seeds of a batch of examples, derived only when read: a generator that does not sample (beam
    search, a callable) never pays for them.

    Examples:
        >>> from cfaug_hf.augmenter import Example
        >>> seeds = RowSeeds([Example({}, "a", "row-1", base_seed=0)])
        >>> len(seeds), seeds[0] == Example({}, "a", "row-1", base_seed=0).seed
        (1, True)
    """

    def __init__(self, examples: Sequence[Any]) -> None:
        self._examples = examples

    def __len__(self) -> int:
        return len(self._examples)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [ex.seed for ex in self._examples[i]]
        return self._examples[i].seed


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def screen_answer(answer: str, original: str, prompt: str | None = None, *, max_ratio: float = 4.0,
                  slack_chars: int = 200, min_share: float = 0.5, min_words: int = 6) -> str | None:
    r"""The reason an LLM's parsed answer must not become a counterfactual, or None: one check shared by every
    LLM-backed method (CORE's editor, the LLM-prompted augmenter), so they drop the same answers for the same reasons.

    * ``llm_too_long``: longer than ``max_ratio`` times the text it revises plus ``slack_chars`` (a model that ran
      on into a story, or a loop);
    * ``llm_too_short``: fewer than ``min_share`` of the words of a text of ``min_words`` words or more (a
      counterfactual is a minimal edit: an editor that answers a long review with a few words loses the review);
    * ``llm_echo``: the answer repeats the prompt: the whole of it, or one of its lines of instructions or
      demonstrations (any prompt line of 20 characters or more that is not part of the text being revised);
    * ``llm_repetition``: a word three or more times in a row that the text it revises does not repeat so ("the
      downbeat downbeat downbeat upbeat", "very high high high budgeted": a decoding loop, not an edit).

    Examples:
        >>> screen_answer("A dull film.", "A fine film.", "Rewrite the review so that it is negative.\nA fine film.")
        >>> screen_answer("Rewrite the review so that it is negative.", "A fine film.",
        ...               "Rewrite the review so that it is negative.\nA fine film.")
        'llm_echo'
        >>> screen_answer("bad " * 500, "A fine film.")
        'llm_too_long'
        >>> screen_answer("Bad.", "a fine film with a warm cast and a clever plot")
        'llm_too_short'
        >>> screen_answer("A very very very dull film.", "A fine film.")
        'llm_repetition'
    """
    if prompt:
        said, asked, source = _norm(answer), _norm(prompt), _norm(original)
        if said and (said == asked or (len(said) > 40 and said in asked and said not in source)):
            return "llm_echo"
        for line in prompt.splitlines():
            line = _norm(line)
            if len(line) >= 20 and line not in source and line in said:
                return "llm_echo"
    if len(answer) > max_ratio * len(original) + slack_chars:
        return "llm_too_long"
    words = len(original.split())
    if words >= min_words and len(answer.split()) < min_share * words:
        return "llm_too_short"
    if stutters_more(answer, original):
        return "llm_repetition"
    return None


def stutters_more(answer: str, original: str) -> bool:
    """Whether ``answer`` holds a word three or more times in a row that ``original`` does not repeat so (a decoding
    loop, not an edit): the ``llm_repetition`` check, for any edited text.

    Examples:
        >>> stutters_more("the downbeat downbeat downbeat upbeat", "the upbeat score")
        True
        >>> stutters_more("no no no", "No, no, no!")
        False
    """
    return bool(_stutters(answer) - _stutters(original))


def _stutters(text: str) -> set[str]:
    """The words ``text`` holds three or more times in a row (case and punctuation aside)."""
    words = re.findall(r"\w+", text.casefold())
    return {w for a, b, w in zip(words, words[1:], words[2:]) if a == b == w}

