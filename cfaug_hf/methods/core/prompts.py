r"""CORE's editor prompts, keyword lists and answer parsing.

A prompt holds task instructions (after the crowd instructions of Kaushik et al. 2020, in our own words), a few
demonstrations, then the input with its label, the keywords taken from the retrieved excerpts and the target label;
the editor continues after the answer cue. Demonstrations are dicts with the keys of the task's template:

| task | keys |
|---|---|
| sentiment | ``text``, ``label``, ``keywords`` (list), ``target``, ``edited`` |
| nli | ``premise``, ``hypothesis``, ``label``, ``keywords``, ``target``, ``edited`` (the new hypothesis) |
| text | ``text``, ``label``, ``keywords``, ``target``, ``edited`` |

Labels are shown as written in the dataset, except NLI's, shown as "definitely true" / "definitely false" (how the
crowd instructions put it). The sentiment prompt states the target label as given: the reference code passes the
opposite of the label it means, which we do not copy.

Examples:
    >>> p = build_prompt("sentiment", {"text": "A dull film.", "label": "negative"}, "positive", ["lively", "fun"])
    >>> p.splitlines()[-1], p.count("Rewritten review:")
    ('Rewritten review:', 3)
    >>> parse_answer('Rewritten review: "A lively film."', "A dull film.", "sentiment")
    ('A lively film.', None)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...text.keywords import keywords, spacy_pos_tagger  # re-exported: CORE's keyword rule lives with the text tools

__all__ = ["INSTRUCTIONS", "DEMONSTRATIONS", "TEMPLATE_FIELDS", "template_values", "build_prompt", "parse_answer", "keywords", "nli_label_text",
           "spacy_pos_tagger"]

INSTRUCTIONS = {
    "sentiment": (
        "You are given a movie review, its sentiment, a list of suggested words and a target sentiment. Rewrite "
        "the review with as few changes as possible so that the target sentiment describes it. Use one or two of "
        "the suggested words where they fit. Keep everything that does not carry the sentiment as it is, and do not "
        "add or remove information."),
    "nli": (
        "Sentence 1 is true. You are given Sentence 1, Sentence 2, how Sentence 2 relates to it (definitely true or "
        "definitely false), a list of suggested words and a target relation. Change Sentence 2 with a small number "
        "of edits so that the target relation holds given Sentence 1. Use one or two of the suggested words. Do not "
        "rewrite Sentence 2 completely and do not change Sentence 1."),
    "text": (
        "You are given a text, its label, a list of suggested words and a target label. Rewrite the text with as few "
        "changes as possible so that the target label describes it. Use one or two of the suggested words where "
        "they fit, and keep everything else as it is."),
}

#: Built-in demonstrations, written for this library (replace them with ``COREConfig(demonstrations=[...])``).
DEMONSTRATIONS: dict[str, list[dict[str, Any]]] = {
    "sentiment": [
        {"text": "The cast tries hard, but the script is lazy and the jokes fall flat.", "label": "negative",
         "keywords": ["sharp", "clever", "land", "every", "charming"], "target": "positive",
         "edited": "The cast tries hard, and the script is sharp and the jokes land every time."},
        {"text": "A warm, funny film that I would happily watch again.", "label": "positive",
         "keywords": ["cold", "tedious", "never", "regret", "again"], "target": "negative",
         "edited": "A cold, tedious film that I would never watch again."},
    ],
    "nli": [
        {"premise": "A man in a red jacket is climbing a steep rock wall.",
         "hypothesis": "A man is sitting on a couch.", "label": "contradiction",
         "keywords": ["climbing", "outdoors", "wall", "rock", "steep"], "target": "entailment",
         "edited": "A man is climbing outdoors."},
        {"premise": "Two children are building a sandcastle on the beach.",
         "hypothesis": "Kids are playing in the sand.", "label": "entailment",
         "keywords": ["snow", "indoors", "sleeping", "alone", "school"], "target": "contradiction",
         "edited": "Kids are sleeping indoors."},
        {"premise": "A woman pours coffee for a customer at a small cafe.",
         "hypothesis": "The cafe is closed and empty.", "label": "contradiction",
         "keywords": ["serves", "drink", "open", "someone", "morning"], "target": "entailment",
         "edited": "The cafe is open and someone is served a drink."},
        {"premise": "A dog runs across a snowy field with a stick in its mouth.",
         "hypothesis": "An animal is outside.", "label": "entailment",
         "keywords": ["asleep", "inside", "kitchen", "cat", "bed"], "target": "contradiction",
         "edited": "An animal is asleep inside the kitchen."},
    ],
    "text": [
        {"text": "The service was slow and the room was dirty.", "label": "negative",
         "keywords": ["quick", "spotless", "friendly"], "target": "positive",
         "edited": "The service was quick and the room was spotless."},
        {"text": "Setup took two minutes and it has worked perfectly since.", "label": "positive",
         "keywords": ["hours", "failed", "broken", "twice"], "target": "negative",
         "edited": "Setup took two hours and it has failed twice since."},
    ],
}

_CUES = {"sentiment": "Rewritten review:", "nli": "Rewritten sentence 2:", "text": "Rewritten text:"}


def nli_label_text(label: str) -> str:
    """How an NLI label is put to the editor (the crowd instructions' wording)."""
    folded = label.casefold()
    if folded.startswith("entail"):
        return "definitely true"
    if folded.startswith("contra"):
        return "definitely false"
    return label


def _block(task: str, row: dict[str, Any], target: str, words: Sequence[str] | None) -> list[str]:
    listed = "[" + ", ".join(f"'{w}'" for w in words) + "]" if words is not None else None
    if task == "nli":
        lines = [f"Sentence 1: {row['premise']}", f"Sentence 2: {row['hypothesis']}",
                 f"Relation: {nli_label_text(row['label'])}"]
        if listed is not None:
            lines.append(f"Suggested words: {listed}")
        lines.append(f"Target relation: {nli_label_text(target)}")
    else:
        name = "Review" if task == "sentiment" else "Text"
        kind = "Sentiment" if task == "sentiment" else "Label"
        lines = [f"{name}: {row['text']}", f"{kind}: {row['label']}"]
        if listed is not None:
            lines.append(f"Suggested words: {listed}")
        lines.append(f"Target {kind.lower()}: {target}")
    return lines


#: The placeholders a user's ``prompt_template`` may use (`cfaug_hf.text.template`): NLI, and every one-text task.
TEMPLATE_FIELDS = {"nli": ("premise", "hypothesis", "label", "target", "keywords"),
                   "text": ("text", "label", "target", "keywords")}


def template_values(task: str, row: dict[str, Any], target: str, words: Sequence[str] | None) -> dict[str, str]:
    """A row's values for a user's template; the keywords as the reference code prints its list.

    Examples:
        >>> template_values("sentiment", {"text": "A dull film.", "label": "negative"}, "positive", ["fun"])
        {'text': 'A dull film.', 'label': 'negative', 'target': 'positive', 'keywords': "['fun']"}
    """
    values = {k: str(row[k]) for k in ("premise", "hypothesis", "text", "label") if k in row}
    return {**values, "target": str(target), "keywords": str(list(words or []))}


def build_prompt(task: str, row: dict[str, Any], target: str, words: Sequence[str] | None, *,
                 demonstrations: Sequence[dict[str, Any]] | None = None, instructions: str | None = None) -> str:
    """The editor prompt for one input ``row`` (keys as in the demonstrations, without ``edited``) and ``target``.

    ``words=None`` leaves the keyword lines out, of the demonstrations too (the editor-only ablation).
    """
    if task not in INSTRUCTIONS:
        raise ValueError(f"Unknown CORE task {task!r}; expected one of {sorted(INSTRUCTIONS)}.")
    demos = DEMONSTRATIONS[task] if demonstrations is None else list(demonstrations)
    needed = {"nli": ("premise", "hypothesis"), "sentiment": ("text",), "text": ("text",)}[task] + (
        "label", "target", "edited") + (("keywords",) if words is not None else ())
    parts = [instructions or INSTRUCTIONS[task], ""]
    for i, demo in enumerate(demos):
        missing = [k for k in needed if k not in demo]
        if missing:
            raise ValueError(f"Demonstration {i} for the {task!r} prompt lacks {missing}; it needs {list(needed)}.")
        parts += _block(task, demo, demo["target"], demo["keywords"] if words is not None else None)
        parts += [f"{_CUES[task]} {demo['edited']}", ""]
    parts += _block(task, row, target, words)
    parts.append(_CUES[task])
    return "\n".join(parts)


_PREFIX = re.compile(r"^\s*(?:rewritten|edited|modified|new|revised|changed)?\s*(?:review|sentence\s*2|sentence|text|"
                     r"hypothesis|answer|output)\s*:\s*", re.IGNORECASE)
_ECHO = re.compile(r"^\s*(?:review|sentence\s*1|sentence\s*2|text|label|sentiment|relation|suggested words|"
                   r"target\s+\w+)\s*:", re.IGNORECASE)


def parse_answer(answer: str, original: str, task: str) -> tuple[str | None, str | None]:
    r"""The edited text from an editor's answer, or ``(None, reason)``.

    Takes the first non-empty line, drops an answer cue the model repeated ("Rewritten review:"), surrounding
    quotes and a trailing demonstration block; ``reason`` is ``"llm_unparseable"`` (nothing usable: empty, or the
    model started a new prompt block) or ``"llm_unchanged"`` (the text came back as it was).

    Examples:
        >>> parse_answer("\n  'The plot was gripping.'\nReview: next", "The plot was thin.", "sentiment")
        ('The plot was gripping.', None)
        >>> parse_answer("Target sentiment: positive", "x", "sentiment")
        (None, 'llm_unparseable')
        >>> parse_answer("The plot was thin.", "The plot was thin.", "text")
        (None, 'llm_unchanged')
    """
    if not isinstance(answer, str):
        return None, "llm_unparseable"
    lines = [line.strip() for line in answer.strip().splitlines() if line.strip()]
    if not lines:
        return None, "llm_unparseable"
    text = lines[0]
    cue = _PREFIX.match(text)
    if cue:
        text = text[cue.end():].strip()
    elif _ECHO.match(text):
        return None, "llm_unparseable"
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'“”‘’`":
        text = text[1:-1].strip()
    text = text.strip("“”`").strip()
    if not text or not any(ch.isalnum() for ch in text):
        return None, "llm_unparseable"
    if " ".join(text.casefold().split()) == " ".join(original.casefold().split()):
        return None, "llm_unchanged"
    return text, None


