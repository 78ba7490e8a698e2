r"""Prompt templates for LLM-written counterfactuals, and the parsing of the answers.

A prompt follows Li et al. (2024): task guidelines (a definition, then step-by-step instructions), demonstrations,
then the input in the demonstrations' format, ending at the answer cue. The wording is ours. Four tasks:

| task | the LLM is asked for | demonstration keys |
|---|---|---|
| sentiment | the text with its causal words replaced for the target polarity | ``text``, ``label``, ``target``, ``edited`` |
| nli | a list of revised hypotheses, one per target relation | ``premise``, ``hypothesis``, ``label``, ``targets`` (list), ``edited`` (list) |
| ner | replacement words of the same type for each entity              ` | `tokens``, ``entities`` (list of ``{"span", "type"}``), ``replacements`` (list of lists) |
| re | the sentence revised so the marked head and tail hold the       ` target relation, entities and markup kept | `text`` (marked up), ``label``, ``target``, ``edited`` |

With ``cot=True`` (sentiment, NLI, RE) the demonstrations show the reasoning first, on the answer line: the causal
words, their replacements, then the revision; only the revision is kept, and a revision that does not use the
replacements it announced is counted (``cot:inconsistent``, the failure the paper describes).

Answers are parsed leniently (`parse_text`, `parse_list`, `parse_replacements`): quotes, JSON or
Python-like lists and objects, a repeated answer cue, a "Sure, here is..." preamble, reasoning before the answer,
and lists cut off by the token limit all yield what they hold; what cannot be used comes back as a reason
(``llm_empty``, ``llm_unparseable``, ``llm_meta``, ``llm_unchanged``), never as an exception.

Examples:
    >>> parse_text('Sure! Here is the revised text: "A dull film."', "A fine film.", "Revised text")
    ('A dull film.', None)
    >>> parse_list('["Kids sleep.", "Kids pl', 2)
    ['Kids sleep.']
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["TASKS", "TEMPLATE_FIELDS", "template_values", "GUIDELINES", "CHOOSE_GUIDELINES", "parse_choice", "DEMONSTRATIONS", "ENTITY_TYPE_NAMES", "build_prompt", "relation_text",
           "parse_text", "parse_list", "parse_replacements", "cot_consistent"]

TASKS = ("sentiment", "nli", "ner", "re")

GUIDELINES = {
    "sentiment": (
        "Task: rewrite a text with as few changes as possible so that its sentiment becomes the target sentiment.\n"
        "Steps: first find the causal words, the words that carry the current sentiment and would change it if "
        "they were replaced. Then replace only those words with words that express the target sentiment, and keep "
        "every other word as it is."),
    "nli": (
        "Task: revise the hypothesis with as few changes as possible so that its relation to the premise becomes "
        "each target relation (entailment: the premise makes it true; contradiction: the premise makes it false; "
        "neutral: the premise does not decide it).\n"
        "Steps: first find the causal words of the hypothesis, the words that decide its relation to the premise. "
        "Then, for each target relation, replace those words so that the relation holds. Never change the premise. "
        "Answer with a list holding one revised hypothesis per target relation, in order."),
    "ner": (
        "Task: for each entity of the sentence, propose other words of the same entity type that could replace it, "
        "so that the sentence still reads naturally.\n"
        "Steps: read the type of each entity, then list three replacements of exactly that type (a person for a "
        "person, a place for a place). Answer with a list holding, for each entity in order, its span and its "
        "replacements."),
    "re": (
        "Task: revise a sentence with as few changes as possible so that the relation between the head entity "
        "(marked <e1> </e1>) and the tail entity (marked <e2> </e2>) becomes the target relation.\n"
        "Steps: first find the causal words, the context words (not the entities) that decide the relation. Then "
        "replace them so that the target relation holds. Keep both entities exactly as written, with their "
        "markup, and keep the head before the tail."),
}

#: The RE guidelines when the LLM chooses the target relation itself (``targets="choose"``, as Li et al. do in
#: their Table 23); the wording is ours.
CHOOSE_GUIDELINES = (
    "Task: revise a sentence with as few changes as possible so that the relation between the head entity (marked "
    "<e1> </e1>) and the tail entity (marked <e2> </e2>) becomes another relation, one you choose from the "
    "candidate relations.\n"
    "Steps: first find the causal words, the context words (not the entities) that decide the relation. Then "
    "choose the candidate relation that the two entities could plausibly hold after replacing those words, and "
    "replace them so that it holds. Keep both entities exactly as written, with their markup, and keep the head "
    "before the tail. If no candidate relation fits the two entities, answer None.")

#: How CoNLL-2003's entity types are put to the LLM (types not listed are shown as they are).
ENTITY_TYPE_NAMES = {"PER": "person", "ORG": "organization", "LOC": "location", "MISC": "other name",
                     "GPE": "country or city", "DATE": "date", "NUM": "number", "PERSON": "person"}

#: Built-in demonstrations, written for this library (replace them with ``LLMConfig(demonstrations=[...])``).
DEMONSTRATIONS: dict[str, list[dict[str, Any]]] = {
    "sentiment": [
        {"text": "The acting is superb and the story kept me hooked.", "label": "positive", "target": "negative",
         "edited": "The acting is wooden and the story bored me.",
         "causal": ["superb", "kept me hooked"], "replaced": ["wooden", "bored me"]},
        {"text": "A tedious film with a clumsy, predictable plot.", "label": "negative", "target": "positive",
         "edited": "A gripping film with a clever, surprising plot.",
         "causal": ["tedious", "clumsy", "predictable"], "replaced": ["gripping", "clever", "surprising"]},
    ],
    "nli": [
        {"premise": "A man in a red jacket is climbing a steep rock wall.", "hypothesis": "A man is outdoors.",
         "label": "entailment", "targets": ["contradiction", "neutral"],
         "edited": ["A man is asleep indoors.", "A man is climbing with his brother."],
         "causal": ["outdoors"], "replaced": ["asleep indoors", "climbing with his brother"]},
        {"premise": "Two children are building a sandcastle on the beach.",
         "hypothesis": "The children are at school.", "label": "contradiction",
         "targets": ["entailment", "neutral"],
         "edited": ["The children are at the beach.", "The children are on holiday."],
         "causal": ["at school"], "replaced": ["at the beach", "on holiday"]},
    ],
    "ner": [
        {"tokens": "Apple opened a new office in Berlin in March .".split(),
         "entities": [{"span": "Apple", "type": "ORG"}, {"span": "Berlin", "type": "LOC"}],
         "replacements": [["Google", "Siemens", "Nokia"], ["Madrid", "Oslo", "Toronto"]]},
        {"tokens": "Angela Merkel met Tony Blair on Tuesday .".split(),
         "entities": [{"span": "Angela Merkel", "type": "PER"}, {"span": "Tony Blair", "type": "PER"}],
         "replacements": [["Jacques Chirac", "Helmut Kohl", "Romano Prodi"],
                          ["Bill Clinton", "John Major", "Boris Yeltsin"]]},
    ],
    "re": [
        {"text": "The <e1>key</e1> was moved into a <e2>chest</e2>.", "label": "Entity-Destination(e1,e2)",
         "target": "Entity-Origin(e1,e2)", "edited": "The <e1>key</e1> was taken out of a <e2>chest</e2>.",
         "causal": ["moved into"], "replaced": ["taken out of"]},
        {"text": "The <e1>fire</e1> was caused by a faulty <e2>heater</e2>.", "label": "Cause-Effect(e2,e1)",
         "target": "Cause-Effect(e1,e2)", "edited": "The <e1>fire</e1> damaged a faulty <e2>heater</e2>.",
         "causal": ["was caused by"], "replaced": ["damaged"]},
    ],
}

#: The placeholders a user's ``prompt_template`` may use, per task (`cfaug_hf.text.template`).
TEMPLATE_FIELDS = {"sentiment": ("text", "label", "target"), "nli": ("premise", "hypothesis", "label", "targets")}


def template_values(task: str, row: dict[str, Any]) -> dict[str, str]:
    """A prompt row's values for a user's template: NLI's targets as a JSON list (the paper's ``["Contradiction",
    "Neutral"]``), the rest as they are.

    Examples:
        >>> template_values("nli", {"premise": "P.", "hypothesis": "H.", "label": "neutral", "targets": ["entailment"]})
        {'premise': 'P.', 'hypothesis': 'H.', 'label': 'neutral', 'targets': '["entailment"]'}
    """
    values = {k: row[k] for k in TEMPLATE_FIELDS[task] if k in row}
    if "targets" in values:
        values["targets"] = json.dumps(list(values["targets"]), ensure_ascii=False)
    return {k: str(v) for k, v in values.items()}


_CUE = {"sentiment": "Revised text:", "nli": "Revised hypotheses:", "ner": "Replacements:", "re": "Revised sentence:"}
_COT_CUE = "Causal words:"


def relation_text(label: str) -> str:
    """How a relation label is put to the LLM: SemEval's ``Cause-Effect(e2,e1)`` reads "effect-cause" (the head
    is the effect), as in the paper's prompts; other labels are lower-cased, ``_`` and ``:`` spelled as spaces.

    Examples:
        >>> relation_text("Cause-Effect(e2,e1)"), relation_text("Entity-Origin(e1,e2)"), relation_text("org:founded_by")
        ('effect-cause', 'entity-origin', 'org founded by')
    """
    m = re.fullmatch(r"\s*([\w]+)-([\w]+)\s*\(\s*e([12])\s*,\s*e([12])\s*\)\s*", label)
    if m:
        a, b, first = m.group(1).lower(), m.group(2).lower(), m.group(3)
        return f"{a}-{b}" if first == "1" else f"{b}-{a}"
    return re.sub(r"[_:]+", " ", label).strip().lower()


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _type_name(etype: str, names: dict[str, str] | None) -> str:
    return (names or ENTITY_TYPE_NAMES).get(etype, etype)


def _fields(task: str, row: dict[str, Any], type_names: dict[str, str] | None) -> list[str]:
    if task == "sentiment":
        return [f"Text: {_q(row['text'])}", f"Sentiment: {_q(row['label'])}", f"Target sentiment: {_q(row['target'])}"]
    if task == "nli":
        return [f"Premise: {_q(row['premise'])}", f"Hypothesis: {_q(row['hypothesis'])}",
                f"Relation: {_q(row['label'])}", f"Target relations: {json.dumps(list(row['targets']))}"]
    if task == "ner":
        ents = [{"span": e["span"], "type": _type_name(e["type"], type_names)} for e in row["entities"]]
        return [f"Sentence: {_q(' '.join(row['tokens']))}", f"Entities: {json.dumps(ents, ensure_ascii=False)}"]
    from ...text.entities import relation_entities

    head, tail, _ = relation_entities(row["text"])
    fields = [f"Sentence: {_q(row['text'])}", f"Head entity: {_q(head)}", f"Tail entity: {_q(tail)}",
              f"Relation: {_q(relation_text(row['label']))}"]
    if "candidates" in row:  # the LLM chooses the target itself
        names = [relation_text(c) for c in row["candidates"]]
        return fields + [f"Candidate relations: {json.dumps(names, ensure_ascii=False)}"]
    return fields + [f"Target relation: {_q(relation_text(row['target']))}"]


def _answer(task: str, demo: dict[str, Any], cot: bool, type_names: dict[str, str] | None) -> str:
    if task == "ner":
        ents = [{"span": e["span"], "type": _type_name(e["type"], type_names), "replacements": list(r)}
                for e, r in zip(demo["entities"], demo["replacements"])]
        return f"{_CUE[task]} {json.dumps(ents, ensure_ascii=False)}"
    edited = json.dumps(list(demo["edited"]), ensure_ascii=False) if task == "nli" else _q(demo["edited"])
    if "candidates" in demo:
        edited = json.dumps({"target_relation": relation_text(demo["target"]), "revised_sentence": demo["edited"]},
                            ensure_ascii=False)
    if not cot:
        return f"{_CUE[task]} {edited}"
    causal = ", ".join(_q(w) for w in demo["causal"])
    swaps = ", ".join(f"{_q(a)} -> {_q(b)}" for a, b in zip(demo["causal"] * len(demo["replaced"]), demo["replaced"]))
    return f"{_COT_CUE} {causal} | Replacements: {swaps} | {_CUE[task]} {edited}"


_NEEDED = {"sentiment": ("text", "label", "target", "edited"), "nli": ("premise", "hypothesis", "label", "targets",
                                                                     "edited"),
           "ner": ("tokens", "entities", "replacements"), "re": ("text", "label", "target", "edited")}


def build_prompt(task: str, row: dict[str, Any], *, demonstrations: Sequence[dict[str, Any]] | None = None,
                 guidelines: bool | str = True, cot: bool = False,
                 entity_type_names: dict[str, str] | None = None) -> str:
    """The prompt for one input ``row`` (the demonstration keys of ``task``, without the answer ones).

    ``guidelines`` is True (the built-in task guidelines), False (demonstrations only: the paper's ablation) or
    your own text. ``cot=True`` asks for the causal words and their replacements before the revision (sentiment,
    NLI, RE; chain-of-thought demonstrations need ``causal`` and ``replaced`` lists).

    Examples:
        >>> p = build_prompt("sentiment", {"text": "A fine film.", "label": "positive", "target": "negative"})
        >>> p.splitlines()[-1]
        'Revised text:'
    """
    if task not in TASKS:
        raise ValueError(f"Unknown task {task!r}; the LLM templates are {list(TASKS)}.")
    if cot and task == "ner":
        raise ValueError("The NER template has no chain-of-thought variant (the LLM only proposes replacements).")
    demos = DEMONSTRATIONS[task] if demonstrations is None else list(demonstrations)
    choose = task == "re" and "candidates" in row
    if choose:  # each demonstration shows a choice among candidates that hold its own target
        demos = [{**d, "candidates": sorted({*row["candidates"], d["target"]} - {d["label"]})} for d in demos]
    needed = _NEEDED[task] + (("causal", "replaced") if cot else ())
    parts: list[str] = []
    if guidelines:
        parts += [(CHOOSE_GUIDELINES if choose else GUIDELINES[task]) if guidelines is True else str(guidelines), ""]
    if demos:
        parts.append("Examples:" if len(demos) > 1 else "Example:")
    for i, demo in enumerate(demos):
        missing = [k for k in needed if k not in demo]
        if missing:
            raise ValueError(f"Demonstration {i} for the {task!r} prompt lacks {missing}; it needs {list(needed)}.")
        parts += _fields(task, demo, entity_type_names) + [_answer(task, demo, cot, entity_type_names), ""]
    if demos:
        parts.append("Now the next one, in the same format.")
    parts += _fields(task, row, entity_type_names)
    parts.append(_COT_CUE if cot else _CUE[task])
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------------------- parsing
_QUOTES = "\"'“”‘’`"
_PREAMBLE = re.compile(r"^\s*(?:sure|certainly|okay|ok|of course|here(?:'s| is| are))\b[^:\n]*:\s*", re.IGNORECASE)
_LABELLED = re.compile(r"(?:revised|rewritten|edited|modified|new|changed)\s+(?:text|sentence|hypothes[ie]s|review)"
                       r"s?\s*:\s*", re.IGNORECASE)
_ECHO = re.compile(r"^\s*(?:text|sentence|premise|hypothesis|relation|sentiment|target [\w ]+|head entity|"
                   r"tail entity|entities|causal words|example)\s*:", re.IGNORECASE)
_META = re.compile(r"\b(?:target (?:sentiment|relation|label)|causal words?|the (?:premise|hypothesis) (?:is|says)|"
                   r"sentence [12]\b|as an ai|i cannot|i can't)", re.IGNORECASE)
_JSON_TEXT_KEYS = ("revised_sentence", "revised_text", "revised", "sentence", "text", "hypothesis", "output")


def _unquote(text: str) -> str:
    text = text.strip().rstrip(",;").strip()
    if not text:
        return ""
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1]
    elif text[:1] in _QUOTES and text.count(text[0]) == 1:
        text = text[1:]  # an opening quote whose closing one was cut off
    return text.strip()


def _literal(text: str) -> Any:
    """A JSON or Python literal, or None."""
    for load in (json.loads, ast.literal_eval):
        try:
            return load(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _words(text: str) -> list[str]:
    """Lower-cased words, punctuation and spacing ignored: a revision that only moved a comma is unchanged."""
    return re.findall(r"\w+", text.casefold())


def parse_text(answer: Any, original: str, cue: str = "Revised text") -> tuple[str | None, str | None]:
    r"""The revised text in an LLM answer, or ``(None, reason)``.

    Takes what follows the last "Revised text:"-like label when there is one (a chain of thought or a preamble
    before it is dropped), else the first non-empty line; unwraps quotes and ``{"revised_sentence": ...}`` objects.
    Reasons: ``llm_empty``, ``llm_unparseable`` (the model started a new prompt field), ``llm_meta`` (it talked
    about the task instead of answering), ``llm_unchanged``.

    Examples:
        >>> parse_text('Causal words: "dull" | Replacements: "dull" -> "bright" | Revised text: "A bright film."',
        ...            "A dull film.")
        ('A bright film.', None)
        >>> parse_text('{"revised_sentence": "The key came from a chest."}', "x")
        ('The key came from a chest.', None)
        >>> parse_text("Target sentiment: negative", "x"), parse_text("  ", "x")
        ((None, 'llm_unparseable'), (None, 'llm_empty'))
    """
    if not isinstance(answer, str) or not answer.strip():
        return None, "llm_empty"
    text = answer.strip()
    labelled = list(_LABELLED.finditer(text)) + list(re.finditer(re.escape(cue.rstrip(":")) + r"\s*:\s*", text,
                                                                 re.IGNORECASE))
    if labelled:
        text = text[max(m.end() for m in labelled):]
    else:
        text = _PREAMBLE.sub("", text, count=1)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None, "llm_empty"
    text = lines[0]
    if not labelled and _ECHO.match(text):
        return None, "llm_unparseable"
    if text.startswith("{"):
        obj = _literal(text)
        if isinstance(obj, dict):
            text = next((str(obj[k]) for k in _JSON_TEXT_KEYS if isinstance(obj.get(k), str)), "")
        else:
            m = re.search(r"\"(?:" + "|".join(_JSON_TEXT_KEYS) + r")\"\s*:\s*\"([^\"]+)", text)
            text = m.group(1) if m else ""
    text = _unquote(text)
    if not text or not any(ch.isalnum() for ch in text):
        return None, "llm_unparseable"
    if _META.search(text):
        return None, "llm_meta"
    if _words(text) == _words(original):
        return None, "llm_unchanged"
    return text, None


def parse_list(answer: Any, n: int | None = None) -> list[str]:
    r"""The strings of a JSON-like list in an LLM answer (at most ``n``): a JSON or Python list, one cut off by the
    token limit (its complete items are kept), or, without brackets, numbered or dashed lines. Items that are
    objects give their text field. Empty when nothing is found.

    Examples:
        >>> parse_list("Revised hypotheses: ['A dog sleeps.', \"A cat runs.\"]")
        ['A dog sleeps.', 'A cat runs.']
        >>> parse_list("1. A dog sleeps.\n2) A cat runs.")
        ['A dog sleeps.', 'A cat runs.']
    """
    if not isinstance(answer, str):
        return []
    start = answer.find("[")
    items: list[Any] = []
    if start >= 0:
        end = answer.rfind("]")
        obj = _literal(answer[start:end + 1]) if end > start else None
        if isinstance(obj, list):
            items = obj
        else:  # cut off, or not valid: the complete quoted strings after the bracket
            body = answer[start + 1:]
            items = [a or b for a, b in re.findall(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)+)'(?=\s*[,\]])", body)]
    else:
        items = [m.group(1) for m in re.finditer(r"^\s*(?:\d+[.)]|[-*•])\s+(.+)$", answer, re.MULTILINE)]
    out = []
    for item in items:
        if isinstance(item, dict):
            item = next((item[k] for k in _JSON_TEXT_KEYS if isinstance(item.get(k), str)), None)
        if isinstance(item, str) and _unquote(item):
            out.append(_unquote(item))
    return out[:n] if n is not None else out


def parse_replacements(answer: Any, spans: Sequence[str]) -> list[list[str]]:
    r"""The replacement words an LLM proposed for each entity ``span`` (in order), from a list of objects like
    ``{"span": "Apple", "replacements": ["Google", ...]}`` (any key naming the span and a list), a list of lists in
    entity order, or ``span: a, b, c`` lines. Lists cut off by the token limit keep their complete items; an entity
    the answer does not cover gets an empty list.

    Examples:
        >>> parse_replacements('[{"span": "Paris", "type": "location", "replacements": ["Rome", "Oslo"]}]', ["Paris"])
        [['Rome', 'Oslo']]
        >>> parse_replacements('[{"span": "Ada", "replacements": ["Bob", "Eve"]}, {"span": "Rome", "replacements": ["Ly',
        ...                    ["Ada", "Rome"])
        [['Bob', 'Eve'], []]
        >>> parse_replacements('[{"span": "Ada", "type": "person", "replacement": "Bob"}]', ["Ada", "Rome"])
        [['Bob'], []]
        >>> parse_replacements('[{"span": "Ada", "replacements": [None], "words": [Bob]}, {"span": "Rome", '
        ...                    '"replacements": ["Oslo"]}]}', ["Ada", "Rome"])
        [[], ['Oslo']]
    """
    out: list[list[str]] = [[] for _ in spans]
    if not isinstance(answer, str) or not spans:
        return out
    index = {_norm(s): i for i, s in reversed(list(enumerate(spans)))}
    start = answer.find("[")
    obj = _literal(answer[start:answer.rfind("]") + 1]) if start >= 0 else None
    if isinstance(obj, list) and obj and all(isinstance(x, list) for x in obj):
        for i, words in enumerate(obj[:len(spans)]):
            out[i] = [str(w).strip() for w in words if isinstance(w, (str, int)) and str(w).strip()]
        return out
    if isinstance(obj, list):
        entries = [x for x in obj if isinstance(x, dict)]
        for k, entry in enumerate(entries):
            span = next((v for key, v in entry.items() if isinstance(v, str) and "span" in key.lower()), None)
            words = next((v for v in entry.values() if isinstance(v, list)), None)
            if words is None:  # one replacement given as a string
                words = [v for key, v in entry.items() if isinstance(v, str) and "replac" in key.lower()]
            i = index.get(_norm(span)) if span is not None else (k if k < len(spans) else None)
            if i is not None and not out[i]:
                out[i] = [str(w).strip() for w in words if isinstance(w, (str, int)) and str(w).strip()]
        return out
    # Not a whole literal (cut off, or loose): read each object's span and the complete items of its list.
    for m in re.finditer(r"[\"']?\w*span\w*[\"']?\s*:\s*[\"']([^\"']+)[\"'](.*?)(?=[\"']?\w*span\w*[\"']?\s*:|$)",
                         answer, re.DOTALL | re.IGNORECASE):
        i = index.get(_norm(m.group(1)))
        body = m.group(2)
        bracket = body.find("[")
        if i is None or out[i] or bracket < 0:
            continue
        close = body.find("]", bracket)  # this entry's list only, not the next key's
        out[i] = parse_list(body[bracket:close + 1] if close > 0 else body[bracket:])
    if not any(out):
        for line in answer.splitlines():
            head, sep, tail = line.partition(":")
            i = index.get(_norm(_unquote(head.strip(" -*"))))
            if sep and i is not None and not out[i]:
                out[i] = [_unquote(w) for w in tail.split(",") if _unquote(w)]
    return out


def cot_consistent(answer: str, revised: str | Sequence[str]) -> bool | None:
    """Whether a chain-of-thought answer's revision uses the replacement words it announced ("a" -> "b"); None when
    the answer announced none (nothing to check).

    Examples:
        >>> cot_consistent('Replacements: "dull" -> "bright" | Revised text: "A bright film."', "A bright film.")
        True
        >>> cot_consistent('Replacements: "dull" -> "bright" | Revised text: "A fine film."', "A fine film.")
        False
    """
    announced = [b for _, b in re.findall(r"[\"']([^\"']+)[\"']\s*->\s*[\"']([^\"']+)[\"']", answer or "")]
    if not announced:
        return None
    text = _norm(revised if isinstance(revised, str) else " ".join(revised))
    return all(_norm(b) in text for b in announced)


def parse_choice(answer: Any, candidates: Sequence[str]) -> tuple[str | None, str | None]:
    """The relation an LLM chose among ``candidates`` (label names) in a ``{"target_relation": ...,
    "revised_sentence": ...}`` answer, as ``(label, None)``, or ``(None, reason)``: ``llm_no_target`` when it
    answered None (the paper lets it), ``llm_not_a_candidate`` for a relation outside the candidates,
    ``llm_unparseable`` otherwise. The revision itself is read by `parse_text`.

    Examples:
        >>> parse_choice('{"target_relation": "entity-origin", "revised_sentence": "x"}',
        ...              ["Entity-Origin(e1,e2)", "Cause-Effect(e1,e2)"])
        ('Entity-Origin(e1,e2)', None)
        >>> parse_choice("None", ["Entity-Origin(e1,e2)"])
        (None, 'llm_no_target')
    """
    text = str(answer or "").strip()
    at = text.rfind(_CUE["re"])
    text = text[at + len(_CUE["re"]):].strip() if at >= 0 else text
    if re.fullmatch(r"[\"'`]?(none|null|n/a)[\"'`.]?", text, re.IGNORECASE):
        return None, "llm_no_target"
    start, end = text.find("{"), text.rfind("}")
    value = _literal(text[start:end + 1]) if 0 <= start < end else None
    if not isinstance(value, dict):
        return None, "llm_unparseable"
    chosen = next((v for k, v in value.items() if str(k).replace(" ", "_").lower() == "target_relation"), None)
    if chosen is None or str(chosen).strip().lower() in ("none", "null", ""):
        return None, "llm_no_target"
    by_text = {relation_text(c): c for c in candidates}
    label = by_text.get(relation_text(str(chosen))) or by_text.get(str(chosen).strip().lower())
    return (label, None) if label else (None, "llm_not_a_candidate")
