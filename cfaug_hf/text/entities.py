"""Entities in token-tagged (IOB2) and marked-up (relation extraction) text: spans, substitution with re-computed
tags, a lexicon of the entities a dataset holds, and the ``<e1>head</e1> ... <e2>tail</e2>`` markup.

Shared by the NER counterfactual methods (the CFGen baseline and the LLM's NER template), their constraint filters,
and RACE's in-dataset entity replacement.

Examples:
    >>> tokens, tags = ["John", "lives", "in", "New", "York", "."], ["B-PER", "O", "O", "B-LOC", "I-LOC", "O"]
    >>> [(e.text, e.type) for e in iob2_spans(tokens, tags)]
    [('John', 'PER'), ('New York', 'LOC')]
    >>> substitute(tokens, tags, {1: "Paris"})
    (['John', 'lives', 'in', 'Paris', '.'], ['B-PER', 'O', 'O', 'B-LOC', 'O'])
    >>> relation_entities("The <e1>key</e1> is in the <e2>chest</e2>.")
    ('key', 'chest', True)
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Entity", "iob2_problem", "iob2_spans", "substitute", "replace_entities", "distinct_replacements", "EntityLexicon", "MarkupError", "HEAD_MARKUP",
           "TAIL_MARKUP", "relation_entities", "strip_markup", "mark_entities"]


@dataclass(frozen=True)
class Entity:
    """A typed entity: tokens ``start:end`` of a tagged sentence (``end`` exclusive) and its text."""

    start: int
    end: int
    type: str
    text: str


def iob2_problem(tags: Sequence[str]) -> str | None:
    """Why ``tags`` is not a valid IOB2 sequence (an ``I-X`` must follow ``B-X`` or ``I-X``; tags are ``O``,
    ``B-X`` or ``I-X``), or None when it is.

    Examples:
        >>> iob2_problem(["O", "I-PER"]), iob2_problem(["B-PER", "I-PER", "O"])
        ("tag 1 is 'I-PER' after 'O'; IOB2 starts an entity with 'B-PER'", None)
    """
    previous = "O"
    for i, tag in enumerate(tags):
        if not isinstance(tag, str):
            return f"tag {i} is {tag!r}, not a tag name"
        if tag != "O" and not re.fullmatch(r"[BI]-\S+", tag):
            return f"tag {i} is {tag!r}; expected 'O', 'B-<type>' or 'I-<type>'"
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            return f"tag {i} is {tag!r} after {previous!r}; IOB2 starts an entity with 'B-{tag[2:]}'"
        previous = tag
    return None


def iob2_spans(tokens: Sequence[str], tags: Sequence[str]) -> list[Entity]:
    """The entities of a valid IOB2-tagged sentence, in order."""
    out: list[Entity] = []
    start = None
    for i, tag in enumerate([*tags, "O"]):
        if start is not None and not (tag.startswith("I-") and tag[2:] == tags[start][2:]):
            out.append(Entity(start, i, tags[start][2:], " ".join(tokens[start:i])))
            start = None
        if tag.startswith("B-"):
            start = i
    return out


def substitute(tokens: Sequence[str], tags: Sequence[str], replacements: Mapping[int, str | Sequence[str]]
               ) -> tuple[list[str], list[str]]:
    """Replace entities (by their position in `iob2_spans`) with new text, re-computing the IOB2 tags: the
    new tokens get ``B-<type>`` then ``I-<type>``. A replacement is a string (split on whitespace) or tokens."""
    entities = iob2_spans(tokens, tags)
    for k in replacements:
        if not 0 <= k < len(entities):
            raise IndexError(f"entity {k} does not exist; the sentence has {len(entities)} entities.")
    new_tokens: list[str] = []
    new_tags: list[str] = []
    cursor = 0
    for k, ent in enumerate(entities):
        if k not in replacements:
            continue
        new = replacements[k]
        words = new.split() if isinstance(new, str) else list(new)
        if not words:
            raise ValueError(f"the replacement of entity {k} ({ent.text!r}) is empty.")
        new_tokens += tokens[cursor:ent.start]
        new_tags += tags[cursor:ent.start]
        new_tokens += words
        new_tags += [f"B-{ent.type}"] + [f"I-{ent.type}"] * (len(words) - 1)
        cursor = ent.end
    return new_tokens + list(tokens[cursor:]), new_tags + list(tags[cursor:])


def replace_entities(tokens: Sequence[str], tags: Sequence[str], replacements: Mapping[int, str]
                     ) -> tuple[list[str], list[str], list[dict[str, str]]]:
    """`substitute`, plus a record of each replacement (``old``, ``new``, ``type``) for provenance.

    Examples:
        >>> replace_entities(["Ada", "ran"], ["B-PER", "O"], {0: "Bob"})
        (['Bob', 'ran'], ['B-PER', 'O'], [{'old': 'Ada', 'new': 'Bob', 'type': 'PER'}])
    """
    entities = iob2_spans(tokens, tags)
    new_tokens, new_tags = substitute(tokens, tags, replacements)
    records = [{"old": entities[k].text, "new": str(new), "type": entities[k].type}
               for k, new in sorted(replacements.items())]
    return new_tokens, new_tags, records


def distinct_replacements(tokens: Sequence[str], tags: Sequence[str], swaps: Iterable[Mapping[int, str]]
                          ) -> Iterator[tuple[list[str], list[str], list[dict[str, str]]]]:
    """`replace_entities` for each of ``swaps`` in turn (entity index -> new text), skipping empty swaps and those
    whose tokens an earlier swap already gave: the counterfactuals of one row, each different (CFGen's draws, the
    LLM's proposals).

    Examples:
        >>> toks, tags = ["Ada", "met", "Bob"], ["B-PER", "O", "B-PER"]
        >>> [t for t, _, _ in distinct_replacements(toks, tags, [{0: "Eve"}, {}, {0: "Eve"}, {1: "Max"}])]
        [['Eve', 'met', 'Bob'], ['Ada', 'met', 'Max']]
    """
    seen: set[tuple[str, ...]] = set()
    for swap in swaps:
        if not swap:
            continue
        new_tokens, new_tags, replaced = replace_entities(tokens, tags, swap)
        if tuple(new_tokens) not in seen:
            seen.add(tuple(new_tokens))
            yield new_tokens, new_tags, replaced


class EntityLexicon:
    """The entities a dataset holds, by type, with their counts; CFGen-style in-dataset replacement draws from it.

    Args:
        entities: ``type -> entity texts`` (repeats count) or ``type -> {text: count}``.

    Examples:
        >>> lex = EntityLexicon({"LOC": ["Paris", "Rome", "Paris"], "PER": ["Ada"]})
        >>> lex.types_of("paris"), lex.sample("LOC", random.Random(0), exclude={"Paris"})
        ({'LOC'}, 'Rome')
    """

    def __init__(self, entities: Mapping[str, Iterable[str] | Mapping[str, int]]) -> None:
        self.counts: dict[str, Counter] = {}
        for etype, texts in entities.items():
            self.counts[etype] = Counter(texts) if not isinstance(texts, Mapping) else Counter(dict(texts))
        self._types: dict[str, set[str]] = {}
        for etype, counter in self.counts.items():
            for text in counter:
                self._types.setdefault(text.casefold(), set()).add(etype)

    @classmethod
    def from_dataset(cls, dataset: Any, schema: Any) -> EntityLexicon:
        """Every entity of a token-classification dataset (``schema`` from `TaskSchema.token_classification`)."""
        tokens_col, tags_col = schema.text_columns[0], schema.label_column
        found: dict[str, list[str]] = {}
        for row, (tokens, tags) in enumerate(zip(dataset[tokens_col], dataset[tags_col])):
            names = [schema.label_name(t, row=row) for t in tags]
            for ent in iob2_spans(tokens, names):
                found.setdefault(ent.type, []).append(ent.text)
        return cls(found)

    def types_of(self, text: str) -> set[str]:
        """The types ``text`` has in the lexicon (any case); empty when unseen."""
        return set(self._types.get(text.casefold(), ()))

    def sample(self, etype: str, rng: random.Random, *, exclude: Iterable[str] = ()) -> str | None:
        """A random entity of type ``etype`` other than ``exclude`` (any case), uniform over distinct texts; None
        when there is none."""
        banned = {e.casefold() for e in exclude}
        options = sorted(t for t in self.counts.get(etype, ()) if t.casefold() not in banned)
        return rng.choice(options) if options else None

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {etype: dict(sorted(counter.items())) for etype, counter in sorted(self.counts.items())}

    def __len__(self) -> int:
        return sum(len(c) for c in self.counts.values())

    def __repr__(self) -> str:
        return f"EntityLexicon({ {t: len(c) for t, c in sorted(self.counts.items())} })"


# ------------------------------------------------------------------------------------------------ relation markup
#: SemEval-2010 Task 8's markup: the head is ``<e1>...</e1>``, the tail ``<e2>...</e2>``.
HEAD_MARKUP = ("<e1>", "</e1>")
TAIL_MARKUP = ("<e2>", "</e2>")


class MarkupError(ValueError):
    """A relation-extraction text whose entity markup is missing or malformed."""


def _marked(text: str, markup: tuple[str, str]) -> tuple[int, str]:
    open_, close = markup
    if text.count(open_) != 1 or text.count(close) != 1:
        raise MarkupError(f"expected exactly one {open_}...{close}, found {text.count(open_)} {open_} and "
                          f"{text.count(close)} {close}")
    start, end = text.index(open_), text.index(close)
    if end < start:
        raise MarkupError(f"{close} comes before {open_}")
    inner = text[start + len(open_):end]
    if not inner.strip() or "<" in inner:
        raise MarkupError(f"the entity inside {open_}...{close} is empty or holds other markup: {inner!r}")
    return start, inner.strip()


def relation_entities(text: str, head: tuple[str, str] = HEAD_MARKUP, tail: tuple[str, str] = TAIL_MARKUP
                      ) -> tuple[str, str, bool]:
    """``(head text, tail text, head comes first)`` of a marked-up sentence; `MarkupError` when the markup
    is missing or malformed."""
    h_at, h = _marked(text, head)
    t_at, t = _marked(text, tail)
    return h, t, h_at < t_at


def strip_markup(text: str, head: tuple[str, str] = HEAD_MARKUP, tail: tuple[str, str] = TAIL_MARKUP) -> str:
    """The sentence without its entity markup."""
    for tag in (*head, *tail):
        text = text.replace(tag, "")
    return " ".join(text.split())


def mark_entities(text: str, head_text: str, tail_text: str, head: tuple[str, str] = HEAD_MARKUP,
                  tail: tuple[str, str] = TAIL_MARKUP) -> str | None:
    """Put the markup back on an unmarked sentence: the first whole-word occurrence of ``head_text`` and, after it
    when the head comes first, of ``tail_text``. None when either is missing or the two overlap."""
    def find(needle: str, start: int = 0) -> re.Match | None:
        return re.compile(r"(?<!\w)" + re.escape(needle) + r"(?!\w)").search(text, start)

    h = find(head_text)
    if h is None:
        return None
    t = find(tail_text, h.end())
    if t is None:
        t = find(tail_text)
        if t is None or t.end() > h.start():
            return None
    spans = sorted([(h.start(), h.end(), head), (t.start(), t.end(), tail)])
    out, cursor = [], 0
    for start, end, (open_, close) in spans:
        out += [text[cursor:start], open_, text[start:end], close]
        cursor = end
    return "".join(out) + text[cursor:]
